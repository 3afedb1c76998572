// Ordered relationships across devices (Format/sync.md § Ordered relationships, OR1–OR3): an
// order made on one device is the order everywhere; concurrent inserts and moves on two devices
// end in one order on both; a member that arrives after the order that lists it takes its
// place; a many-to-many ordered side (playlists) follows the same rules. The convergence test
// mixes ordered moves into its random edits; these pin each rule down on its own.

import DocStore
import DocStoreSyncWire
import Foundation
import Testing
@testable import DocStoreSync

@Suite(.serialized) struct SyncOrderTests {
    let server: ServerProcess

    init() throws {
        server = try ServerProcess(postgres: try TestPostgres.newDatabase())
    }

    /// The item titles of the checklist named `name` on `device`, in order (a fresh context).
    func items(_ name: String, on device: Device) throws -> [String] {
        let context = Context(store: device.store)
        return try context.fetch(Checklist.self).first { $0.name == name }?.items.map(\.title) ?? []
    }

    func checklist(_ name: String, _ titles: [String], on device: Device) throws -> Checklist {
        let list = Checklist(name: name)
        try device.context.insert(list)
        for t in titles {
            let item = Item(title: t)
            try device.context.insert(item)
            list.items.append(item)
        }
        try device.context.save()
        return list
    }

