// The lightweight changes of README § Migrations, one plan each from NotesV1 (MigrationTests):
// what each costs (instant or rewriting, from the dry run), and that the objects come through
// it object by object with the graph whole (`verify`).

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore

/// to-one → to-many (Note.folder becomes a set: notes may be in several folders), a changed
/// default, optional → required with a default, an index added.
enum CardinalityPlan: SchemaMigrationPlan {
    enum V2: VersionedSchema {
        static let versionIdentifier = SchemaVersion(2, 0, 0)
        static var models: [ManagedObject.Type] { [Folder.self, Note.self] }
        @Model final class Folder: ManagedObject {
            @Attribute(.unique) var name: String = ""
            @Relationship(deleteRule: .nullify, inverse: \Note.folder) var notes: [Note] = []
        }
        @Model final class Note: ManagedObject {
            var title: String = "untitled"
            var body: String = "(none)"
            @Attribute(.indexed) var rating: Int = 0
            var folder: Set<Folder> = []
        }
    }
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, V2.self] }
    static var stages: [MigrationStage] { [] }
}

/// An entity removed (Folder, with the relationship to it), an attribute removed (rating).
enum RemovalPlan: SchemaMigrationPlan {
    enum V2: VersionedSchema {
        static let versionIdentifier = SchemaVersion(2, 0, 0)
        static var models: [ManagedObject.Type] { [Note.self] }
        @Model final class Note: ManagedObject {
            var title: String = ""
            var body: String?
        }
    }
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, V2.self] }
    static var stages: [MigrationStage] { [] }
}

/// to-many → to-one: a folder holds at most one note (Folder.notes becomes Folder.note).
enum ToOnePlan: SchemaMigrationPlan {
    enum V2: VersionedSchema {
        static let versionIdentifier = SchemaVersion(2, 0, 0)
        static var models: [ManagedObject.Type] { [Folder.self, Note.self] }
        @Model final class Folder: ManagedObject {
            @Attribute(.unique) var name: String = ""
            @Relationship(deleteRule: .cascade, originalName: "notes") var note: Note?
        }
        @Model final class Note: ManagedObject {
            var title: String = ""
            var body: String?
            var rating: Int = 0
            @Relationship(inverse: \Folder.note) var folder: Folder?
        }
    }
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, V2.self] }
    static var stages: [MigrationStage] { [] }
}

/// An entity renamed (Note → Memo, by originalName), with the relationships that lead to it.
enum EntityRenamePlan: SchemaMigrationPlan {
    enum V2: VersionedSchema {
        static let versionIdentifier = SchemaVersion(2, 0, 0)
        static var models: [ManagedObject.Type] { [Folder.self, Memo.self] }
        @Model final class Folder: ManagedObject {
            @Attribute(.unique) var name: String = ""
            @Relationship(deleteRule: .cascade) var notes: [Memo] = []
        }
        @Model(originalName: "Note") final class Memo: ManagedObject {
            var title: String = ""
            var body: String?
            var rating: Int = 0
            @Relationship(inverse: \Folder.notes) var folder: Folder?
        }
    }
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, V2.self] }
    static var stages: [MigrationStage] { [] }
}

@Suite struct MigrationChangeTests {
    // one per test (swift-testing makes a suite value for each): removed when the test ends
    let temporary = TemporaryDirectory("change")

    func v1Store() throws -> URL {
        let url = URL(fileURLWithPath: temporary.file("change-\(UUID().uuidString).docstore"))
        try MigrationTests().makeV1(url)
        return url
    }

    @Test func toOneBecomesToManyAndDefaultsAndRequiredValuesFollow() throws {
        let url = try v1Store()
        let report = try Store.migrationReport(url: url, migrationPlan: CardinalityPlan.self)
        let changes = try #require(report.stages.first).changes
        #expect(changes.contains { $0.property == "folder" && $0.change == "to-one → to-many" && $0.cost == .rewritesObjects })
        #expect(changes.contains { $0.property == "title" && $0.change.hasPrefix("default") && $0.cost == .rewritesObjects })
        #expect(changes.contains { $0.property == "body" && $0.change == "became required" })
        #expect(changes.contains { $0.property == "rating" && $0.change == "index added" })

        let store = try Store(url: url, migrationPlan: CardinalityPlan.self)
        let c = Context(store: store)
        let notes = try c.fetch(FetchRequest<CardinalityPlan.V2.Note>(sortDescriptors: [SortKey("title")]))
        #expect(notes.map { $0.folder.map(\.name) } == [["Inbox"], ["Inbox"], ["Inbox"], ["Archive"], ["Archive"]])
        #expect(notes.map(\.body) == ["body of note 0", "body of note 1", "body of note 2", "(none)", "body of note 4"])
        #expect(notes.map(\.title) == (0..<5).map { "note \($0)" })      // stored values stay
        let inbox = try #require(try c.fetch(FetchRequest<CardinalityPlan.V2.Folder>(predicate: try QueryPredicate(format: "name == 'Inbox'"))).first)
        #expect(inbox.notes.map(\.title) == ["note 0", "note 1", "note 2"])    // the order is kept
        #expect(try c.count(for: FetchRequest<CardinalityPlan.V2.Note>(predicate: try QueryPredicate(format: "rating >= 3"))) == 2)
        // Many-to-many now: a note joins a second folder.
        let archive = try #require(try c.fetch(FetchRequest<CardinalityPlan.V2.Folder>(predicate: try QueryPredicate(format: "name == 'Archive'"))).first)
        notes[0].folder.insert(archive)
        try c.save()
        #expect(try store.verify() == [])
    }

