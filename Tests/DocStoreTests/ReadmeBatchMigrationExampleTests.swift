// The README's batch-operation and migration snippets (§ Batch operations and migrations), run
// as written on the README's notes model (ReadmeExample). If this test has to change, the README
// changes with it.

import DocStore
import DocStoreTestSupport
import Foundation
import Testing

enum ReadmeMigration {
    enum NotesV1: VersionedSchema {
        static let versionIdentifier = SchemaVersion(1, 0, 0)
        static var models: [ManagedObject.Type] { [Note.self] }
        @Model final class Note: ManagedObject {
            var title: String = ""
            var body: String?
        }
    }
    enum NotesV2: VersionedSchema {
        static let versionIdentifier = SchemaVersion(2, 0, 0)
        static var models: [ManagedObject.Type] { [Note.self] }
        @Model final class Note: ManagedObject {
            var title: String = ""
            @Attribute(.originalName("body")) var text: String?
            var summary: String
            init(summary: String) { self.summary = summary }
        }
    }
    enum Plan: SchemaMigrationPlan {
        static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self] }
        static var stages: [MigrationStage] {
            [.custom(fromVersion: NotesV1.self, toVersion: NotesV2.self) { migration in
                migration.forEachObject(of: "Note") { old, new in       // both versions of one object
                    new["summary"] = String((old["body"] as? String ?? "").prefix(40))
                }
            }]
        }
    }
}

@Suite struct ReadmeBatchMigrationExampleTests {
    @Test func theBatchSnippetRunsAsWritten() throws {
        typealias Folder = ReadmeExample.Folder
        typealias Note = ReadmeExample.Note
        typealias Tag = ReadmeExample.Tag
        let store = try Store.inMemory(models: [Folder.self, Note.self, Tag.self])
        let context = Context(store: store)
        let inbox = Folder(name: "Inbox"), archive = Folder(name: "Archive")
        let work = Tag(name: "work")
        try context.insert(inbox)
        try context.insert(archive)
        try context.insert(work)
        try context.save()

        // Rows by property name: attributes as Swift values, relationships as ObjectIDs.
        var n = 0
        let insert = BatchInsertRequest(entityName: "Note") { row in
            guard n < 10_000 else { return true }         // true: done
            n += 1
            row["title"] = "Note \(n)"
            row["createdAt"] = Date()
            row["folder"] = inbox.objectID!
            row["tags"] = [work.objectID!]
            return false
        }
        try context.execute(insert)                       // or store.execute(insert)

        var update = BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "folder.name == 'Inbox'"))
        update.propertiesToUpdate = ["body": "filed", "folder": archive.objectID!]   // an expression: ["views": try QueryExpression(format: "views + 1")]
        try context.execute(update)

        let cutoff = Date().addingTimeInterval(-365 * 86_400)
        let result = try context.execute(BatchDeleteRequest(entityName: "Note", predicate: try QueryPredicate(format: "createdAt < %@", cutoff)))
        print(result.count, result.transaction?.deletedObjectIDs.count ?? 0)

        // What the snippet did: 10 000 notes, all moved to the archive, none old enough to go.
        #expect(result.count == 0)
        #expect(archive.notes.count == 10_000 && inbox.notes.isEmpty && work.notes.count == 10_000)
        #expect(try context.count(for: FetchRequest<Note>(predicate: try QueryPredicate(format: "body == 'filed'"))) == 10_000)
        #expect(try store.verify().isEmpty)
    }

    @Test func theMigrationSnippetRunsAsWritten() throws {
        let dir = TemporaryDirectory("readme")
        defer { withExtendedLifetime(dir) {} }
        let url = URL(fileURLWithPath: dir.file("readme.docstore"))
        do {
            let old = try Store(url: url, models: ReadmeMigration.NotesV1.models)
            let c = Context(store: old)
            let note = ReadmeMigration.NotesV1.Note()
            note.title = "Groceries"
            note.body = "milk, eggs, bread, and something for the weekend"
            try c.insert(note)
            try c.save()
            try old.close()
        }
        typealias Plan = ReadmeMigration.Plan
        print(try Store.migrationReport(url: url, migrationPlan: Plan.self))   // the dry run, rehearsed on a copy
        let store = try Store(url: url, migrationPlan: Plan.self) { progress in
            print(progress.stage, progress.completedUnitCount, progress.totalUnitCount)
        }
        let notes = try Context(store: store).fetch(FetchRequest<ReadmeMigration.NotesV2.Note>())
        #expect(notes.map(\.summary) == ["milk, eggs, bread, and something for the"])
        #expect(notes.map(\.text) == ["milk, eggs, bread, and something for the weekend"])
        try store.close()
    }
}
