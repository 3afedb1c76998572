// `docstore demo FILE`: creates a small demo store through the object graph — @Model classes, a
// context, relationships, saves — so that a newcomer has something to inspect: 3 folders, 999
// notes (1 000 inserted over several saves, one deleted), 4 tags, and one note's 1.2 MB
// attachment, which the engine keeps as a blob file.

import ArgumentParser
import DocStore
import Foundation

@Model final class Folder: ManagedObject {
    @Attribute(.unique) var name: String = ""
    @Relationship(deleteRule: .cascade) var notes: Set<Note> = []
}

@Model final class Note: ManagedObject {
    var title: String = ""
    var body: String = ""
    @Attribute(.indexed) var createdAt: Date = Date(timeIntervalSinceReferenceDate: 0)
    @Relationship(inverse: \Folder.notes) var folder: Folder?
    var tags: Set<Tag> = []
    @Relationship(deleteRule: .cascade) var attachments: Set<Attachment> = []
}

@Model final class Tag: ManagedObject {
    @Attribute(.unique) var name: String = ""
    @Relationship(inverse: \Note.tags) var notes: Set<Note> = []
}

@Model final class Attachment: ManagedObject {
    var fileName: String = ""
    var bytes: Data = Data()
    @Relationship(inverse: \Note.attachments) var note: Note?
}

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Create a demo store to look at (replaces FILE if it exists).")

    @Argument(help: "Where to create the store (X.docstore).")
    var file: String

    func run() throws {
        for suffix in ["", "-wal", "-blobs"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        do {
            let store = try Store(url: URL(fileURLWithPath: file), models: [Folder.self, Note.self, Tag.self, Attachment.self])
            let context = Context(store: store)
            let folders = ["Inbox", "Work", "Recipes"].map { name in
                let f = Folder()
                f.name = name
                return f
            }
            let tags = ["urgent", "idea", "home", "later"].map { name in
                let t = Tag()
                t.name = name
                return t
            }
            for f in folders { try context.insert(f) }
            for t in tags { try context.insert(t) }
            var notes: [Note] = []
            for batch in 0..<5 {
                for i in 0..<200 {
                    let n = batch * 200 + i
                    let note = Note()
                    note.title = "Note \(n)"
                    note.body = String(repeating: "lorem ipsum ", count: 1 + n % 20)
                    note.createdAt = Date(timeIntervalSinceReferenceDate: 800_000_000 + Double(n) * 3600)
                    try context.insert(note)
                    note.folder = folders[n % 3]
                    note.tags = [tags[n % 4], tags[(n / 4) % 4]]
                    notes.append(note)
                }
                try context.save()
            }
            let photo = Attachment()
            photo.fileName = "photo.raw"
            photo.bytes = Data((0..<1_200_000).map { UInt8(truncatingIfNeeded: $0 * 7 / 5) })
            photo.note = notes[42]
            try context.insert(photo)
            try context.delete(notes[7])
            try context.save()
            let count = try context.fetch(Note.self).count
            try store.close()
            print("created \(file): \(folders.count) folders, \(count) notes, \(tags.count) tags, 1 attachment")
        } catch {
            CLIExit.fail(error)
        }
    }
}
