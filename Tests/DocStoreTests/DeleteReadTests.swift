// What a delete reads and keeps: the records of the objects it deletes (the roots and what
// cascades) are read for the delete alone — the row cache does not keep them, since the save
// removes them from it anyway — and a deleted object keeps its saved values undecoded, its
// nullified to-ones marked and read as nil (Context+Delete D2), through rollback, undo, a child
// context, inserting it again and the save.

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

    @Test func aDeletedObjectKeepsItsSavedValuesAndReadsItsNullifiedLinksAsNil() throws {
        let store = try ReadAheadTests.folderOfNotes(3)
        let setup = Context(store: store)
        let first = try #require(try setup.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "title == %@", "note 0"))).first)
        let id = try #require(first.objectID)

        let c = Context(store: store)
        let note = try #require(try c.existingObject(with: id) as? Note)
        let inbox = try #require(note.folder)
        #expect(inbox.notes.count == 3)
        try c.delete(note)
        #expect(note.record != nil, "the deleted note's record is kept as it is, not decoded")
        #expect(note.folder == nil, "its nullified to-one reads nil")
        #expect(try note.value(forKey: "folder") == nil)
        #expect(note.changedValues()["folder"] is NSNull)
        #expect(note.title == "note 0", "its attributes read their saved values")
        #expect(!inbox.notes.contains(note) && inbox.notes.count == 2, "the other side lost it")
        let child = Context(parent: c)
        let inChild = try #require(try child.existingObject(with: id) as? Note)
        #expect(inChild.isDeleted && inChild.folder == nil, "a child sees the link gone too")

        c.rollback()
        #expect(!note.isDeleted && note.folder === inbox && inbox.notes.count == 3, "a rollback gives the link back")

        c.undoManager = UndoManager()
        try c.delete(note)
        #expect(note.folder == nil)
        c.undoManager?.undo()
        #expect(!note.isDeleted && note.folder === inbox && inbox.notes.contains(note), "undo gives it back")
        c.undoManager = nil

        // Inserted again, it stays out of the folder: the mark becomes its value, saved.
        try c.delete(note)
        try c.insert(note)
        #expect(!note.isDeleted && note.folder == nil && !inbox.notes.contains(note))
        try c.save()
        let fresh = Context(store: store)
        let saved = try #require(try fresh.existingObject(with: id) as? Note)
        #expect(saved.folder == nil && saved.title == "note 0")
        #expect(try #require(try fresh.fetch(FetchRequest<Folder>()).first).notes.count == 2)
        #expect(try store.verify() == [])
        #expect(try store.verifyGraph() == [])

        // Deleted and saved: its record, index entries and links go; the store checks clean.
        let d = Context(store: store)
        let last = try #require(try d.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "title == %@", "note 1"))).first)
        try d.delete(last)
        #expect(last.folder == nil && last.record != nil)
        try d.save()
        #expect(last.isDeleted && last.folder == nil && last.title == "note 1")
        let after = Context(store: store)
        #expect(try after.fetch(FetchRequest<Note>()).map(\.title).sorted() == ["note 0", "note 2"])
        #expect(try after.count(for: FetchRequest<Note>(predicate: try QueryPredicate(format: "createdAt == %@", Date(timeIntervalSinceReferenceDate: 0)))) == 2)
        #expect(try store.verify() == [])
        #expect(try store.verifyGraph() == [])
    }

    /// A saved note `n`, a folder "Inbox" saved by another context, and a context with an
    /// upserting merge policy in which `n` is set to an unsaved duplicate of that folder — the
    /// unique clash its save merges into the stored one.
    static func noteWithDuplicateInbox() throws -> (store: Store, context: Context, note: Note, duplicate: Folder) {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let setup = Context(store: store)
        let note = Note(title: "n")
        try setup.insert(note)
        try setup.insert(Folder(name: "Inbox"))
        try setup.save()
        let context = Context(store: store)
        context.mergePolicy = .mergeByPropertyObjectTrump
        let noteID = try #require(note.objectID)
        let n = try #require(try context.existingObject(with: noteID) as? Note)
        let duplicate = Folder(name: "Inbox")
        try context.insert(duplicate)
        n.folder = duplicate
        return (store, context, n, duplicate)
    }

    /// Found by review: a deleted object's nullified to-one still holds its saved target under
    /// the mark, so queries must read it as nil too.
    @Test func queriesReadANullifiedLinkAsNil() throws {
        let (store, c, n, duplicate) = try Self.noteWithDuplicateInbox()
        try c.save()                                  // the clash makes an upsert: n joins the stored Inbox
        let inbox = try #require(n.folder)
        #expect(inbox.objectID != nil && inbox !== duplicate)
        try c.delete(n)
        #expect(try QueryPredicate(format: "folder == nil").evaluate(with: n), "a query sees the nullified link as nil")
        #expect(try !QueryPredicate(format: "folder.name == %@", "Inbox").evaluate(with: n))
        try c.save()
        let check = Context(store: store)
        #expect(try check.fetch(FetchRequest<Folder>()).first?.notes.isEmpty == true)
        #expect(try check.fetch(FetchRequest<Note>()).isEmpty)
        #expect(try store.verify() == [])
    }

    /// Found by review: the upsert took the deleted note, whose marked folder slot still holds
    /// the duplicate, for a referrer to lead to the stored folder, and the save failed.
    @Test func anUpsertDoesNotLeadADeletedObjectsNullifiedLink() throws {
        let (store, c, n, duplicate) = try Self.noteWithDuplicateInbox()
        try c.delete(n)                               // n's folder link to the unsaved duplicate is nullified
        #expect(n.folder == nil && duplicate.notes.isEmpty)
        try c.save()                                  // the duplicate is merged into the stored Inbox
        let check = Context(store: store)
        let folders = try check.fetch(FetchRequest<Folder>())
        #expect(folders.count == 1 && folders.first?.notes.isEmpty == true)
        #expect(try check.fetch(FetchRequest<Note>()).isEmpty)
        #expect(try store.verify() == [])
        #expect(try store.verifyGraph() == [])
    }
}
