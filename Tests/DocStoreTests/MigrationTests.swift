// Migrations (Migration/): versioned schemas in code and a migration plan; lightweight changes
// inferred (instant where the encoding allows, rewriting otherwise); custom stages that see old
// and new objects; progressive migration through every stage; a dry run; every schema version
// kept in the file; typed errors that leave the store as it was; and crash safety — a crash at
// any call of a rewriting migration leaves the old store or the new one.

import Foundation
import Synchronization
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore
@testable import DocStoreEngine

enum NotesV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static var models: [ManagedObject.Type] { [Folder.self, Note.self] }

    @Model final class Folder: ManagedObject {
        @Attribute(.unique) var name: String = ""
        @Relationship(deleteRule: .cascade) var notes: [Note] = []
    }

    @Model final class Note: ManagedObject {
        var title: String = ""
        var body: String?
        var rating: Int = 0
        @Relationship(inverse: \Folder.notes) var folder: Folder?
    }
}

/// Instant changes: a renamed attribute, an added one with a default, a new optional one, a
/// new entity with a many-to-many relationship.
enum NotesV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static var models: [ManagedObject.Type] { [Folder.self, Note.self, Tag.self] }

    @Model final class Folder: ManagedObject {
        @Attribute(.unique) var name: String = ""
        var color: String?
        @Relationship(deleteRule: .cascade) var notes: [Note] = []
    }

    @Model final class Note: ManagedObject {
        var title: String = ""
        @Attribute(.originalName("body")) var text: String?
        var rating: Int = 0
        var isPinned: Bool = false
        @Relationship(inverse: \Folder.notes) var folder: Folder?
        var tags: Set<Tag> = []
    }

    @Model final class Tag: ManagedObject {
        @Attribute(.unique) var name: String = ""
        @Relationship(inverse: \Note.tags) var notes: Set<Note> = []
    }
}

/// Rewriting changes, with a custom stage: rating becomes a Double with an index, a required
/// summary is filled from the text, the folder's notes lose their order, and each pinned
/// note gets a Tag "pinned" made for it.
enum NotesV3: VersionedSchema {
    static let versionIdentifier = SchemaVersion(3, 0, 0)
    static var models: [ManagedObject.Type] { [Folder.self, Note.self, Tag.self] }

    @Model final class Folder: ManagedObject {
        @Attribute(.unique) var name: String = ""
        var color: String?
        @Relationship(deleteRule: .cascade) var notes: Set<Note> = []
    }

    @Model final class Note: ManagedObject {
        var title: String = ""
        var text: String?
        var summary: String
        @Attribute(.indexed) var rating: Double = 0
        var isPinned: Bool = false
        @Relationship(inverse: \Folder.notes) var folder: Folder?
        var tags: Set<Tag> = []

        init(summary: String) { self.summary = summary }
    }

    @Model final class Tag: ManagedObject {
        @Attribute(.unique) var name: String = ""
        @Relationship(inverse: \Note.tags) var notes: Set<Note> = []
    }
}

enum NotesPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self, NotesV3.self] }
    static var stages: [MigrationStage] {
        [.custom(fromVersion: NotesV2.self, toVersion: NotesV3.self) { migration in
            migration.forEachObject(of: "Note") { old, new in
                let text = old["text"] as? String ?? ""
                new["summary"] = text.isEmpty ? "(empty)" : String(text.prefix(10))
            }
        }]
    }
}

enum NotesPlanTo2: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self] }
    static var stages: [MigrationStage] { [] }
}

@Suite struct MigrationTests {
    // one per test (swift-testing makes a suite value for each): removed when the test ends
    let temporary = TemporaryDirectory("migration")

    func temporaryURL() -> URL {
        URL(fileURLWithPath: temporary.file("migration-\(UUID().uuidString).docstore"))
    }

