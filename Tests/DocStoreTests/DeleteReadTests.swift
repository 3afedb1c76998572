// What a delete reads: the records of the objects it deletes (the roots and what cascades) are
// read for the delete alone — the row cache does not keep them, since the save removes them from
// it anyway — and still give the objects their values before the save, after a rollback and
// after the save.

import Foundation
import Testing
import DocStoreTestSupport
@testable import DocStore
@testable import DocStoreCore

@Suite struct DeleteReadTests {
    @Test func deletedFaultsLeaveTheirRecordsOutOfTheRowCache() throws {
        let store = try ReadAheadTests.folderOfNotes(3)
        store.rows.removeAll()
        let context = Context(store: store)
        let lone = Note(title: "lone")
        try context.insert(lone)
        try context.save()
        store.rows.removeAll()

        let reader = Context(store: store)
        let folder = try #require(try reader.fetch(FetchRequest<Folder>()).first)
        let noteKeys = try reader.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "title BEGINSWITH %@", "note"))).map(\.key)
        #expect(noteKeys.count == 3)
        store.rows.removeAll()

        // A fresh context: the folder and the lone note are faults; deleting them reads their
        // records (and the cascade reads the folder's notes) without caching any of them.
        let deleter = Context(store: store)
        let folderFault = try deleter.object(with: try #require(folder.objectID))
        let loneFault = try deleter.object(with: try #require(lone.objectID))
        #expect(folderFault.isFault && loneFault.isFault)
        try deleter.delete(folderFault)
        try deleter.delete(loneFault)
        for key in [folderFault.key, loneFault.key] + noteKeys {
            #expect(store.rows.row(key) == nil, "a deleted object's record is not kept in the row cache")
        }
        #expect((loneFault as? Note)?.title == "lone", "the deleted object still reads its values")
        #expect((folderFault as? Folder)?.name == "Inbox")

        deleter.rollback()
        #expect(!loneFault.isDeleted && (loneFault as? Note)?.title == "lone", "a rollback gives it back whole")

        try deleter.delete(loneFault)
        try deleter.save()
        #expect(store.rows.row(loneFault.key) == nil)
        let check = Context(store: store)
        #expect(try check.count(for: FetchRequest<Note>()) == 3)
        #expect(try check.fetch(FetchRequest<Note>()).map(\.title).sorted() == ["note 0", "note 1", "note 2"])
    }
}
