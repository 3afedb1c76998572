// Undo and redo (UndoManager): attribute changes, inserts, relationship changes with their
// inverses, deletes with their cascades, explicit groups, and a save that clears the stacks.

import DocStore
import Foundation
import Testing

@Suite struct UndoTests {
    func context() throws -> Context {
        let c = Context(store: try Store.inMemory(models: ModelClassTests.models))
        c.undoManager = UndoManager()
        return c
    }

    @Test func anAttributeChangeIsUndoneAndRedone() throws {
        let c = try context()
        let note = Note(title: "first")
        try c.insert(note)
        try c.save()
        note.title = "second"
        let undo = try #require(c.undoManager)
        #expect(undo.canUndo)
        undo.undo()
        #expect(note.title == "first" && !c.hasChanges)
        #expect(undo.canRedo)
        undo.redo()
        #expect(note.title == "second" && c.updatedObjects == [note])
    }

    @Test func anInsertIsUndoneAndRedone() throws {
        let c = try context()
        let folder = Folder(name: "Inbox")
        try c.insert(folder)
        c.undoManager?.undo()
        #expect(c.insertedObjects.isEmpty && !c.hasChanges)
        #expect(try c.fetch(Folder.self).isEmpty)
        c.undoManager?.redo()
        #expect(c.insertedObjects == [folder])
        try c.save()
        #expect(try Context(store: c.store).fetch(Folder.self).map(\.name) == ["Inbox"])
    }

    @Test func aRelationshipChangeIsUndoneWithItsInverses() throws {
        let c = try context()
        let a = Folder(name: "A"), b = Folder(name: "B")
        let note = Note(title: "n", folder: a)
        try c.insert(note)
        try c.insert(b)
        try c.save()
        note.folder = b
        #expect(a.notes.isEmpty && b.notes == [note])
        c.undoManager?.undo()
        #expect(note.folder === a && a.notes == [note] && b.notes.isEmpty)
        c.undoManager?.redo()
        #expect(note.folder === b && a.notes.isEmpty && b.notes == [note])
    }

    @Test func aCascadeDeleteIsUndoneWhole() throws {
        let c = try context()
        let folder = Folder(name: "Trip")
        let notes = (0..<3).map { Note(title: "day \($0)", folder: folder) }
        for n in notes { try c.insert(n) }
        let tag = Tag(name: "travel")
        notes[0].tags = [tag]
        try c.save()
        try c.delete(folder)
        #expect(notes.allSatisfy { $0.isDeleted } && tag.notes.isEmpty)
        c.undoManager?.undo()
        #expect(!folder.isDeleted && notes.allSatisfy { !$0.isDeleted })
        #expect(Set(folder.notes) == Set(notes) && tag.notes == [notes[0]])
        #expect(!c.hasChanges)
        c.undoManager?.redo()
        #expect(folder.isDeleted && notes.allSatisfy { $0.isDeleted })
        try c.save()
        #expect(try Context(store: c.store).fetch(Note.self).isEmpty)
    }

    @Test func anExplicitGroupUndoesAtOnceAndSaveClearsTheStacks() throws {
        let c = try context()
        let note = Note(title: "a")
        try c.insert(note)
        try c.save()
        let undo = try #require(c.undoManager)
        #expect(!undo.canUndo)                      // the save cleared it
        undo.group {
            note.title = "b"
            note.isRead = true
        }
        note.rating = 4                            // a group of its own
        undo.undo()
        #expect(note.title == "b" && note.isRead && note.rating == 0)
        undo.undo()
        #expect(note.title == "a" && !note.isRead)
        undo.redo()
        undo.redo()
        #expect(note.title == "b" && note.isRead && note.rating == 4)
        try c.save()
        #expect(!undo.canUndo && !undo.canRedo)
    }
}