    /// A version-1 store: 2 folders, 5 notes.
    func makeV1(_ url: URL) throws {
        let store = try Store(url: url, models: NotesV1.models)
        let c = Context(store: store)
        let inbox = NotesV1.Folder(), archive = NotesV1.Folder()
        inbox.name = "Inbox"
        archive.name = "Archive"
        try c.insert(inbox)
        try c.insert(archive)
        for i in 0..<5 {
            let n = NotesV1.Note()
            n.title = "note \(i)"
            n.body = i == 3 ? nil : "body of note \(i)"
            n.rating = i
            try c.insert(n)
            n.folder = i < 3 ? inbox : archive
        }
        try c.save()
        try store.close()
    }

    /// A version-2 store (migrated from version 1) with a second note titled `title`.
    func makeV2(_ url: URL, withSecond title: String) throws {
        try makeV1(url)
        let store = try Store(url: url, migrationPlan: NotesPlanTo2.self)
        let c = Context(store: store)
        let dup = NotesV2.Note()
        dup.title = title
        try c.insert(dup)
        try c.save()
        try store.close()
    }

    @Test func aLightweightMigrationIsInstantAndKeepsEveryObject() throws {
        let url = temporaryURL()
        try makeV1(url)
        let report = try Store.migrationReport(url: url, migrationPlan: NotesPlanTo2.self)
        #expect(report.storeVersion == SchemaVersion(1, 0, 0) && report.stages.count == 1)
        let stage = try #require(report.stages.first)
        #expect(!stage.rewritesObjects && stage.objectCount == 7)
        #expect(stage.changes.contains { $0.entity == "Note" && $0.property == "text" && $0.change == "renamed from body" && $0.cost == .instant })
        #expect(stage.changes.contains { $0.entity == "Tag" && $0.change == "entity added" })

        var seen: [MigrationProgress] = []
        let store = try Store(url: url, migrationPlan: NotesPlanTo2.self) { seen.append($0) }
        #expect(seen.count == 1 && seen.first?.totalUnitCount == 0)
        let c = Context(store: store)
        let notes = try c.fetch(FetchRequest<NotesV2.Note>(sortDescriptors: [SortKey("title")]))
        #expect(notes.map(\.title) == (0..<5).map { "note \($0)" })
        #expect(notes.map(\.text) == ["body of note 0", "body of note 1", "body of note 2", nil, "body of note 4"])
        #expect(notes.map(\.rating) == [0, 1, 2, 3, 4] && notes.allSatisfy { !$0.isPinned && $0.tags.isEmpty })
        #expect(notes.map { $0.folder?.name } == ["Inbox", "Inbox", "Inbox", "Archive", "Archive"])
        // The new entity works, relationships included.
        let tag = NotesV2.Tag()
        tag.name = "work"
        try c.insert(tag)
        notes[0].tags.insert(tag)
        notes[0].isPinned = true
        try c.save()
        #expect(try store.verify() == [])
        // The file keeps version 1's schema.
        #expect(store.catalog.versions.count == 1 && store.catalog.versions.first?.schema.entity(named: "Note")?.attributes.contains { $0.name == "body" } == true)
        #expect(store.catalog.versionIdentifier == SchemaVersion(2, 0, 0) && store.catalog.schemaVersion == 2)
        try store.close()
        // Opening again with the plan finds nothing to do.
        #expect(try Store.migrationReport(url: url, migrationPlan: NotesPlanTo2.self).stages.isEmpty)
    }

