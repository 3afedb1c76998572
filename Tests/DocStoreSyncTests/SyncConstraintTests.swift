// Constraints across devices (Format/sync.md § Constraints): unique attributes when two
// different objects come to hold one value, deny rules and required relationships against a
// delete made elsewhere.

import DocStore
import DocStoreSyncTestModels
import DocStoreSyncWire
import DocStoreTestSupport
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

    /// G1 and U1 with a compound constraint (one title per checklist): a and b add "milk" to
    /// the same list offline — one item after sync, with one ID; then a renames "eggs" onto
    /// "tea" while b adds "tea": the two become one, the same on both, and both pass the check.
    @Test func oneTitlePerListHoldsAcrossDevices() async throws {
        defer { server.stop() }
        let a = try Device("a", server: server.url), b = try Device("b", server: server.url)
        func add(_ title: String, to list: SyncModels.Checklist, on device: Device) throws -> SyncModels.Item {
            let item = SyncModels.Item(title: title)
            try device.context.insert(item)
            list.items.append(item)
            try device.context.save()
            return item
        }
        func titles(_ device: Device) throws -> [String] {
            let context = Context(store: device.store)
            return try context.fetch(SyncModels.Checklist.self).first?.items.map(\.title).sorted() ?? []
        }
        let list = SyncModels.Checklist(name: "shop")
        try a.context.insert(list)
        let eggs = try add("eggs", to: list, on: a)
        for device in [a, b] { try await device.sync.syncNow() }
        let onB = try #require(try b.context.fetch(SyncModels.Checklist.self).first)
        _ = try add("milk", to: list, on: a)
        _ = try add("milk", to: onB, on: b)
        for device in [a, b, a] { try await device.sync.syncNow() }
        for device in [a, b] { #expect(try titles(device) == ["eggs", "milk"], "\(device.name)") }
        #expect(try await a.snapshot() == (try await b.snapshot()))

        eggs.title = "tea"
        try a.context.save()
        _ = try add("tea", to: onB, on: b)
        for device in [a, b, a, b] { try await device.sync.syncNow() }
        for device in [a, b] {
            #expect(try titles(device) == ["milk", "tea"], "\(device.name)")
            let problems = try device.store.verify()
            #expect(problems.isEmpty, "\(device.name): \(problems.prefix(3))")
            #expect(await device.sync.pendingCount == 0, "\(device.name)")
        }
        #expect(try await a.snapshot() == (try await b.snapshot()))
    }

    /// CP4 and SE4: a deletes a folder (cascade) while b, offline, adds a note to it. b's one
    /// round pushes the note, applies the delete — its cascade deletes the note here — and
    /// pushes that delete in the same round, so a, syncing once after, never keeps the note.
    @Test func aCascadeOfARemoteDeleteIsPushedInTheSameRound() async throws {
        defer { server.stop() }
        let a = try Device("a", server: server.url), b = try Device("b", server: server.url)
        try a.context.insert(Folder(name: "Work"))
        try a.context.save()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        let work = try #require(try b.context.fetch(Folder.self).first)
        try b.context.insert(Note(title: "added offline", folder: work))
        try b.context.save()
        try a.context.delete(try #require(try a.context.fetch(Folder.self).first))
        try a.context.save()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        #expect(await b.sync.pendingCount == 0)
        try await a.sync.syncNow()
        for device in [a, b] {
            let context = Context(store: device.store)
            #expect(try context.fetch(Note.self).isEmpty, "\(device.name) keeps the note")
            #expect(try context.fetch(Folder.self).isEmpty, "\(device.name)")
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

    /// Projects g, f and x and a task in g, on devices a, b and c.
    func projectsOnThreeDevices() async throws -> [Device] {
        let devices = try ["a", "b", "c"].map { try Device($0, server: server.url) }
        let a = devices[0]
        var projects: [String: SyncModels.Project] = [:]
        for name in ["g", "f", "x"] {
            projects[name] = SyncModels.Project(name: name)
            try a.context.insert(projects[name]!)
        }
        let task = SyncModels.Task(title: "t")
        try a.context.insert(task)
        task.project = projects["g"]
        try a.context.save()
        for device in devices { try await device.sync.syncNow() }
        return devices
    }

    func project(of device: Device) throws -> String? {
        let context = Context(store: device.store)
        return try context.fetch(SyncModels.Task.self).first?.project?.name
    }

    /// `deleter` deletes project f; after rounds a, b, c, a every device's task is in
    /// `expected` and the replicas are equal.
    func deleteProjectF(on deleter: Device, thenExpect expected: String?, _ devices: [Device]) async throws {
        try deleter.context.delete(try #require(try deleter.context.fetch(SyncModels.Project.self).first { $0.name == "f" }))
        try deleter.context.save()
        for device in [devices[0], devices[1], devices[2], devices[0]] { try await device.sync.syncNow() }
        for device in devices { #expect(try project(of: device) == expected, "\(device.name)") }
        #expect(try await devices[0].snapshot() == (try await devices[1].snapshot()))
        #expect(try await devices[0].snapshot() == (try await devices[2].snapshot()))
    }

    func move(on device: Device, to name: String) throws {
        let task = try #require(try device.context.fetch(SyncModels.Task.self).first)
        task.project = try device.context.fetch(SyncModels.Project.self).first { $0.name == name }
        try device.context.save()
    }

    /// M5, RA3: c moves the task to f; a, which has not seen that, deletes f (empty there, so
    /// its deny rule lets it go). The server nils the task's project and says so in the feed;
    /// a, applying c's move to a project it deleted itself, nils it too rather than keep g.
    @Test func aMoveOntoAnObjectDeletedHereIsNilHereToo() async throws {
        defer { server.stop() }
        let devices = try await projectsOnThreeDevices()
        let (a, c) = (devices[0], devices[2])
        try move(on: c, to: "f")
        try await c.sync.syncNow()
        try await deleteProjectF(on: a, thenExpect: nil, devices)
    }

    /// M5 keeps the reference's own clock: b saw c's move to f and, offline, moved the task on
    /// to x; a then deletes f (later by the clock). b's move came after the edit that set f,
    /// so it wins over the nil the delete left, everywhere.
    @Test func aMoveAwayFromAnObjectDeletedLaterElsewhereStands() async throws {
        defer { server.stop() }
        let devices = try await projectsOnThreeDevices()
        let (a, b, c) = (devices[0], devices[1], devices[2])
        try move(on: c, to: "f")
        try await c.sync.syncNow()
        try await b.sync.syncNow()
        try move(on: b, to: "x")
        try await Task.sleep(for: .milliseconds(100))
        try await deleteProjectF(on: a, thenExpect: "x", devices)
    }

    /// Accounts that deny their delete while they have invoices; an invoice must have an
    /// account (a required to-one, which `@Model` cannot declare: a `Schema`).
    static let billing = Schema(entities: [
        EntityDescription(name: "Account", attributes: [AttributeDescription(name: "name", type: .string)], relationships: [
            RelationshipDescription(name: "invoices", destination: "Invoice", inverse: "account", isToMany: true, deleteRule: .deny),
        ]),
        EntityDescription(name: "Invoice", attributes: [AttributeDescription(name: "number", type: .int64)], relationships: [
            RelationshipDescription(name: "account", destination: "Account", inverse: "invoices", isOptional: false),
        ]),
    ])

    /// RA6 and M6 with a required to-one: a deletes an account that has no invoice yet while b,
    /// offline, bills it. The delete wins (M2); the server stores the invoice without its
    /// account and tells b (`linkToDeletedObject` on `account`); every replica holds the invoice
    /// with no account, the same; b's app is told at its next save of the invoice that it needs
    /// one, and once it gives one, that reaches a too.
    @Test func aRequiredRelationshipEmptiedByADeleteElsewhereIsReportedAndMendable() async throws {
        defer { server.stop() }
        let dir = TemporaryDirectory("billing")
        defer { withExtendedLifetime(dir) {} }
        func open(_ name: String) throws -> (Store, SyncEngine) {
            let store = try Store(url: URL(fileURLWithPath: dir.file("billing-\(name).docstore")), schema: Self.billing)
            return (store, try SyncEngine(store: store, server: server.url, device: name))
        }
        let (storeA, a) = try open("a"), (storeB, b) = try open("b")
        let contextA = Context(store: storeA), contextB = Context(store: storeB)
        let acme = try contextA.insertObject(forEntityName: "Account")
        try acme.setValue("Acme", forKey: "name")
        try contextA.save()
        try await a.syncNow()
        try await b.syncNow()

        try contextA.delete(acme)
        try contextA.save()                                  // no invoices here: the deny rule lets it go
        let onB = try #require(try contextB.fetch(entityName: "Account").first)
        let invoice = try contextB.insertObject(forEntityName: "Invoice")
        try invoice.setValue(Int64(1), forKey: "number")
        try invoice.setValue(onB, forKey: "account")
        try contextB.save()
        try await a.syncNow()
        let pushed = try await b.syncNow()
        #expect(pushed.conflicts.contains { $0.kind == .linkToDeletedObject && $0.field == "account" })
        try await a.syncNow()

        for (name, store) in [("a", storeA), ("b", storeB)] {
            let context = Context(store: store)
            #expect(try context.fetch(entityName: "Account").isEmpty, "\(name)")
            let invoices = try context.fetch(entityName: "Invoice")
            #expect(invoices.count == 1, "\(name)")
            #expect(try invoices.first?.value(forKey: "account") == nil, "\(name)")
            #expect(try store.verify().isEmpty, "\(name)")
        }
        #expect(try await a.snapshot() == (try await b.snapshot()))

        // b's app: a save of the invoice without an account is refused, naming it; with a new
        // account it goes through and reaches a.
        let local = Context(store: storeB)
        let orphan = try #require(try local.fetch(entityName: "Invoice").first)
        try orphan.setValue(Int64(2), forKey: "number")
        let refused = #expect(throws: DocStoreError.self) { try local.save() }
        #expect(refused?.code == .validation && "\(refused.map { "\($0)" } ?? "")".contains("account"), "\(String(describing: refused))")
        let other = try local.insertObject(forEntityName: "Account")
        try other.setValue("Globex", forKey: "name")
        try orphan.setValue(other, forKey: "account")
        try local.save()
        try await b.syncNow()
        try await a.syncNow()
        let onA = Context(store: storeA)
        let mended = try #require(try onA.fetch(entityName: "Invoice").first)
        #expect(try (mended.value(forKey: "account") as? ManagedObject)?.value(forKey: "name") as? String == "Globex")
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