    @Test func removingAnEntityAndAnAttributeIsInstant() throws {
        let url = try v1Store()
        let report = try Store.migrationReport(url: url, migrationPlan: RemovalPlan.self)
        let stage = try #require(report.stages.first)
        #expect(!stage.rewritesObjects)
        #expect(stage.changes.contains { $0.entity == "Folder" && $0.change == "entity removed" })
        #expect(stage.changes.contains { $0.entity == "Note" && $0.property == "rating" && $0.change == "attribute removed" })
        let store = try Store(url: url, migrationPlan: RemovalPlan.self)
        let c = Context(store: store)
        let notes = try c.fetch(FetchRequest<RemovalPlan.V2.Note>(sortDescriptors: [SortKey("title")]))
        #expect(notes.map(\.title) == (0..<5).map { "note \($0)" } && notes[3].body == nil)
        // Folder's records tree is gone from the file, and the graph is whole.
        let trees = try store.read { txn in try txn.treeNames() }
        #expect(!trees.contains("records.1"))
        #expect(try store.verify() == [])
        // A later save of a note drops the fields of removed properties (Format/record.md rule 3).
        notes[0].title = "renamed"
        #expect(notes[0].managedObjectContext === c)
        try c.save()
        #expect(try store.verify() == [])
    }

    @Test func toManyBecomesToOneOnlyWhereEachHasOneObject() throws {
        let url = try v1Store()
        let error = #expect(throws: DocStoreError.self) { try Store(url: url, migrationPlan: ToOnePlan.self) }
        #expect(error?.code == .validation)
        #expect(error?.problems.contains { $0.entity == "Folder/1" && $0.property == "note" && $0.message.contains("3 objects") } == true, "\(String(describing: error?.problems))")
        #expect(error?.problems.contains { $0.entity == "Folder/2" && $0.message.contains("2 objects") } == true)

        // With one note per folder it goes through.
        do {
            let store = try Store(url: url, models: NotesV1.models)
            let c = Context(store: store)
            for note in try c.fetch(FetchRequest<NotesV1.Note>(predicate: try QueryPredicate(format: "title IN {'note 1', 'note 2', 'note 4'}"))) {
                try c.delete(note)
            }
            try c.save()
            try store.close()
        }
        let store = try Store(url: url, migrationPlan: ToOnePlan.self)
        let c = Context(store: store)
        let folders = try c.fetch(FetchRequest<ToOnePlan.V2.Folder>(sortDescriptors: [SortKey("name")]))
        #expect(folders.map { $0.note?.title } == ["note 3", "note 0"])      // Archive, Inbox
        #expect(try store.verify() == [])
    }

    @Test func renamingAnEntityIsInstantAndKeepsItsObjectsAndLinks() throws {
        let url = try v1Store()
        let stage = try #require(try Store.migrationReport(url: url, migrationPlan: EntityRenamePlan.self).stages.first)
        #expect(!stage.rewritesObjects && stage.changes.contains { $0.entity == "Memo" && $0.change == "renamed from Note" })
        let store = try Store(url: url, migrationPlan: EntityRenamePlan.self)
        let c = Context(store: store)
        let memos = try c.fetch(FetchRequest<EntityRenamePlan.V2.Memo>(sortDescriptors: [SortKey("title")]))
        #expect(memos.map(\.title) == (0..<5).map { "note \($0)" })
        #expect(memos.map { $0.folder?.name } == ["Inbox", "Inbox", "Inbox", "Archive", "Archive"])
        #expect(memos.first?.objectID?.uriRepresentation.path == "/Memo/1")
        #expect(store.catalog.entityIDs["Memo"] == 2 && store.catalog.entityIDs["Note"] == nil)
        #expect(try store.verify() == [])
    }
}