    @Test func aStoreSeveralVersionsOldWalksEveryStageInOrder() throws {
        let url = temporaryURL()
        try makeV1(url)
        var seen: [MigrationProgress] = []
        let store = try Store(url: url, migrationPlan: NotesPlan.self) { seen.append($0) }
        // Stage 1 (1 → 2) instant; stage 2 (2 → 3) rewrites the 7 objects, reporting as it goes.
        #expect(seen.first?.stage == 1 && seen.first?.stageCount == 2 && seen.first?.toVersion == SchemaVersion(2, 0, 0))
        let rewriting = seen.filter { $0.stage == 2 }
        #expect(rewriting.first?.completedUnitCount == 0 && rewriting.last?.completedUnitCount == 7 && rewriting.last?.totalUnitCount == 7)
        #expect(zip(rewriting, rewriting.dropFirst()).allSatisfy { $0.completedUnitCount <= $1.completedUnitCount })

        let c = Context(store: store)
        let notes = try c.fetch(FetchRequest<NotesV3.Note>(sortDescriptors: [SortKey("title")]))
        #expect(notes.map(\.summary) == ["body of no", "body of no", "body of no", "(empty)", "body of no"])
        #expect(notes.map(\.rating) == [0, 1, 2, 3, 4])
        #expect(notes.map { $0.folder?.name } == ["Inbox", "Inbox", "Inbox", "Archive", "Archive"])
        let inbox = try #require(try c.fetch(FetchRequest<NotesV3.Folder>(predicate: try QueryPredicate(format: "name == 'Inbox'"))).first)
        #expect(Set(inbox.notes.map(\.title)) == ["note 0", "note 1", "note 2"])
        // The new index on rating answers queries.
        let high = FetchRequest<NotesV3.Note>(predicate: try QueryPredicate(format: "rating >= 2.5"))
        #expect(try c.count(for: high) == 2 && (try c.explain(high)).contains("index"))
        // Object IDs survive: the URIs of version 1 still name the same notes.
        #expect(notes.map { $0.objectID?.number } == [1, 2, 3, 4, 5])
        #expect(try store.verify() == [])
        #expect(store.catalog.versions.map(\.versionIdentifier) == [nil, SchemaVersion(2, 0, 0)])
        // New objects get new keys after the old ones; saving works.
        let n = NotesV3.Note(summary: "new")
        n.title = "note 5"
        try c.insert(n)
        try c.save()
        #expect(n.objectID?.number == 6)
        try store.close()
        #expect(!FileManager.default.fileExists(atPath: url.path + ".migrating"))
        #expect(!FileManager.default.fileExists(atPath: url.path + ".migration-commit"))
    }

    @Test func theDryRunSaysWhatEachStageDoesAndChangesNothing() throws {
        let url = temporaryURL()
        try makeV1(url)
        let before = try Data(contentsOf: url)
        let report = try Store.migrationReport(url: url, migrationPlan: NotesPlan.self)
        #expect(try Data(contentsOf: url) == before)
        #expect(report.stages.count == 2)
        let second = report.stages[1]
        #expect(second.isCustom && second.rewritesObjects && second.objectCount == 7)
        #expect(second.changes.contains { $0.property == "rating" && $0.change == "type Int64 → Double" && $0.cost == .rewritesObjects })
        #expect(second.changes.contains { $0.property == "summary" && $0.change == "required attribute added without a default" })
        #expect(second.changes.contains { $0.property == "notes" && $0.change == "no longer ordered" })
        #expect(report.description.contains("stage 2: 2.0.0 → 3.0.0 (custom), rewrites 7 objects"))
        // A rewriting stage is rehearsed on a scratch copy: this one would succeed.
        #expect(report.rehearsed && report.problems.isEmpty && report.description.contains("it succeeds"))
        #expect(try Data(contentsOf: url) == before)
    }

    @Test func theDryRunNamesTheObjectsTheDataWouldRefuseAndChangesNothing() throws {
        let url = temporaryURL()
        try makeV2(url, withSecond: "note 3")
        let before = try Data(contentsOf: url)
        let report = try Store.migrationReport(url: url, migrationPlan: UniqueTitlePlan.self)
        #expect(report.storeVersion == SchemaVersion(2, 0, 0) && report.rehearsed)
        #expect(report.problems.count == 1 && report.problems.first?.message.contains("\"note 3\"") == true, "\(report.problems)")
        #expect(report.description.contains("it fails with 1 problem"))
        #expect(try Data(contentsOf: url) == before)
        // Without the rehearsal, the report is the plan alone.
        let quick = try Store.migrationReport(url: url, migrationPlan: UniqueTitlePlan.self, rehearse: false)
        #expect(!quick.rehearsed && quick.problems.isEmpty && quick.stages.first?.rewritesObjects == true)
    }