    /// Devices a and b, and a checklist a made and both have synced: a's object and b's.
    func checklistOnTwoDevices(_ name: String, _ titles: [String]) async throws -> (Device, Device, Checklist, Checklist) {
        let a = try Device("a", server: server.url), b = try Device("b", server: server.url)
        let list = try checklist(name, titles, on: a)
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        return (a, b, list, try #require(try b.context.fetch(Checklist.self).first { $0.name == name }))
    }

    @Test func anOrderMadeOnOneDeviceIsTheOrderOnEveryDevice() async throws {
        let (a, b, list, onB) = try await checklistOnTwoDevices("trip", ["passport", "tickets", "charger"])
        #expect(try items("trip", on: b) == ["passport", "tickets", "charger"])

        // A move on b (no member added or removed) reaches a.
        onB.items = [onB.items[2], onB.items[0], onB.items[1]]
        try b.context.save()
        try await b.sync.syncNow()
        try await a.sync.syncNow()
        #expect(try items("trip", on: a) == ["charger", "passport", "tickets"])
        #expect(list.name == "trip")
        #expect(try await a.snapshot() == (try await b.snapshot()))
        for device in [a, b] { #expect(try device.store.verify().isEmpty) }
    }

    @Test func concurrentInsertsAndMovesOnTwoDevicesEndInOneOrder() async throws {
        let (a, b, list, onB) = try await checklistOnTwoDevices("week", ["mon", "tue", "wed"])

        // Offline: a inserts "sun" first; b, later, appends "thu" and moves "wed" to the front.
        let sun = Item(title: "sun")
        try a.context.insert(sun)
        list.items.insert(sun, at: 0)
        try a.context.save()
        try await Task.sleep(for: .milliseconds(100))
        let thu = Item(title: "thu")
        try b.context.insert(thu)
        onB.items = [onB.items[2], onB.items[0], onB.items[1], thu]
        try b.context.save()

        try await a.sync.syncNow()
        try await b.sync.syncNow()
        try await a.sync.syncNow()
        // b's order is the later one and wins whole (OR1); "sun", which b's order does not
        // list, follows the listed members.
        let expected = ["wed", "mon", "tue", "thu", "sun"]
        #expect(try items("week", on: a) == expected)
        #expect(try items("week", on: b) == expected)
        #expect(try await a.snapshot() == (try await b.snapshot()))
    }

    @Test func membersNoOrderListsFollowByGlobalIDTheSameOnEveryDevice() async throws {
        let (a, b, onA, onB) = try await checklistOnTwoDevices("base", ["x"])
        // Offline, a and b each append two items; the later order (b's) lists neither of a's.
        for t in ["a1", "a2"] {
            let item = Item(title: t)
            try a.context.insert(item)
            onA.items.append(item)
        }
        try a.context.save()
        try await Task.sleep(for: .milliseconds(100))
        for t in ["b1", "b2"] {
            let item = Item(title: t)
            try b.context.insert(item)
            onB.items.append(item)
        }
        try b.context.save()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        try await a.sync.syncNow()
        let onEach = [try items("base", on: a), try items("base", on: b)]
        #expect(onEach[0] == onEach[1])
        #expect(Array(onEach[0].prefix(3)) == ["x", "b1", "b2"])
        #expect(Set(onEach[0].suffix(2)) == ["a1", "a2"])
        #expect(try await a.snapshot() == (try await b.snapshot()))
    }

    @Test func anItemMovedIntoAListElsewhereTakesItsPlace() async throws {
        let a = try Device("a", server: server.url), b = try Device("b", server: server.url)
        let home = try checklist("home", ["dishes", "laundry"], on: a)
        let work = try checklist("work", ["report"], on: a)
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        // The move changes the item's to-one (which syncs membership) and home's order.
        let report = try #require(work.items.first)
        home.items.insert(report, at: 1)
        try a.context.save()
        #expect(work.items.isEmpty)
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        #expect(try items("home", on: b) == ["dishes", "report", "laundry"])
        #expect(try items("work", on: b) == [])

        #expect(try await a.snapshot() == (try await b.snapshot()))
    }

    @Test func aMemberThatArrivesWithoutItsListFollowsTheRecordedOrder() async throws {
        let (a, b, list, onB) = try await checklistOnTwoDevices("shop", ["x", "y"])
        // Offline: b appends "z" first; a reverses the list later and pushes first.
        let z = Item(title: "z")
        try b.context.insert(z)
        onB.items.append(z)
        try b.context.save()
        try await Task.sleep(for: .milliseconds(100))
        list.items = [list.items[1], list.items[0]]
        try a.context.save()
        try await a.sync.syncNow()
        // b's order loses to a's (olderEdit); its item joins the list all the same. The server
        // changes nothing of the list itself, so a pulls z's entry alone and places z by the
        // order it recorded from the server (OR2).
        let summary = try await b.sync.syncNow()
        #expect(summary.conflicts.contains { $0.kind == .olderEdit && $0.field == "items#order" })
        try await a.sync.syncNow()
        #expect(try items("shop", on: a) == ["y", "x", "z"])
        #expect(try items("shop", on: b) == ["y", "x", "z"])
        #expect(try await a.snapshot() == (try await b.snapshot()))
    }

    @Test func anOrderEditThatLostIsUndoneEvenWhenTheServersOrderIsTheOneRecorded() async throws {
        let (a, b, list, onB) = try await checklistOnTwoDevices("pack", ["x", "y"])
        // b reverses the list offline; a, later, reverses it and puts it back, pushing both.
        onB.items = onB.items.reversed()
        try b.context.save()
        try await Task.sleep(for: .milliseconds(100))
        for _ in 0..<2 {
            list.items = list.items.reversed()
            try a.context.save()
            try await a.sync.syncNow()
        }
        // The server's order is again the one b recorded; b's edit lost and must not stay (OR4).
        let summary = try await b.sync.syncNow()
        #expect(summary.conflicts.contains { $0.kind == .olderEdit && $0.field == "items#order" })
        #expect(try items("pack", on: b) == ["x", "y"])
        try await a.sync.syncNow()
        #expect(try items("pack", on: a) == ["x", "y"])
        #expect(try await a.snapshot() == (try await b.snapshot()))
    }

    @Test func aPlaylistsOrderSyncsFromItsSideWhileTheClipsSideSyncsTheLinks() async throws {
        let a = try Device("a", server: server.url), b = try Device("b", server: server.url)
        let clips = ["one", "two", "three"].map { Clip(title: $0) }
        for c in clips { try a.context.insert(c) }
        let playlist = Playlist(name: "mix")
        try a.context.insert(playlist)
        playlist.clips = [clips[2], clips[0], clips[1]]
        try a.context.save()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        func titles(_ device: Device) throws -> [String] {
            let context = Context(store: device.store)     // kept while the relationship is read
            return try context.fetch(Playlist.self).first?.clips.map(\.title) ?? []
        }
        #expect(try titles(b) == ["three", "one", "two"])

        // a removes "three"; later, b (which still has it) moves "one" last. b's order wins
        // whole, a's removal (a link of the clips' side) stands: ["two", "one"] on both.
        playlist.clips.removeAll { $0.title == "three" }
        try a.context.save()
        try await Task.sleep(for: .milliseconds(100))
        let onB = Context(store: b.store)
        let bList = try #require(try onB.fetch(Playlist.self).first)
        bList.clips = [bList.clips[0], bList.clips[2], bList.clips[1]]
        try onB.save()
        try await b.sync.syncNow()
        try await a.sync.syncNow()
        try await b.sync.syncNow()
        #expect(try titles(a) == ["two", "one"])
        #expect(try titles(b) == ["two", "one"])
        #expect(try await a.snapshot() == (try await b.snapshot()))
        for device in [a, b] { #expect(try device.store.verify().isEmpty) }
    }

    @Test func theCanonicalOrderListsFirstThenSortsTheRestByGlobalID() {
        let ids: [UInt64: UUID] = [
            1: UUID(uuidString: "00000000-0000-0000-0000-00000000000C")!,
            2: UUID(uuidString: "00000000-0000-0000-0000-00000000000A")!,
            3: UUID(uuidString: "00000000-0000-0000-0000-00000000000B")!,
            4: UUID(uuidString: "00000000-0000-0000-0000-00000000000D")!,
        ]
        // 3 and 1 are listed (3 twice; a listed ID of no member is passed over); 2 and 4 are
        // not and follow by ID; 5 has no global ID yet and goes last.
        let order = [ids[3]!, UUID(), ids[1]!, ids[3]!]
        #expect(SyncReplica.canonicalOrder([1, 2, 3, 5, 4], following: order, ids: ids) == [3, 1, 2, 4, 5])
        #expect(SyncReplica.canonicalOrder([4, 2], following: [], ids: ids) == [2, 4])
    }
}
