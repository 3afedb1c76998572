// Store.dump(to:) and Store.load(from:to:) (Dump/): a dump loads into an equal store — the same
// schema, IDs, identity, objects, numbers, values (every kind, exactly) and relationships in
// their order; a dump that does not load is refused naming its line, with nothing left behind;
// the golden dump of Format/golden/ is what the notes-v2 fixture dumps to.

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore
@testable import DocStoreEngine

private let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
private let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Format/golden/notes-v2.dump.jsonl")

@Suite struct DumpLoadTests {
    static let schema = Schema(entities: [
        EntityDescription(name: "Item", attributes: [
            AttributeDescription(name: "flag", type: .bool, isOptional: true),
            AttributeDescription(name: "tiny", type: .int8, isOptional: true),
            AttributeDescription(name: "small", type: .int16, isOptional: true),
            AttributeDescription(name: "medium", type: .int32, isOptional: true),
            AttributeDescription(name: "large", type: .int64, isOptional: true),
            AttributeDescription(name: "real", type: .double, isOptional: true),
            AttributeDescription(name: "single", type: .float, isOptional: true),
            AttributeDescription(name: "money", type: .decimal, isOptional: true),
            AttributeDescription(name: "text", type: .string, isOptional: true, isIndexed: true),
            AttributeDescription(name: "when", type: .date, isOptional: true),
            AttributeDescription(name: "uuid", type: .uuid, isOptional: true),
            AttributeDescription(name: "link", type: .url, isOptional: true),
            AttributeDescription(name: "bytes", type: .binaryData, isOptional: true, allowsExternalStorage: true),
            AttributeDescription(name: "meta", type: .codable(typeName: "Meta"), isOptional: true),
            AttributeDescription(name: "code", type: .string, isOptional: true, isUnique: true),
            AttributeDescription(name: "rank", type: .int32, defaultValue: .int(7)),
        ], relationships: [
            RelationshipDescription(name: "box", destination: "Box", inverse: "items"),
            RelationshipDescription(name: "next", destination: "Item", inverse: "previous", isToMany: true, isOrdered: true),
            RelationshipDescription(name: "previous", destination: "Item", inverse: "next", isToMany: true),
        ]),
        EntityDescription(name: "Box", attributes: [
            AttributeDescription(name: "name", type: .string),
        ], relationships: [
            RelationshipDescription(name: "items", destination: "Item", inverse: "box", isToMany: true, deleteRule: .cascade),
        ], indexes: [IndexDescription(["name"])]),
        EntityDescription(name: "Crate", parent: "Box", attributes: [
            AttributeDescription(name: "color", type: .string, isOptional: true),
        ]),
    ])

    // one per test (swift-testing makes a suite value for each): removed when the test ends
    let temporary = TemporaryDirectory("dump")

    /// A store's URL in a directory of its own (a refused load must leave it empty).
    func temporaryURL(_ name: String = "store") -> URL {
        let dir = URL(fileURLWithPath: temporary.file(UUID().uuidString))
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("\(name).docstore")
    }

    /// The dump of `store` as text.
    static func dumpText(_ store: Store) throws -> String {
        let dir = TemporaryDirectory("dump")
        defer { withExtendedLifetime(dir) {} }
        let file = URL(fileURLWithPath: dir.file("dump.jsonl"))
        #expect(FileManager.default.createFile(atPath: file.path, contents: nil))
        let handle = try FileHandle(forWritingTo: file)
        _ = try store.dump(to: handle)
        try handle.close()
        return try String(contentsOf: file, encoding: .utf8)
    }

    /// Loads `text` as a dump into a new store at `url`.
    @discardableResult
    static func load(_ text: String, to url: URL) throws -> Int {
        let dir = TemporaryDirectory("load")
        defer { withExtendedLifetime(dir) {} }
        let file = URL(fileURLWithPath: dir.file("load.jsonl"))
        try Data(text.utf8).write(to: file)
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        return try Store.load(from: handle, to: url)
    }