    enum UniqueTitlePlan: SchemaMigrationPlan {
        enum V2b: VersionedSchema {
            static let versionIdentifier = SchemaVersion(2, 1, 0)
            static var models: [ManagedObject.Type] { [Folder.self, Note.self, Tag.self] }
            @Model final class Folder: ManagedObject {
                @Attribute(.unique) var name: String = ""
                var color: String?
                @Relationship(deleteRule: .cascade) var notes: [Note] = []
            }
            @Model final class Note: ManagedObject {
                @Attribute(.unique) var title: String = ""
                var text: String?
                var rating: Int = 0
                var isPinned: Bool = false
                @Relationship(inverse: \Folder.notes) var folder: Folder?
                var tags: Set<Tag> = []
            }
            @Model final class Tag: ManagedObject {
                @Attribute(.unique) var name: String = ""
                @Relationship(inverse: \Note.tags) var notes: Set<Note> = []
            }
        }
        static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self, V2b.self] }
        static var stages: [MigrationStage] { [] }
    }

    @Test func aConstraintTheDataBreaksFailsNamingTheObjectsAndLeavesTheStore() throws {
        let url = temporaryURL()
        try makeV2(url, withSecond: "note 1")
        let error = #expect(throws: DocStoreError.self) { try Store(url: url, migrationPlan: UniqueTitlePlan.self) }
        #expect(error?.code == .validation, "\(String(describing: error))")
        #expect(error?.problems.first?.message.contains("\"note 1\"") == true && error?.problems.first?.message.contains("Note/2") == true, "\(String(describing: error?.problems))")
        // Still version 2, whole, and no copy left behind.
        let store = try Store(url: url, migrationPlan: NotesPlanTo2.self)
        #expect(store.catalog.versionIdentifier == SchemaVersion(2, 0, 0))
        #expect(try Context(store: store).count(for: FetchRequest<NotesV2.Note>()) == 6)
        #expect(try store.verify() == [])
        #expect(!FileManager.default.fileExists(atPath: url.path + ".migrating"))
    }

    /// Splitting an entity: each note's text moves into an Attachment object of its own.
    enum SplitPlan: SchemaMigrationPlan {
        enum V2s: VersionedSchema {
            static let versionIdentifier = SchemaVersion(2, 5, 0)
            static var models: [ManagedObject.Type] { [Folder.self, Note.self, Tag.self, Attachment.self] }
            @Model final class Folder: ManagedObject {
                @Attribute(.unique) var name: String = ""
                var color: String?
                @Relationship(deleteRule: .cascade) var notes: [Note] = []
            }
            @Model final class Note: ManagedObject {
                var title: String = ""
                var rating: Int = 0
                var isPinned: Bool = false
                @Relationship(inverse: \Folder.notes) var folder: Folder?
                var tags: Set<Tag> = []
                @Relationship(deleteRule: .cascade) var attachments: Set<Attachment> = []
            }
            @Model final class Tag: ManagedObject {
                @Attribute(.unique) var name: String = ""
                @Relationship(inverse: \Note.tags) var notes: Set<Note> = []
            }
            @Model final class Attachment: ManagedObject {
                var content: String = ""
                @Relationship(inverse: \Note.attachments) var note: Note?
            }
        }
        static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self, V2s.self] }
        static var stages: [MigrationStage] {
            [.custom(fromVersion: NotesV2.self, toVersion: V2s.self) { migration in
                migration.forEachObject(of: "Note") { old, new in
                    guard let text = old["text"] as? String else { return }
                    let attachment = try migration.insertObject(forEntityName: "Attachment")
                    attachment["content"] = text
                    attachment["note"] = new
                }
            }]
        }
    }

    /// Counts live instances: a custom stage's handler holds one, so it must be freed with the
    /// handler once the migration is over.
    final class StageTracker {
        static let live = Atomic<Int>(0)
        init() { Self.live.add(1, ordering: .relaxed) }
        deinit { Self.live.subtract(1, ordering: .relaxed) }
    }

    /// SplitPlan's stage, written as apps write it: the handler captures the migration (to insert
    /// through it) and some state of its own.
    enum CapturingPlan: SchemaMigrationPlan {
        static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self, SplitPlan.V2s.self] }
        static var stages: [MigrationStage] {
            [.custom(fromVersion: NotesV2.self, toVersion: SplitPlan.V2s.self) { migration in
                let tracker = StageTracker()
                migration.forEachObject(of: "Note") { old, new in
                    _ = tracker
                    guard let text = old["text"] as? String else { return }
                    let attachment = try migration.insertObject(forEntityName: "Attachment")
                    attachment["content"] = text
                }
            }]
        }
    }

    @Test func aCustomStagesHandlersAreFreedAfterTheMigration() throws {
        let url = temporaryURL()
        try makeV1(url)
        let store = try Store(url: url, migrationPlan: CapturingPlan.self)
        #expect(try Context(store: store).count(for: FetchRequest<SplitPlan.V2s.Attachment>()) == 4)
        try store.close()
        // The handler captured its CustomMigration, which held the handler: freed only because
        // the migration drops its handlers when the stage is done (LeakSanitizer found the cycle).
        #expect(StageTracker.live.load(ordering: .relaxed) == 0)
    }

    @Test func aCustomStageSplitsAnEntityWithOldAndNewObjectsTogether() throws {
        let url = temporaryURL()
        try makeV1(url)
        let store = try Store(url: url, migrationPlan: SplitPlan.self)
        let c = Context(store: store)
        let notes = try c.fetch(FetchRequest<SplitPlan.V2s.Note>(sortDescriptors: [SortKey("title")]))
        #expect(notes.map { $0.attachments.map(\.content).sorted() } == [["body of note 0"], ["body of note 1"], ["body of note 2"], [], ["body of note 4"]])
        let attachments = try c.fetch(FetchRequest<SplitPlan.V2s.Attachment>())
        #expect(attachments.count == 4 && attachments.allSatisfy { $0.note?.attachments.contains($0) == true })
        #expect(try store.verify() == [])
        // The cascade rule of the new relationship works on migrated objects.
        try c.delete(notes[0])
        try c.save()
        #expect(try c.count(for: FetchRequest<SplitPlan.V2s.Attachment>()) == 3)
    }

    @Test func aPlanOutOfOrderIsRefusedBeforeAnythingIsRead() throws {
        enum Backwards: SchemaMigrationPlan {
            static var schemas: [any VersionedSchema.Type] { [NotesV2.self, NotesV1.self] }
            static var stages: [MigrationStage] { [] }
        }
        let error = #expect(throws: DocStoreError.self) { try Store(url: temporaryURL(), migrationPlan: Backwards.self) }
        #expect(error?.code == .invalidSchema)
    }
}

