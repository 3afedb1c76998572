// Schema versions across devices (Format/sync.md § Schema versions): a device migrated to a
// newer schema and one still on the older one sync the same objects. The older one pushes
// patches of the fields it knows and ignores the fields it does not, so it never nulls them; a
// device whose schema gives a field another kind is refused with a typed error, and nothing of
// its push is written.

import DocStore
import DocStoreSyncWire
import DocStoreTestSupport
import Foundation
import Testing
@testable import DocStoreSync

enum NotesSyncV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static var models: [ManagedObject.Type] { [Note.self] }
    @Model final class Note: ManagedObject {
        var title: String = ""
        init(title: String) { self.title = title }
    }
}

enum NotesSyncV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static var models: [ManagedObject.Type] { [Note.self] }
    @Model final class Note: ManagedObject {
        var title: String = ""
        var color: String?
        init(title: String) { self.title = title }
    }
}

enum NotesSyncPlan: SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { [NotesSyncV1.self, NotesSyncV2.self] }
    static var stages: [MigrationStage] { [.lightweight(fromVersion: NotesSyncV1.self, toVersion: NotesSyncV2.self)] }
}

/// A version whose `color` is a number: the server, which knows `color` as a string, refuses it.
enum NotesSyncClash: VersionedSchema {
    static let versionIdentifier = SchemaVersion(3, 0, 0)
    static var models: [ManagedObject.Type] { [Note.self] }
    @Model final class Note: ManagedObject {
        var title: String = ""
        var color: Int = 0
        init(title: String) { self.title = title }
    }
}

@Suite(.serialized) struct SyncSchemaVersionTests {
    // one per test (swift-testing makes a suite value for each): removed when the test ends
    let temporary = TemporaryDirectory("sync-schema")

    func temporaryURL(_ name: String) -> URL {
        URL(fileURLWithPath: temporary.file("\(name).docstore"))
    }

    @Test func aDeviceOneSchemaVersionBehindKeepsWorkingOnTheFieldsItKnows() async throws {
        let server = try ServerProcess(postgres: try TestPostgres.newDatabase())
        defer { server.stop() }
        let storeA = try Store(url: temporaryURL("a"), models: NotesSyncV1.models)
        let a = try SyncEngine(store: storeA, server: server.url, device: "a")
        let contextA = Context(store: storeA)
        let note = NotesSyncV1.Note(title: "first")
        try contextA.insert(note)
        try contextA.save()
        try await a.syncNow()

        // b starts on version 1, syncs, then is migrated to version 2 (a lightweight stage).
        let urlB = temporaryURL("b")
        do {
            let old = try Store(url: urlB, models: NotesSyncV1.models)
            try await SyncEngine(store: old, server: server.url, device: "b").syncNow()
            try old.close()
        }
        let storeB = try Store(url: urlB, migrationPlan: NotesSyncPlan.self)
        #expect(storeB.schemaVersionNumber > storeA.schemaVersionNumber)
        let b = try SyncEngine(store: storeB, server: server.url, device: "b")
        let contextB = Context(store: storeB)
        let onB = try #require(try contextB.fetch(NotesSyncV2.Note.self).first)
        #expect(onB.title == "first" && onB.color == nil)
        onB.color = "red"
        onB.title = "from b"
        try contextB.save()
        try await b.syncNow()

        // a, one version behind, edits the title later; it pulls b's entry with a field it does
        // not know, and ignores it.
        try await Task.sleep(for: .milliseconds(100))
        try await a.syncNow()
        let laterA = Context(store: storeA)
        let onA = try #require(try laterA.fetch(NotesSyncV1.Note.self).first)
        #expect(onA.title == "from b")
        onA.title = "from a"
        try laterA.save()
        #expect(try await a.syncNow().conflicts.isEmpty)
        try await b.syncNow()

        let freshB = Context(store: storeB)
        let result = try #require(try freshB.fetch(NotesSyncV2.Note.self).first)
        #expect(result.title == "from a")
        #expect(result.color == "red")          // not nulled by the older device
        #expect(try Context(store: storeA).fetch(NotesSyncV1.Note.self).map(\.title) == ["from a"])
        #expect(try storeA.verify().isEmpty && storeB.verify().isEmpty)

        // A third device whose schema makes `color` a number is refused, typed, before anything
        // of its push is written; the others go on.
        let storeC = try Store(url: temporaryURL("c"), models: NotesSyncClash.models)
        let c = try SyncEngine(store: storeC, server: server.url, device: "c")
        let contextC = Context(store: storeC)
        try contextC.insert(NotesSyncClash.Note(title: "from c"))
        try contextC.save()
        do {
            try await c.syncNow()
            Issue.record("a push with an incompatible schema was accepted")
        } catch {
            #expect(error.code == .server)
            #expect(error.serverError?.code == .schemaIncompatible)
            #expect(error.message.contains("color"))
        }
        #expect(await c.pendingCount == 1)      // kept, to push once the app is fixed
        try await a.syncNow()
        #expect(try Context(store: storeA).fetch(NotesSyncV1.Note.self).map(\.title) == ["from a"])
    }
}
