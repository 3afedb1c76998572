// Pins the object layer's on-disk format (Format/record.md, Format/schema.md) to the code: each
// hex or JSON example in those pages (the block after `<!-- golden-example: name -->`) must be
// what DocStore writes today, and decoding it must give back the values it was made from.
// `DOCSTORE_REGENERATE_GOLDEN=1 swift test --filter ObjectFormatGoldenTests` rewrites the blocks.

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore

private let formatDirectory = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Format")

@Suite struct ObjectFormatGoldenTests {
    struct Example { var document: String; var name: String; var text: String }

    static func hex(_ bytes: [UInt8]) -> String {
        stride(from: 0, to: bytes.count, by: 16).map { start in
            let line = bytes[start..<min(start + 16, bytes.count)]
            let offset = String(start, radix: 16)
            return String(repeating: "0", count: 4 - offset.count) + offset + "  "
                + line.map { $0 < 16 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined(separator: " ")
        }.joined(separator: "\n")
    }

    /// A Note record: entity 2, schema version 1, row version 1, fields 5–11.
    static let noteFields: [(fieldID: UInt32, value: StoredValue)] = [
        (5, .string("Buy milk")),
        (6, .null),                                       // body: nil, not written
        (7, .date(Date(timeIntervalSinceReferenceDate: 784_111_777))),
        (8, .bool(false)),
        (9, .int(-3)),
        (10, .reference(PrimaryKey.make(entity: 1, sequence: 1))),
        (11, .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID())),
    ]

    /// The example of Format/history.md: an insert, an update of fields 5 and 10, a delete
    /// with field 5 preserved.
    static let historyChanges: [RecordedChange] = [
        RecordedChange(kind: .delete, key: PrimaryKey.make(entity: 2, sequence: 2), tombstone: [(5, .string("Buy milk"))]),
        RecordedChange(kind: .update, key: PrimaryKey.make(entity: 2, sequence: 3), fields: [5, 10]),
        RecordedChange(kind: .insert, key: PrimaryKey.make(entity: 2, sequence: 7)),
    ]