/// A crash at every mutating file-system call of a migration (an instant stage, then a rewriting
/// one) leaves a store that opens at one of the versions it passed through — version 1, 2 or
/// 3, never a mix — whose objects are whole; opening it with the plan then finishes the
/// migration with the expected objects. Images: synced data only, everything, and random
/// apply/drop/tear.
@Suite struct MigrationCrashTests {
    static let path = "/db/Migrating.docstore"

    static func options(_ fs: any FileSystem) -> EngineOptions {
        var o = EngineOptions()
        o.fileSystem = fs
        o.durability = .full
        o.checkpointWALBytes = 8_000
        o.walPreallocationBytes = 4096
        return o
    }

    static func makeV1(_ fs: any FileSystem) throws {
        let store = try Store(path: path, url: nil, schema: NotesV1.schema, classes: Store.classes(NotesV1.models), options: options(fs))
        let c = Context(store: store)
        let inbox = NotesV1.Folder()
        inbox.name = "Inbox"
        try c.insert(inbox)
        for i in 0..<12 {
            let n = NotesV1.Note()
            n.title = "note \(i)"
            n.body = "body \(i)"
            n.rating = i
            try c.insert(n)
            n.folder = inbox
        }
        try c.save()
        try store.close()
    }

    /// The notes as version 3 has them: title, summary, rating, folder.
    static func v3Notes(_ store: Store) throws -> [String] {
        try Context(store: store).fetch(FetchRequest<NotesV3.Note>(sortDescriptors: [SortKey("title")])).map {
            "\($0.title) \($0.summary) \($0.rating) \($0.folder?.name ?? "-")"
        }
    }