    /// A dump's lines with the header's lastLSN left out: a loaded store's own commits
    /// (writing the objects) follow the LSN it continues, so only that field differs.
    static func comparable(_ text: String) throws -> [String] {
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        var header = try #require(try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any])
        #expect(header["lastLSN"] as? Int != nil)
        header["lastLSN"] = nil
        lines[0] = String(decoding: try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]), as: UTF8.self)
        return lines
    }

    /// A store with one object of every value kind, nils, gaps in the numbers (deleted
    /// objects), an ordered many-to-many with itself, a sub-entity as a target and a large value
    /// in a blob file.
    static func makeStore(_ url: URL) throws -> Store {
        let store = try Store(url: url, schema: schema)
        let c = Context(store: store)
        let box = try c.insertObject(forEntityName: "Box")
        try box.setValue("plain", forKey: "name")
        let crate = try c.insertObject(forEntityName: "Crate")
        try crate.setValue("crate", forKey: "name")
        try crate.setValue("red", forKey: "color")
        var items: [ManagedObject] = []
        for i in 0..<6 {
            let item = try c.insertObject(forEntityName: "Item")
            try item.setValue("item \(i)", forKey: "text")
            try item.setValue("code-\(i)", forKey: "code")
            try item.setValue(i % 2 == 0 ? box : crate, forKey: "box")
            items.append(item)
        }
        let full = items[0]
        try full.setValue(true, forKey: "flag")
        try full.setValue(Int8.min, forKey: "tiny")
        try full.setValue(Int16.max, forKey: "small")
        try full.setValue(Int32.min, forKey: "medium")
        try full.setValue(Int64.max, forKey: "large")
        try full.setValue(0.1 + 0.2, forKey: "real")
        try full.setValue(Float(1) / 3, forKey: "single")
        try full.setValue(Decimal(string: "12345678901234567890.123456789", locale: Locale(identifier: "en_US_POSIX")), forKey: "money")
        try full.setValue("quotes \" slash / back \\ newline \n tab \t emoji 🦊 é", forKey: "text")
        try full.setValue(Date(timeIntervalSinceReferenceDate: 785_000_000.123456789), forKey: "when")
        try full.setValue(UUID(uuidString: "6B29FC40-CA47-1067-B31D-00DD010662DA"), forKey: "uuid")
        try full.setValue(URL(string: "https://example.com/a%20b?q=1#f"), forKey: "link")
        try full.setValue(Data((0..<(1_200_000)).map { UInt8(truncatingIfNeeded: $0 &* 31) }), forKey: "bytes")
        try full.setValue(Data(#"{"z":[1,2.5,"x/y"],"a":{"é":null}}"#.utf8), forKey: "meta")
        try full.setValue(Int32(-3), forKey: "rank")
        try items[1].setValue(-0.0, forKey: "real")
        try items[2].setValue(Double.infinity, forKey: "real")
        try items[3].setValue(Double.nan, forKey: "real")
        try items[4].setValue(-Float.infinity, forKey: "single")
        try items[1].setValue(Data(), forKey: "bytes")
        // An ordered list in an order that is not the objects' order.
        try full.setValue([items[4], items[1], items[3]], forKey: "next")
        try items[1].setValue([items[0]], forKey: "next")
        try c.save()
        // Gaps: deleted objects' numbers are not reused, in the store or after a load.
        try c.delete(items[5])
        try c.delete(items[2])
        try c.save()
        return store
    }

    @Test func aDumpLoadsIntoAnEqualStore() throws {
        let url = temporaryURL("source")
        let store = try Self.makeStore(url)
        let text = try Self.dumpText(store)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 1 + 6 + 1, "header, 2 boxes + 4 items, trailer")
        #expect(lines.last == #"{"end":"docstore","objects":6}"#)
        #expect(lines.contains { $0.hasPrefix(#"{"id":"Crate/1","#) })

        let copyURL = temporaryURL("copy")
        #expect(try Self.load(text, to: copyURL) == 6)
        let copy = try Store(url: copyURL, schema: Self.schema)
        #expect(copy.identifier == store.identifier)
        #expect(try copy.verify() == [])
        #expect(try Self.comparable(Self.dumpText(copy)) == Self.comparable(text))

        // Every value kind, read back through a context of the copy.
        let c = Context(store: copy)
        let full = try c.existingObject(with: copy.objectID(forEntityName: "Item", number: 1))
        #expect(full["flag"] as? Bool == true)
        #expect(full["tiny"] as? Int == Int(Int8.min))
        #expect(full["large"] as? Int == Int.max)
        #expect(full["real"] as? Double == 0.1 + 0.2)
        #expect(full["single"] as? Float == Float(1) / 3)
        #expect(full["money"] as? Decimal == Decimal(string: "12345678901234567890.123456789", locale: Locale(identifier: "en_US_POSIX")))
        #expect(full["text"] as? String == "quotes \" slash / back \\ newline \n tab \t emoji 🦊 é")
        #expect(full["when"] as? Date == Date(timeIntervalSinceReferenceDate: 785_000_000.123456789))
        #expect((full["bytes"] as? Data)?.count == 1_200_000)
        #expect(full["bytes"] as? Data == Data((0..<(1_200_000)).map { UInt8(truncatingIfNeeded: $0 &* 31) }))
        #expect(full["meta"] as? Data == Data(#"{"z":[1,2.5,"x/y"],"a":{"é":null}}"#.utf8))
        #expect(full["rank"] as? Int == -3)
        let next = try #require(full["next"] as? [ManagedObject])
        #expect(next.map { $0.objectID?.number } == [5, 2, 4])
        let second = try c.existingObject(with: copy.objectID(forEntityName: "Item", number: 2))
        #expect((second["real"] as? Double).map { $0 == 0 && $0.sign == .minus } == true)
        #expect(second["bytes"] as? Data == Data())
        #expect((try c.existingObject(with: copy.objectID(forEntityName: "Item", number: 4))["real"] as? Double)?.isNaN == true)
        #expect(#expect(throws: DocStoreError.self) { try c.existingObject(with: copy.objectID(forEntityName: "Item", number: 3)) }?.code == .objectNotFound)
        let crate = try c.existingObject(with: copy.objectID(forEntityName: "Crate", number: 1))
        #expect(Set((crate["items"] as? Set<ManagedObject> ?? []).compactMap { $0.objectID?.number }) == [2, 4])

        // New objects continue after the highest number ever handed out (6, deleted).
        let added = try c.insertObject(forEntityName: "Item")
        try added.setValue("new", forKey: "code")
        try c.save()
        #expect(added.objectID?.number == 7)
        try copy.close()
        try store.close()
    }

    /// One edit of a good dump, and what the refusal must say.
    struct BadDump: CustomTestStringConvertible, Sendable {
        let name: String
        let edit: @Sendable ([String]) -> [String]
        let says: String
        var testDescription: String { name }
    }

    /// `lines` with `old` replaced by `new` in the line of the object `id`.
    static func edit(_ lines: [String], _ id: String, _ old: String, _ new: String) -> [String] {
        lines.map { $0.hasPrefix("{\"id\":\"\(id)\"") ? $0.replacingOccurrences(of: old, with: new) : $0 }
    }

    static let badDumps: [BadDump] = [
        BadDump(name: "cut off before its last line", edit: { Array($0.dropLast()) }, says: "cut off"),
        BadDump(name: "a count that disagrees", edit: { $0.dropLast() + [#"{"end":"docstore","objects":5}"#] }, says: "holds 5 objects"),
        BadDump(name: "not JSON", edit: { edit($0, "Box/1", #""name""#, "") }, says: "line 6"),
        BadDump(name: "an unknown key", edit: { edit($0, "Box/1", #""values""#, #""valuez""#) }, says: "unknown key \"valuez\""),
        BadDump(name: "a value of the wrong type", edit: { edit($0, "Item/2", #""text":"item 1""#, #""text":17"#) }, says: "line 3 (Item/2).text: a number 17 is not a String"),
        BadDump(name: "an integer out of range", edit: { edit($0, "Item/2", #""tiny":null"#, #""tiny":300"#) }, says: "a number 300 is not a Int8"),
        BadDump(name: "an object twice", edit: { $0.flatMap { $0.hasPrefix(#"{"id":"Item/2""#) ? [$0, $0] : [$0] } }, says: "appears twice"),
        BadDump(name: "an unknown entity", edit: { edit($0, "Box/1", #""id":"Box/1""#, #""id":"Bag/1""#) }, says: "is not an object of this schema"),
        BadDump(name: "a link on one side only", edit: { edit($0, "Item/2", #""next":["Item/1"]"#, #""next":[]"#) }, says: "lacks it"),
        BadDump(name: "a target of the wrong entity", edit: { edit($0, "Item/2", #""next":["Item/1"]"#, #""next":["Box/1"]"#) }, says: "leads to Box/1, not a Item"),
        BadDump(name: "a required value missing", edit: { edit($0, "Box/1", #""name":"plain""#, #""name":null"#) }, says: "is required"),
        BadDump(name: "a header that is not a dump's", edit: { [#"{"hello":"world"}"#] + $0.dropFirst() }, says: "line 1 is not a DocStore dump's header"),
    ]

    @Test(arguments: badDumps)
    func aDumpThatDoesNotLoadIsRefusedWithNothingLeft(_ bad: BadDump) throws {
        let store = try Self.makeStore(temporaryURL())
        let lines = try Self.dumpText(store).split(separator: "\n").map(String.init)
        try store.close()
        let url = temporaryURL("copy")
        let error = #expect(throws: DocStoreError.self) { try Self.load(bad.edit(lines).joined(separator: "\n") + "\n", to: url) }
        #expect(error?.code == .invalidDump)
        let said = (error.map { [$0.message] + $0.problems.map(\.description) } ?? []).joined(separator: " | ")
        #expect(said.contains(bad.says), "\(said)")
        let left = try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path)
        #expect(left == [], "files left: \(left)")
    }

    @Test func twoObjectsWithOneUniqueValueAreRefused() throws {
        let store = try Self.makeStore(temporaryURL())
        var lines = try Self.dumpText(store).split(separator: "\n").map(String.init)
        try store.close()
        lines = Self.edit(lines, "Item/4", #""code":"code-3""#, #""code":"code-1""#)
        let url = temporaryURL("copy")
        let error = #expect(throws: DocStoreError.self) { try Self.load(lines.joined(separator: "\n"), to: url) }
        #expect(error?.code == .uniqueConstraint && error?.message.contains("code-1") == true, "\(String(describing: error))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: url.deletingLastPathComponent().path) == [])
    }

    @Test func aLoadNeverReplacesAnExistingFile() throws {
        let url = temporaryURL()
        let store = try Self.makeStore(url)
        let text = try Self.dumpText(store)
        try store.close()
        let before = try Data(contentsOf: url)
        let error = #expect(throws: DocStoreError.self) { try Self.load(text, to: url) }
        #expect(error?.code == .storage && error?.message.contains("exists") == true)
        #expect(try Data(contentsOf: url) == before)
    }

    /// The golden dump (Format/golden/notes-v2.dump.jsonl) is what the notes-v2 fixture dumps to;
    /// it loads into a store that dumps to it again and migrates to version 3 like the fixture.
    @Test func theGoldenDumpIsTheFixtureStoresDump() throws {
        let source = try #require(try Store.schema(at: fixtures.appendingPathComponent("notes-v2.docstore")))
        let fixture = try Store(url: fixtures.appendingPathComponent("notes-v2.docstore"), schema: source, readOnly: true)
        let text = try Self.dumpText(fixture)
        try fixture.close()
        if ProcessInfo.processInfo.environment["DOCSTORE_REGENERATE_GOLDEN"] == "1" {
            try Data(text.utf8).write(to: golden)
        }
        let expected = try String(contentsOf: golden, encoding: .utf8)
        #expect(text == expected, "regenerate with DOCSTORE_REGENERATE_GOLDEN=1 after a deliberate change, and update Format/dump.md")

        let url = temporaryURL("loaded")
        #expect(try Self.load(expected, to: url) == expected.split(separator: "\n").count - 2)
        let loaded = try Store(url: url, schema: source, readOnly: true)
        #expect(try Self.comparable(Self.dumpText(loaded)) == Self.comparable(expected))
        try loaded.close()
        let migrated = try Store(url: url, migrationPlan: NotesPlan.self)
        let reader = Context(store: migrated)
        let notes = try reader.fetch(FetchRequest<NotesV3.Note>())
        #expect(notes.map(MigrationFixtureTests.describe).sorted() == (0..<FixtureContent.notes).map { FixtureContent.expected($0, writtenBy: 2) }.sorted())
        #expect(try migrated.verify() == [])
        try migrated.close()
    }
}
