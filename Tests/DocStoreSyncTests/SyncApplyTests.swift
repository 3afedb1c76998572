// A device applying pages of the feed (SyncReplica+Apply, Format/sync.md § Applying), without a
// server: pages made by hand, for the cases the convergence test found — several entries of one
// object collapsed into one page, a link to an object the page deletes and brings back, a live
// entry for an object deleted here.

import DocStore
import DocStoreSyncWire
import Foundation
import Testing
@testable import DocStoreSync

@Suite struct SyncApplyTests {
    /// A device whose server is never called: these tests apply pages directly.
    func device() throws -> Device { try Device("d", server: URL(string: "http://127.0.0.1:9")!) }

    /// Captures and acknowledges the device's saves, as a push the server answered would.
    func pushed(_ d: Device) async throws {
        let replica = await d.sync.replicaForTests
        let (_, through) = try replica.capture()
        if let through { try replica.acknowledge(through: through) }
    }

    func ts(_ ms: Int64) -> HybridTimestamp { HybridTimestamp(milliseconds: ms, counter: 0) }

    func noteEntry(_ seq: Int64, _ id: UUID, title: String, links: [ClockedLink] = []) -> FeedEntry {
        FeedEntry(seq: seq, entity: "Note", id: id, deleted: false,
                  fields: ["title": ClockedValue(value: .string(title), clock: ts(1_000), device: "e")], links: links, device: "e")
    }

    func tagEntry(_ seq: Int64, _ id: UUID, deleted: Bool = false) -> FeedEntry {
        FeedEntry(seq: seq, entity: "Tag", id: id, deleted: deleted,
                  fields: deleted ? [:] : ["name": ClockedValue(value: .string("t"), clock: ts(3_000), device: "e")], links: [], device: "e",
                  deletedClock: deleted ? ts(2_000) : nil)
    }

    func link(_ target: UUID, at ms: Int64) -> ClockedLink {
        ClockedLink(relationship: "tags", target: target, present: true, clock: ts(ms), device: "e")
    }

    func apply(_ d: Device, _ entries: [FeedEntry]) async throws {
        let page = PullResponse(entries: entries, cursor: entries.last?.seq ?? 0, hasMore: false, serverTime: 0)
        try await d.sync.replicaForTests.apply(page, pending: SyncReplica.Pending([]))
    }

    /// Seed 4 of the convergence test: a note's link came in one entry, a later entry of the
    /// same note in the same page had none, and the link's target (known here) was not looked
    /// up — the link became a placeholder that never resolved.
    @Test func aLinkFromAnEarlierEntryOfTheSameObjectInThePageIsApplied() async throws {
        let d = try device()
        try d.context.insert(Tag(name: "t"))
        try d.context.save()
        try await pushed(d)
        let tagID = GlobalIDs.make(entity: "Tag", identityAttribute: "name", values: ["name": .string("t")])
        let note = UUID()
        try await apply(d, [noteEntry(1, note, title: "first", links: [link(tagID, at: 1_000)]), noteEntry(2, note, title: "second")])
        let context = Context(store: d.store)      // kept: a context holds its objects' relationships
        let notes = try context.fetch(Note.self)
        #expect(notes.map(\.title) == ["second"])
        #expect(notes.first?.tags.map(\.name) == ["t"])
        #expect(try d.store.verify().isEmpty)
    }

    /// A link made before its target's delete went with the delete (M5): when the same page
    /// brings the ID back, the new object starts without it.
    @Test func aLinkToAnObjectThePageDeletesAndBringsBackIsDropped() async throws {
        let tag = UUID(), note = UUID()
        let entries = [noteEntry(1, note, title: "n", links: [link(tag, at: 1_000)]), tagEntry(2, tag), tagEntry(3, tag, deleted: true), tagEntry(4, tag)]
        let collapsed = SyncReplica.collapse(entries)
        #expect(collapsed.first { $0.entry.id == note }?.links.isEmpty == true)
        #expect(collapsed.first { $0.entry.id == tag }?.revived == true)

        let d = try device()
        try await apply(d, entries)
        let context = Context(store: d.store)
        let notes = try context.fetch(Note.self)
        #expect(notes.first?.tags.isEmpty == true)
        #expect(try Context(store: d.store).fetch(Tag.self).count == 1)
        #expect(try d.store.verify().isEmpty)
    }

    /// AP5: a live entry for an object this device deleted (its delete acknowledged) is the
    /// server's word that the object lives: it is inserted again here.
    @Test func aLiveEntryForAnObjectDeletedHereBringsItBack() async throws {
        let d = try device()
        let tag = Tag(name: "t")
        try d.context.insert(tag)
        try d.context.save()
        try await pushed(d)
        try d.context.delete(tag)
        try d.context.save()
        try await pushed(d)
        let tagID = GlobalIDs.make(entity: "Tag", identityAttribute: "name", values: ["name": .string("t")])
        try await apply(d, [tagEntry(7, tagID)])
        #expect(try Context(store: d.store).fetch(Tag.self).map(\.name) == ["t"])
        #expect(try d.store.verify().isEmpty)
    }
}