    @Test func aCrashAnywhereInAMigrationLeavesOneVersionWhole() throws {
        let clean = FaultInjectingFileSystem()
        try Self.makeV1(clean)
        let before = clean.callCount
        let migrated = try Store(path: Self.path, url: nil, migrationPlan: NotesPlan.self, options: Self.options(clean), progress: nil)
        let expected = try Self.v3Notes(migrated)
        #expect(expected.count == 12)
        try migrated.close()
        let after = clean.callCount

        var images = 0
        var versionsSeen: [String: Int] = [:]
        for point in (before + 1)...after {
            let fs = FaultInjectingFileSystem()
            try Self.makeV1(fs)
            fs.crash(at: fs.callCount + (point - before))
            _ = try? Store(path: Self.path, url: nil, migrationPlan: NotesPlan.self, options: Self.options(fs), progress: nil)
            for mode in [CrashMode.dropUnsynced, .applyAll, .random(seed: UInt64(point))] {
                images += 1
                let where_ = "crash point \(point - before)/\(after - before), \(mode)"
                let image = FaultInjectingFileSystem(files: fs.crashImage(mode))
                // What the crash left: a report reads it without changing it (but a committed
                // swap is finished first, as any open does).
                try StoreFileSwap.recover(Self.path, image)
                let report: MigrationReport
                do {
                    var o = Self.options(image)
                    o.readOnly = true
                    report = try Store.migrate(path: Self.path, plan: NotesPlan.self, options: o, dryRun: true, progress: nil)
                } catch {
                    Issue.record("the crashed store does not open: \(error) — \(where_)")
                    continue
                }
                versionsSeen[report.storeVersion.map { "\($0)" } ?? "?", default: 0] += 1
                if ![SchemaVersion(1, 0, 0), SchemaVersion(2, 0, 0), SchemaVersion(3, 0, 0)].contains(report.storeVersion) {
                    Issue.record("the crashed store is at no version of the plan (\(String(describing: report.storeVersion))) — \(where_)")
                }
                do {
                    let store = try Store(path: Self.path, url: nil, migrationPlan: NotesPlan.self, options: Self.options(image), progress: nil)
                    #expect(try Self.v3Notes(store) == expected, "\(where_)")
                    #expect(try store.verify().isEmpty, "integrity — \(where_)")
                    #expect(!image.fileExists(StoreFileSwap.staging(Self.path)) && !image.fileExists(StoreFileSwap.marker(Self.path)), "\(where_)")
                } catch {
                    Issue.record("finishing the migration failed: \(error) — \(where_)")
                }
            }
        }
        print("migration crash campaign: \(after - before) crash points, \(images) images, versions found \(versionsSeen.sorted { $0.key < $1.key })")
        #expect(versionsSeen.count >= 2)
    }
}
