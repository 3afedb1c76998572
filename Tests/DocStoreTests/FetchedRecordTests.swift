// A fetched object keeps its record and decodes each property on first read: what it reads is
// what a whole decode gives, a change decodes it whole, and a record that would not decode is
// refused by the fetch itself (RecordCoding.validate accepts exactly what decode accepts, and
// UTF8Validation exactly what the standard library accepts). Random cases use fixed seeds.

import Foundation
import Testing
import DocStoreTestSupport
@testable import DocStore
@testable import DocStoreCore

@Suite struct FetchedRecordTests {
    @Test func aFetchedObjectReadsEachPropertyFromItsRecordUntilItChanges() throws {
        let store = try Store.inMemory(models: ModelClassTests.models)
        do {
            let context = Context(store: store)
            let inbox = Folder(name: "Inbox")
            for i in 0..<3 {
                let note = Note(title: "note \(i) with a title longer than fifteen bytes", folder: inbox)
                note.body = i == 1 ? nil : "body \(i) — ünïcode"
                note.rating = Int16(i - 1)
                note.createdAt = Date(timeIntervalSinceReferenceDate: Double(i))
                note.checklist = ["a\(i)"]
                try context.insert(note)
            }
            try context.save()
        }
        // Sorted in memory (title has no index): the rows were decoded to be sorted, and the
        // objects take those values.
        let sortedHere = try Context(store: store).fetch(FetchRequest<Note>(sortDescriptors: [SortKey("title")]))
        #expect(sortedHere.map { $0.record == nil && !$0.decodedValues.isEmpty } == [true, true, true])
        // In key order, or walking the index of the one sort key: records kept.
        let context = Context(store: store)
        let since = Date(timeIntervalSinceReferenceDate: 0)
        let notes = try context.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "createdAt >= %@", since),
                                                         sortDescriptors: [SortKey("createdAt")]))
        #expect(try Context(store: store).fetch(FetchRequest<Note>()).map { $0.record != nil } == [true, true, true])
        #expect(notes.count == 3)
        for note in notes {
            #expect(note.record != nil && note.decodedValues.isEmpty, "a fetched note keeps its record undecoded")
        }
        let first = notes[0]
        #expect(first.title == "note 0 with a title longer than fifteen bytes")
        #expect(first.body == "body 0 — ünïcode")
        #expect(first.rating == -1 && first.isRead == false)
        #expect(first.checklist == ["a0"])
        #expect(first.folder?.name == "Inbox")
        #expect(notes[1].body == nil)
        #expect(first.record != nil, "reads do not decode the record whole")
        // What a property read gives is what the whole decode gives.
        let entity = try #require(first.entityInfo)
        let whole = try entity.values(ofRecord: try #require(first.record), key: first.key).values
        for slot in 0..<whole.count { #expect(storedValue(first, slot) == whole[slot], "slot \(slot)") }

        first.rating = 7
        #expect(first.record == nil && first.decodedValues.count == whole.count)
        #expect(first.title == "note 0 with a title longer than fifteen bytes" && first.rating == 7)
        #expect(first.changedValues().keys.sorted() == ["rating"])
        #expect(first.committedValues(forKeys: ["rating"])["rating"] as? Int == -1)
        try context.save()

        #expect(sortedHere.map(\.title) == notes.map(\.title) && sortedHere.map(\.body) == notes.map(\.body))
        let again = try Context(store: store).fetch(FetchRequest<Note>(sortDescriptors: [SortKey("title")]))
        #expect(again.map(\.rating) == [7, 0, 1])
        #expect(again.map(\.body) == ["body 0 — ünïcode", nil, "body 2 — ünïcode"])
    }

    /// Records from a pool of values, then damaged (bytes changed, cut short): `validate`
    /// throws exactly when `decode` does, and on a record it passes, `field` gives every field
    /// as the whole decode does.
    @Test func aNewRecordIsReadFromItsStartNotFromWhereTheOldOneStopped() throws {
        let store = try Store.inMemory(models: ModelClassTests.models)
        do {
            let context = Context(store: store)
            let note = Note(title: "short")
            note.rating = 1
            note.isRead = true
            try context.insert(note)
            try context.save()
        }
        let context = Context(store: store)
        let note = try #require(try context.fetch(FetchRequest<Note>()).first)
        #expect(note.record != nil)
        #expect(note.title == "short" && note.body == nil && note.rating == 1)   // the position is past rating now
        // Another save changes the fields before that position: a longer title, a body where
        // there was none — the record's later fields move, and the old position falls inside
        // the title, on bytes that read as low field IDs (a stale position would be taken).
        let other = Context(store: store)
        let same = try #require(try other.fetch(FetchRequest<Note>()).first)
        same.title = String(repeating: "\u{2}\u{3}\u{1}", count: 40)
        same.body = "a body now"
        same.rating = 7
        try other.save()
        context.refresh(note, mergeChanges: false)
        #expect(note.rating == 7, "read first, past where the old record's reads stopped")
        #expect(note.record != nil, "the refreshed note holds its new record")
        #expect(note.isRead)
        #expect(note.title == same.title && note.body == "a body now")
    }

    @Test(arguments: [1, 2, 3] as [UInt64]) func validateAcceptsExactlyWhatDecodeAccepts(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let pool: [StoredValue] = [
            .bool(true), .bool(false), .int(-3), .int(1 << 40), .double(2.5), .float(-1.25), .string("ok"),
            .string("a longer string with ünïcode"), .date(Date(timeIntervalSinceReferenceDate: 9)), .uuid(UUID()),
            .decimal(Decimal(string: "12.5") ?? 0), .url(URL(string: "https://example.com/a") ?? URL(fileURLWithPath: "/")),
            .data(Data([0, 0xFF])), .document(Data("{}".utf8)), .reference(123_456),
        ]
        var damagedSeen = 0
        for round in 0..<2_000 {
            var fields: [(fieldID: UInt32, value: StoredValue)] = []
            for id in UInt32(1)...10 where rng.next() % 2 == 0 { fields.append((id, pool[Int(rng.next() % UInt64(pool.count))])) }
            var record = RecordCoding.encode(entityID: 3, schemaVersion: 1, rowVersion: 5, fields: fields)
            switch rng.next() % 3 {
            case 0: break
            case 1:
                for _ in 0..<(1 + rng.next() % 3) { record[Int(rng.next() % UInt64(record.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            default:
                record = Array(record[0..<Int(rng.next() % UInt64(record.count))])
            }
            let decoded = Result { () throws(DocStoreError) in try RecordCoding.decode(record, key: 9) }
            let validated = Result { () throws(DocStoreError) in
                try RecordCoding.withRaw(record) { (raw) throws(DocStoreError) in try RecordCoding.validate(raw, key: 9) }
            }
            switch (decoded, validated) {
            case (.success(let d), .success(let rowVersion)):
                #expect(rowVersion == d.rowVersion, "seed \(seed) round \(round)")
                let byID = Dictionary(d.fields.map { ($0.fieldID, $0.value) }, uniquingKeysWith: { a, _ in a })
                for id in UInt32(0)...12 {
                    let one = try RecordCoding.withRaw(record) { (raw) throws(DocStoreError) in try RecordCoding.field(raw, id, key: 9) }
                    #expect(one == byID[id], "seed \(seed) round \(round) field \(id)")
                }
                // Reads that go on from where the previous one stopped (an object reading its
                // attributes), in ascending runs and jumps back, give the same values.
                var position = RecordPosition()
                for step in 0..<16 {
                    let id = UInt32(rng.next() % 13)
                    let stepped = try RecordCoding.withRaw(record) { (raw) throws(DocStoreError) in
                        try RecordCoding.field(raw, id, key: 9, from: &position)
                    }
                    #expect(stepped == byID[id], "seed \(seed) round \(round) step \(step) field \(id), read on from \(position)")
                }
            case (.failure(let d), .failure(let v)):
                damagedSeen += 1
                #expect(d.code == .corrupt && v.code == .corrupt, "seed \(seed) round \(round)")
                #expect(v.message.hasPrefix("record 9 is damaged at byte "), "seed \(seed) round \(round): \(v.message)")
            default:
                Issue.record("seed \(seed) round \(round): decode \(decoded), validate \(validated) of \(record)")
                return
            }
        }
        #expect(damagedSeen > 200, "seed \(seed): the damage reached too few records to test the refusal")
    }

    /// Byte strings weighted toward UTF-8's boundary bytes, some behind a run of ASCII (the
    /// eight-bytes-at-a-time path): accepted exactly when `String(validating:)` accepts them.
    @Test(arguments: [1, 2, 3] as [UInt64]) func utf8ValidationAgreesWithTheStandardLibrary(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let edges: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC1, 0xC2, 0xDF, 0xE0, 0xE1,
                              0xEC, 0xED, 0xEE, 0xEF, 0xF0, 0xF1, 0xF3, 0xF4, 0xF5, 0xFF]
        var valid = 0
        for round in 0..<20_000 {
            var bytes = [UInt8](repeating: 0x61, count: Int(rng.next() % 3) * 7)
            for _ in 0..<(rng.next() % 7) { bytes.append(rng.next() % 4 == 0 ? UInt8(truncatingIfNeeded: rng.next()) : edges[Int(rng.next() % UInt64(edges.count))]) }
            if rng.next() % 2 == 0 { bytes += [UInt8](repeating: 0x62, count: Int(rng.next() % 10)) }
            let expected = String(validating: bytes, as: UTF8.self) != nil
            let got = bytes.withUnsafeBytes { UTF8Validation.isValid($0) }
            if expected { valid += 1 }
            #expect(got == expected, "seed \(seed) round \(round): \(bytes.map { String($0, radix: 16) })")
            if got != expected { return }
        }
        for text in ["", "plain ascii that is longer than eight", "é", "€", "𝄞", "日本語のテキスト", "a\u{0}b"] {
            #expect(Array(text.utf8).withUnsafeBytes { UTF8Validation.isValid($0) }, "\(text)")
        }
        #expect(valid > 1_000, "seed \(seed): too few valid strings drawn")
    }
}
