// A to-many relationship's members come back as faults holding their records read ahead in one
// read transaction (Context+Relationships R5): firing one takes its own record, never the row
// cache's; a save after the read voids every record read ahead, so no fault fires from a row
// older than the store's; a damaged record read ahead is refused when the fault fires, as a
// fault reading the store itself refuses it.

import Foundation
import Testing
import DocStoreTestSupport
@testable import DocStore
@testable import DocStoreCore

@Suite struct ReadAheadTests {
    /// A store with one folder of `count` notes titled "note 0"…, saved.
    static func folderOfNotes(_ count: Int) throws -> Store {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let context = Context(store: store)
        let inbox = Folder(name: "Inbox")
        for i in 0..<count { try context.insert(Note(title: "note \(i)", folder: inbox)) }
        try context.save()
        return store
    }

    static func inbox(_ context: Context) throws -> Folder {
        try #require(try context.fetch(FetchRequest<Folder>()).first)
    }

    @Test func membersAreFaultsThatFireFromTheirOwnRecords() throws {
        let store = try Self.folderOfNotes(5)
        let context = Context(store: store)
        let notes = try Self.inbox(context).notes
        #expect(notes.count == 5)
        #expect(notes.allSatisfy { $0.isFault && $0.readAhead != nil }, "members are faults with their records read ahead")
        #expect(notes.allSatisfy { store.rows.row($0.key) == nil }, "the records are the faults' own, not the row cache's")
        #expect(notes.map(\.title) == (0..<5).map { "note \($0)" })
        #expect(notes.allSatisfy { !$0.isFault && $0.readAhead == nil })
        #expect(notes.allSatisfy { store.rows.row($0.key) == nil }, "firing them read nothing into the row cache")
    }

    @Test func readingTheRelationshipAgainReadsNoRecordAgain() throws {
        let store = try Self.folderOfNotes(4)
        let context = Context(store: store)
        let folder = try Self.inbox(context)
        let first = folder.notes
        let records = first.map { $0.readAhead?.record }
        // Read again while its members are still faults: each keeps the record it holds (the
        // same buffer, not a second read of it).
        let again = folder.notes
        #expect(again.map(\.key) == first.map(\.key))
        for (note, record) in zip(again, records) {
            let held = try #require(note.readAhead?.record)
            let before = try #require(record)
            #expect(held.withUnsafeBufferPointer { $0.baseAddress } == before.withUnsafeBufferPointer { $0.baseAddress })
        }
    }

    @Test func aFetchOfFaultsGivesEachFaultItsRecord() throws {
        let store = try Self.folderOfNotes(4)
        let context = Context(store: store)
        var request = FetchRequest<Note>(sortDescriptors: [SortKey("title")])
        request.returnsObjectsAsFaults = true
        let notes = try context.fetch(request)
        #expect(notes.count == 4 && notes.allSatisfy { $0.isFault && $0.readAhead != nil })
        #expect(notes.allSatisfy { store.rows.row($0.key) == nil })
        #expect(notes.map(\.title) == (0..<4).map { "note \($0)" })
    }

    @Test func membersWhoseRecordsTheRowCacheHoldsFireFromIt() throws {
        let store = try Self.folderOfNotes(4)
        let context = Context(store: store)
        var request = FetchRequest<Folder>()
        request.relationshipKeyPathsForPrefetching = ["notes"]
        let folder = try #require(try context.fetch(request).first)
        let notes = folder.notes
        #expect(notes.allSatisfy { store.rows.row($0.key) != nil }, "prefetching put the records in the row cache")
        #expect(notes.allSatisfy { $0.isFault && $0.readAhead == nil }, "so they are not read again")
        #expect(notes.map(\.title) == (0..<4).map { "note \($0)" })
    }

    @Test func aSaveAfterTheReadVoidsTheRecordsReadAhead() throws {
        let store = try Self.folderOfNotes(3)
        let reader = Context(store: store)
        let notes = try Self.inbox(reader).notes
        #expect(notes.allSatisfy { $0.readAhead != nil })

        let writer = Context(store: store)
        let second = try #require(try Self.inbox(writer).notes.first { $0.title == "note 1" })
        second.title = "renamed"
        try writer.delete(try #require(try Self.inbox(writer).notes.first { $0.title == "note 2" }))
        try writer.save()

        // The reader's faults fire from the store as it is now, not from what was read ahead.
        #expect(notes[0].title == "note 0")
        #expect(notes[1].title == "renamed")
        // The deleted one finds no row (as any fault of a deleted row): invalidated, not "note 2".
        #expect(notes[2].isFault)
        #expect(notes[2].title != "note 2" && notes[2].isInvalidated)
    }

    @Test func aDamagedRecordReadAheadIsRefusedWhenTheFaultFires() throws {
        let store = try Self.folderOfNotes(3)
        let setup = Context(store: store)
        let keys = try Self.inbox(setup).notes.map(\.key)
        try #require(keys.count == 3)
        let entity = try #require(store.model.entity(named: "Note"))
        try store.write { txn in try txn.put([0xFF, 0x00, 0x13], for: PrimaryKey.bytes(keys[1]), in: entity.recordsTree) }
        store.rows.removeAll()

        let context = Context(store: store)
        let notes = try Self.inbox(context).notes
        #expect(notes[1].readAhead != nil)
        let error = #expect(throws: DocStoreError.self) { try notes[1].value(forKey: "title") }
        #expect(error?.code == .corrupt, "\(String(describing: error))")
        #expect(notes[1].isFault, "a refused record leaves the object a fault")
        #expect(notes[0].title == "note 0" && notes[2].title == "note 2", "its neighbours fire from theirs")
        // Fired again, it reads the store afresh and is refused again.
        #expect(throws: DocStoreError.self) { try notes[1].value(forKey: "title") }
    }
}
