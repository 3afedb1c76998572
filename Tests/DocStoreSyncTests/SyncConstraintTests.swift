// Constraints across devices (Format/sync.md § Constraints): unique attributes when two
// different objects come to hold one value, deny rules and required relationships against a
// delete made elsewhere.

import DocStore
import DocStoreSyncTestModels
import DocStoreSyncWire
import Foundation
import Testing
@testable import DocStoreSync

@Suite(.serialized) struct SyncConstraintTests {
    let server: ServerProcess

    init() throws {
        server = try ServerProcess(postgres: try TestPostgres.newDatabase())
    }

    @Test func aRenameOntoAValueCreatedElsewhereLeavesOneObject() async throws {
        defer { server.stop() }
        let a = try Device("a", server: server.url), b = try Device("b", server: server.url)
        let old = Tag(name: "old")
        let na = Note(title: "a's note")
        try a.context.insert(na)
        na.tags.insert(old)
        try a.context.save()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        old.name = "work"                       // a renames its tag onto "work"
        try a.context.save()
        let nb = Note(title: "b's note")
        try b.context.insert(nb)
        nb.tags.insert(Tag(name: "work"))       // b creates "work": another global ID
        try b.context.save()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        for device in [a, b] {
            let context = Context(store: device.store)
            let tags = try context.fetch(Tag.self)
            print(device.name, tags.map(\.name), tags.map { $0.notes.map(\.title) })
            #expect(tags.map(\.name) == ["work"], "\(device.name)")
            #expect(Set(tags.first?.notes.map(\.title) ?? []) == ["a's note", "b's note"], "\(device.name)")
            #expect(try device.store.verify().isEmpty)
        }
        #expect(try await a.snapshot() == (try await b.snapshot()))
    }

    /// RA6: a deletes an empty project (its deny rule lets it go) while b, offline, puts a task
    /// in it — where b itself could no longer delete it. The delete wins (M2) on both: the
    /// task stays, out of the project; nothing is stuck and both stores pass the full check.
    @Test func aDeleteADenyRuleWouldRefuseHereStillApplies() async throws {
        defer { server.stop() }
        let a = try Device("a", server: server.url), b = try Device("b", server: server.url)
        try a.context.insert(SyncModels.Project(name: "p"))
        try a.context.save()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        try a.context.delete(try #require(try a.context.fetch(SyncModels.Project.self).first))
        try a.context.save()
        let onB = try #require(try b.context.fetch(SyncModels.Project.self).first)
        let task = SyncModels.Task(title: "in p")
        try b.context.insert(task)
        task.project = onB
        try b.context.save()
        try b.context.delete(onB)
        #expect(throws: DocStoreError.self) { try b.context.save() }     // the rule holds locally
        b.context.rollback()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        try await a.sync.syncNow()
        for device in [a, b] {
            let context = Context(store: device.store)
            #expect(try context.fetch(SyncModels.Project.self).isEmpty, "\(device.name)")
            let tasks = try context.fetch(SyncModels.Task.self)
            #expect(tasks.map(\.title) == ["in p"], "\(device.name)")
            #expect(tasks.first?.project == nil, "\(device.name)")
            #expect(try device.store.verify().isEmpty, "\(device.name)")
        }
        #expect(try await a.snapshot() == (try await b.snapshot()))
    }

    /// G3: a tag renamed away from "green" keeps the ID "green" gave it; a new "green" made on
    /// the same device gets another ID, so both tags reach the other device.
    @Test func aValueCreatedAgainAfterARenameAwayIsANewObject() async throws {
        defer { server.stop() }
        let a = try Device("a", server: server.url), b = try Device("b", server: server.url)
        let first = Tag(name: "green")
        try a.context.insert(first)
        try a.context.save()
        try await a.sync.syncNow()
        first.name = "red"
        try a.context.save()
        try a.context.insert(Tag(name: "green"))
        try a.context.save()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        for device in [a, b] {
            #expect(try Context(store: device.store).fetch(Tag.self).map(\.name).sorted() == ["green", "red"], "\(device.name)")
            #expect(try device.store.verify().isEmpty)
        }
        #expect(try await a.snapshot() == (try await b.snapshot()))
    }
}
