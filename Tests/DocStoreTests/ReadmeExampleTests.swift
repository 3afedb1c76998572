// The README's object-graph example, run as written (the declarations live in an enum here only
// because this test module declares other classes named Folder, Note and Tag). If this test has
// to change, the README changes with it.

import DocStore
import Foundation
import Testing

enum ReadmeExample {
    @Model final class Folder: ManagedObject {
        @Attribute(.unique) var name: String
        @Relationship(deleteRule: .cascade) var notes: Set<Note> = []

        init(name: String) { self.name = name }
    }

    @Model final class Note: ManagedObject {
        var title: String = ""
        var body: String?
        @Attribute(.indexed) var createdAt: Date = .now
        @Relationship(inverse: \Folder.notes) var folder: Folder?
        var tags: Set<Tag> = []

        init(title: String, folder: Folder? = nil) {
            self.title = title
            self.folder = folder
        }
    }

    @Model final class Tag: ManagedObject {
        @Attribute(.unique) var name: String
        @Relationship(inverse: \Note.tags) var notes: Set<Note> = []

        init(name: String) { self.name = name }
    }
}

@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleRunsAsWritten() throws {
        typealias Folder = ReadmeExample.Folder
        typealias Note = ReadmeExample.Note
        typealias Tag = ReadmeExample.Tag
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString).docstore")

        // --- README ---
        let store = try Store(url: url, models: [Folder.self, Note.self, Tag.self])
        let context = Context(store: store)

        let inbox = Folder(name: "Inbox")
        let milk = Note(title: "Buy milk", folder: inbox)   // related before insert
        try context.insert(milk)                            // inserts the folder too
        milk.tags.insert(Tag(name: "errands"))              // the tag's notes now hold milk
        #expect(inbox.notes.count == 1)
        try context.save()
        let id = try #require(milk.objectID)
        try store.close()

        // Reopen: objects come back as faults and load when first read.
        let reopened = try Store(url: url, models: [Folder.self, Note.self, Tag.self])
        let context2 = Context(store: reopened)
        let note = try #require(try context2.existingObject(with: id) as? Note)
        #expect(note.title == "Buy milk" && note.folder?.name == "Inbox" && note.tags.map(\.name) == ["errands"])
        let folder = try #require(note.folder)
        try context2.delete(folder)                         // cascade: its notes go too
        try context2.save()
        #expect(note.isDeleted)
        // --- end ---
        #expect(try context2.fetch(Note.self).isEmpty)
        #expect(try context2.fetch(Tag.self).first?.notes.isEmpty == true)
        try reopened.close()
    }
}
