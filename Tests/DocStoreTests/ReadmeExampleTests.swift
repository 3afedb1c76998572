// The README's object-graph example, run as written (the declarations live in an enum here only
// because this test module declares other classes named Folder, Note and Tag). If this test has
// to change, the README changes with it.

import DocStore
import DocStoreTestSupport
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
        let dir = TemporaryDirectory("readme")
        defer { withExtendedLifetime(dir) {} }
        let url = URL(fileURLWithPath: dir.file("readme.docstore"))

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

    /// A context on a new in-memory store of the README's model, and a folder named Inbox (not
    /// inserted).
    static func contextWithInbox() throws -> (Context, ReadmeExample.Folder) {
        let store = try Store.inMemory(models: [ReadmeExample.Folder.self, ReadmeExample.Note.self, ReadmeExample.Tag.self])
        return (Context(store: store), ReadmeExample.Folder(name: "Inbox"))
    }

    /// The README's query example: the request, the count, and the plan explain prints.
    @Test func theReadmeQueryExampleRunsAsWritten() throws {
        typealias Note = ReadmeExample.Note
        let (context, inbox) = try Self.contextWithInbox()
        try context.insert(inbox)
        let start = Date(timeIntervalSinceReferenceDate: 800_000_000)
        for i in 0..<60 {
            let n = Note(title: "note \(i)", folder: i % 2 == 0 ? inbox : nil)
            n.createdAt = start.addingTimeInterval(Double(i) * 3600)
            try context.insert(n)
        }
        try context.save()
        let lastWeek = start

        // --- README ---
        let recent = try QueryPredicate(format: "folder.name == %@ AND createdAt > %@", "Inbox", lastWeek)
        var request = FetchRequest<Note>(predicate: recent, sortDescriptors: [SortKey("createdAt", ascending: false)])
        request.fetchLimit = 20
        let notes = try context.fetch(request)
        let withoutBody = try context.count(for: FetchRequest<Note>(predicate: try QueryPredicate(format: "body == nil")))
        let plan = try context.explain(request, analyze: true)
        let drafts = FetchRequest<Note>(predicate: #Predicate { $0.body == nil && $0.folder?.name == "Inbox" },
                                        sortBy: [SortDescriptor(\.createdAt, order: .reverse)], fetchLimit: 20)
        let latestDrafts = try context.fetch(drafts)
        // --- end ---
        #expect(latestDrafts.map(\.objectID) == notes.map(\.objectID))
        #expect(notes.count == 20 && notes.allSatisfy { $0.folder === inbox })
        #expect(notes.map(\.createdAt) == notes.map(\.createdAt).sorted(by: >))
        #expect(withoutBody == 60)
        #expect(plan == """
            fetch Note
              source: index index.5 on Note.createdAt, > CAST(800000000.0, "NSDate")
              filter: folder.name == "Inbox" AND createdAt > CAST(800000000.0, "NSDate") (tested on each candidate: folder.name == "Inbox"; the index answers the rest)
              order: createdAt DESC — by the index's order (backward), stopping once 20 matches and their ties are read
              window: offset 0, limit 20
              read: 41 index entries, 40 records; 20 results
            """, "\(plan)")
    }

    /// The README's typed-condition example.
    @Test func theReadmeTypedConditionExampleRunsAsWritten() throws {
        typealias Folder = ReadmeExample.Folder
        typealias Note = ReadmeExample.Note
        let (context, inbox) = try Self.contextWithInbox()
        for title in ["Crème Brûlée 10", "crème brûlée 9", "Creme brulee", "Tarte"] { try context.insert(Note(title: title, folder: inbox)) }
        try context.insert(Note(title: "Crème brûlée elsewhere"))

        // --- README ---
        let found = try context.fetch(FetchRequest<Note>(
            predicate: try .string(\Note.title, .contains, "creme brulee")    // finds "Crème Brûlée"
                && .string(\Note.folder, \Folder.name, .equals, "inbox"),    // through a to-one
            sortDescriptors: [SortKey(\Note.title, options: .localizedStandard)]))   // the Finder's order
        // --- end ---
        #expect(found.map(\.title) == ["Creme brulee", "crème brûlée 9", "Crème Brûlée 10"])
    }
}

/// The snippets of README § Contexts working together, run as written (with the README's model).
@Suite struct ReadmeContextExampleTests {
    typealias Folder = ReadmeExample.Folder
    typealias Note = ReadmeExample.Note
    typealias Tag = ReadmeExample.Tag

    @MainActor @Test func theContextSnippetsRunAsWritten() async throws {
        let store = try Store.inMemory(models: [Folder.self, Note.self, Tag.self])
        let feed = ["a", "b"]
        let ui = store.mainContext                        // merges by itself
        let changes = try ui.objectsDidChange(entities: ["Note"])
        try await store.performBackgroundTask { context in
            for item in feed { try context.insert(Note(title: item)) }
            try context.save()                            // the main context hears of it
        }
        var events = changes.makeAsyncIterator()
        #expect(await events.next()?.insertedObjectIDs.count == 2)

        let context = Context(store: store)
        try context.insert(Tag(name: "swift"))
        try context.save()
        context.mergePolicy = .mergeByPropertyObjectTrump
        try context.insert(Tag(name: "swift"))            // "swift" exists: no error, one Tag
        try context.save()
        #expect(try context.fetch(Tag.self).count == 1)

        let inbox = Folder(name: "Inbox")
        try ui.insert(Note(title: "c", folder: inbox))
        try ui.save()
        let controller = try FetchedResultsController(
            fetchRequest: FetchRequest<Note>(sortDescriptors: [SortKey("folder.name"), SortKey("title")]),
            context: store.mainContext, sectionNameKeyPath: "folder.name", batchSize: 50)
        try controller.performFetch()
        var seen: [ResultsDifference] = []
        controller.onChange = { difference in seen.append(difference) }
        let first = try controller.object(at: IndexPath(item: 0, section: 0))
        #expect(controller.sectionNames == ["", "Inbox"] && first.title == "a")
        try ui.insert(Note(title: "d", folder: inbox))
        ui.processPendingChanges()
        #expect(seen.last?.changes.map(\.newIndexPath) == [IndexPath(item: 1, section: 1)])

        var lastToken: HistoryToken?
        var uploaded: [HistoryChange] = []
        func upload(_ changes: [HistoryChange]) { uploaded += changes }
        let transactions = try store.history(after: lastToken, entities: ["Note"])   // also author:, contextName:
        for t in transactions where t.author != "sync" { upload(t.changes) }
        lastToken = transactions.last?.token ?? lastToken
        try store.deleteHistory(through: lastToken!)                                 // or before: date
        #expect(uploaded.filter { $0.changeType == .insert }.count == 3)   // "d" is not saved
        #expect(try store.history().isEmpty)
    }
}