    static func examples() throws -> [Example] {
        var out: [Example] = []
        let record = RecordCoding.encode(entityID: 2, schemaVersion: 1, rowVersion: 1, fields: noteFields)
        out.append(Example(document: "record.md", name: "note-record", text: hex(record)))
        var link = PrimaryKey.bytes(PrimaryKey.make(entity: 1, sequence: 1))
        PrimaryKey.appendBytes(PrimaryKey.make(entity: 2, sequence: 7), to: &link)
        out.append(Example(document: "record.md", name: "link-key", text: hex(link)))
        let index = Context.indexKey(.string("Inbox"), unique: false, key: PrimaryKey.make(entity: 1, sequence: 1)) ?? []
        out.append(Example(document: "record.md", name: "index-key", text: hex(index)))
        let unique = Context.indexKey(.string("Inbox"), unique: true, key: PrimaryKey.make(entity: 1, sequence: 1)) ?? []
        out.append(Example(document: "record.md", name: "unique-index-key", text: hex(unique)))
        // "É" given decomposed (E + U+0301) is stored composed (U+00C9): one key for both spellings.
        let decomposed = Context.indexKey(.string("E\u{301}t\u{e9}"), unique: true, key: 0) ?? []
        let composed = Context.indexKey(.string("\u{c9}t\u{e9}"), unique: true, key: 0) ?? []
        #expect(decomposed == composed)
        out.append(Example(document: "record.md", name: "nfc-index-key", text: hex(decomposed)))

        // Note 7 in Folder 1 titled "Buy milk", in a compound index (folder, title) and in a
        // uniqueness constraint over the same; then with no folder in the constraint.
        let folder = StoredValue.reference(PrimaryKey.make(entity: 1, sequence: 1))
        let note = PrimaryKey.make(entity: 2, sequence: 7)
        let compound = Context.compoundEntry(elements: [folder, .string("Buy milk")], isUnique: false, key: note)
        out.append(Example(document: "record.md", name: "compound-index-key", text: hex(compound?.key ?? [])))
        let constraint = Context.compoundEntry(elements: [folder, .string("Buy milk")], isUnique: true, key: note)
        #expect(constraint?.checksUniqueness == true)
        out.append(Example(document: "record.md", name: "unique-compound-key", text: hex(constraint?.key ?? [])))
        let minutes = Context.documentIndexValues(.document(Data(#"{"minutes":30,"author":"Ada"}"#.utf8)), ["minutes"])
        #expect(minutes == [.double(30)])
        let document = Context.compoundEntry(elements: minutes, isUnique: false, key: PrimaryKey.make(entity: 3, sequence: 3))
        out.append(Example(document: "record.md", name: "document-index-key", text: hex(document?.key ?? [])))
        let withNull = Context.compoundEntry(elements: [.null, .string("Buy milk")], isUnique: true, key: note)
        #expect(withNull?.checksUniqueness == false)
        out.append(Example(document: "record.md", name: "unique-compound-key-with-nil", text: hex(withNull?.key ?? [])))

        let history = RecordedTransaction(
            timestamp: Date(timeIntervalSince1970: 1_795_420_800), author: "import", contextName: "background",
            changes: Self.historyChanges)
        let chunks = HistoryCoding.encode(history)
        #expect(chunks.count == 1)
        out.append(Example(document: "history.md", name: "history-transaction", text: hex(chunks.first ?? [])))

        // Format 2 (a synced store): the same save with its values and links. Note 3's title
        // (field 5) became "Eggs", its folder (field 10) Folder 1 and its body (field 12) nil
        // — the bug the convergence test found: a nil wrote no tag; Note 7 was inserted with
        // title "Tea" and linked to Tag 4 through its to-many `tags` (field 11).
        var withValues = Self.historyChanges
        withValues[1].values = [(5, .string("Eggs")), (10, .reference(PrimaryKey.make(entity: 1, sequence: 1))), (12, .null)]
        withValues[2].values = [(5, .string("Tea"))]
        withValues[2].links = [RecordedLink(fieldID: 11, target: PrimaryKey.make(entity: 3, sequence: 4), present: true)]
        let history2 = RecordedTransaction(
            timestamp: Date(timeIntervalSince1970: 1_795_420_800), author: "import", contextName: "background",
            changes: withValues, hasValues: true)
        let chunks2 = HistoryCoding.encode(history2)
        #expect(try HistoryCoding.decode(chunks2, lsn: 9) == history2)
        out.append(Example(document: "history.md", name: "history-transaction-values", text: hex(chunks2.first ?? [])))

        let schema = Schema(entities: [
            EntityDescription(name: "Folder", attributes: [
                AttributeDescription(name: "name", type: .string, isUnique: true),
            ], relationships: [
                RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", isToMany: true, deleteRule: .cascade),
            ]),
            EntityDescription(name: "Note", attributes: [
                AttributeDescription(name: "title", type: .string, maxLength: 200, defaultValue: .string("")),
            ], relationships: [
                RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes"),
            ], indexes: [IndexDescription(["folder", "title"], isUnique: true)]),
        ])
        let json = try Catalog(new: schema).encoded()
        let pretty = try JSONSerialization.data(withJSONObject: JSONSerialization.jsonObject(with: Data(json)), options: [.prettyPrinted, .sortedKeys])
        out.append(Example(document: "schema.md", name: "catalog-json", text: String(decoding: pretty, as: UTF8.self)))

        // The same catalog after a migration to 2.0.0 that adds Folder.color; the schema of
        // version 1 inside `versions` is elided (it is the one above).
        var v2 = schema
        v2.entities[0].attributes.append(AttributeDescription(name: "color", type: .string, isOptional: true))
        let step = MigrationPlanner.plan(from: Catalog(new: schema), to: v2, version: SchemaVersion(2, 0, 0))
        #expect(!step.rewrites && step.changes.map(\.description) == ["Folder.color: attribute added (instant)"])
        var migrated = try JSONSerialization.jsonObject(with: Data(try step.to.encoded())) as? [String: Any] ?? [:]
        migrated["schema"] = "…"
        if var versions = migrated["versions"] as? [[String: Any]] {
            for i in versions.indices { versions[i]["schema"] = "…" }
            migrated["versions"] = versions
        }
        let prettyV2 = try JSONSerialization.data(withJSONObject: migrated, options: [.prettyPrinted, .sortedKeys])
        out.append(Example(document: "schema.md", name: "catalog-versions-json", text: String(decoding: prettyV2, as: UTF8.self)))
        return out
    }

    static func blockRange(_ name: String, in text: String) -> Range<String.Index>? {
        guard let marker = text.range(of: "<!-- golden-example: \(name) -->"),
              let open = text.range(of: "```text\n", range: marker.upperBound..<text.endIndex),
              let close = text.range(of: "```", range: open.upperBound..<text.endIndex) else { return nil }
        return open.upperBound..<close.lowerBound
    }

    @Test func specExamplesAreWhatDocStoreWrites() throws {
        let regenerate = ProcessInfo.processInfo.environment["DOCSTORE_REGENERATE_GOLDEN"] == "1"
        var documents: [String: String] = [:]
        for example in try Self.examples() {
            let url = formatDirectory.appendingPathComponent(example.document)
            var text = try documents[example.document] ?? String(contentsOf: url, encoding: .utf8)
            let range = try #require(Self.blockRange(example.name, in: text), "Format/\(example.document) has no example '\(example.name)'")
            if regenerate {
                text.replaceSubrange(range, with: example.text + "\n")
                documents[example.document] = text
            } else {
                #expect(String(text[range]) == example.text + "\n", "Format/\(example.document) example '\(example.name)' is stale; DocStore now writes:\n\(example.text)")
            }
        }
        for (name, text) in documents { try Data(text.utf8).write(to: formatDirectory.appendingPathComponent(name)) }
    }

    @Test func theExampleRecordDecodesToItsFields() throws {
        let record = RecordCoding.encode(entityID: 2, schemaVersion: 1, rowVersion: 1, fields: Self.noteFields)
        let decoded = try RecordCoding.decode(record, key: 7)
        #expect(decoded.entityID == 2 && decoded.schemaVersion == 1 && decoded.rowVersion == 1)
        #expect(decoded.fields.map(\.fieldID) == [5, 7, 8, 9, 10, 11])
        #expect(decoded.fields.map(\.value) == Self.noteFields.filter { !$0.value.isNull }.map(\.value))
    }

    @Test func damagedRecordsAreTypedErrorsNamingKeyAndOffset() throws {
        let record = RecordCoding.encode(entityID: 2, schemaVersion: 1, rowVersion: 1, fields: Self.noteFields)
        for cut in 1..<record.count {
            do {
                _ = try RecordCoding.decode(Array(record[0..<cut]), key: 7)
            } catch {
                #expect(error.code == .corrupt)
                #expect(error.message.hasPrefix("record 7 is damaged at byte "))
            }
        }
        var badTag = record
        badTag[5] = 0xEE      // the first field's type tag
        let error = #expect(throws: DocStoreError.self) { try RecordCoding.decode(badTag, key: 7) }
        #expect(error?.message == "record 7 is damaged at byte 5: unknown type tag 238")
        var descending = RecordCoding.encode(entityID: 2, schemaVersion: 1, rowVersion: 1, fields: [(9, .int(1))])
        descending += [5, RecordTag.boolTrue.rawValue]
        #expect(throws: DocStoreError.self) { try RecordCoding.decode(descending, key: 7) }
    }

    /// RecordCoding.patch (a batch update's partial rewrite) gives exactly the record encoding
    /// the merged fields gives: changed fields replaced, added or (null) removed, kept fields
    /// copied, the others dropped; random records and changes, fixed seeds. One buffer takes
    /// every round's record, as a batch update reuses it: nothing of the last one is left.
    @Test(arguments: [1, 2, 3] as [UInt64]) func aPatchedRecordIsTheEncodingOfItsMergedFields(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        var patched: [UInt8] = []
        let pool: [StoredValue] = [.bool(true), .int(-3), .string("a long body of text"), .date(Date(timeIntervalSinceReferenceDate: 5)),
                                   .reference(77), .double(1.5), .null]
        for round in 0..<300 {
            var fields: [(fieldID: UInt32, value: StoredValue)] = []
            var changes: [(fieldID: UInt32, value: StoredValue)] = []
            var kept = Set<UInt32>()
            for id in UInt32(1)...12 {
                switch rng.next() % 3 {
                case 0: fields.append((id, pool[Int(rng.next() % 6)]))     // stored
                case 1: if rng.next() % 2 == 0 { changes.append((id, pool[Int(rng.next() % 7)])) }
                default: break
                }
                if rng.next() % 5 != 0 { kept.insert(id) }
            }
            // Some stored fields are changed too.
            for f in fields where rng.next() % 3 == 0 { changes.append((f.fieldID, pool[Int(rng.next() % 7)])) }
            changes.sort { $0.fieldID < $1.fieldID }
            let record = RecordCoding.encode(entityID: 4, schemaVersion: 2, rowVersion: 9, fields: fields)
            try RecordCoding.patch(record, key: 1, schemaVersion: 3, rowVersion: 10, changes: changes, into: &patched) { kept.contains($0) }
            let changed = Set(changes.map(\.fieldID))
            let merged = (fields.filter { kept.contains($0.fieldID) && !changed.contains($0.fieldID) } + changes).sorted { $0.fieldID < $1.fieldID }
            let expected = RecordCoding.encode(entityID: 4, schemaVersion: 3, rowVersion: 10, fields: merged)
            #expect(patched == expected, "seed \(seed) round \(round)")
            if patched != expected { return }
        }
    }

    @Test func everyValueKindRoundTrips() throws {
        let values: [StoredValue] = [
            .bool(true), .bool(false), .int(0), .int(Int64.min), .int(Int64.max), .double(-0.5), .float(3.25),
            .decimal(Decimal(string: "12345.678901234567890123") ?? 0), .string(""), .string("héllo\u{0}"),
            .date(Date(timeIntervalSinceReferenceDate: -1e9)), .uuid(UUID()), .url(URL(string: "https://example.com/a?b=c") ?? URL(fileURLWithPath: "/")),
            .data(Data([0, 1, 2, 255])), .document(Data("{\"a\":1}".utf8)), .reference(UInt64.max),
        ]
        let fields = values.enumerated().map { (fieldID: UInt32($0.offset + 1), value: $0.element) }
        let decoded = try RecordCoding.decode(RecordCoding.encode(entityID: 1, schemaVersion: 1, rowVersion: 9, fields: fields), key: 1)
        #expect(decoded.fields.map(\.value) == values)
    }

    @Test func aWrittenCatalogReadsBackEqual() throws {
        var schema = SchemaValidationTests.notesModel()
        schema.entities[1].attributes[0].defaultValue = .string("Untitled")
        schema.entities[1].attributes[4].defaultValue = .int(3)
        let catalog = Catalog(new: schema)
        let read = try Catalog.decode(try catalog.encoded())
        #expect(read == catalog)
        // The wrong shape, and text that is not JSON, whose error says at which byte.
        let shape = #expect(throws: DocStoreError.self) { try Catalog.decode(Array("{\"format\": 1}".utf8)) }
        #expect(shape?.message.contains("not JSON of the catalog's shape") == true)
        let text = #expect(throws: DocStoreError.self) { try Catalog.decode(Array("{\"format\": 1,}".utf8)) }
        #expect(text?.code == .corrupt)
        #expect(text?.message.contains("is not JSON at byte 13") == true, "\(String(describing: text))")
    }
}
