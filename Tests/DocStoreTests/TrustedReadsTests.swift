// A save that trusts its reads (Context+Conflicts K6): when nothing committed since the moment
// every row a context read is current at, its save does not read those rows again for K1. These
// tests pin when that moment holds and when it must not: another context's commit (even of an
// unrelated object), a commit that did not settle the row cache, a reopen — and that after any
// of them a conflict is still found, however many of the context's own saves follow.

import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore
import DocStoreTestSupport

/// A shelf and its books, each side `.noAction`: deleting a book leaves the shelf's link to it
/// stored (Core Data's noAction: the app keeps the graph whole).
@Model final class K6Shelf: ManagedObject {
    var name: String = ""
    @Relationship(deleteRule: .noAction, inverse: \K6Book.shelves) var books: Set<K6Book> = []
}

@Model final class K6Book: ManagedObject {
    var title: String = ""
    @Relationship(deleteRule: .noAction) var shelves: Set<K6Shelf> = []
}

@Suite struct TrustedReadsTests {
    /// A store with notes "n0"…"n2" and their IDs.
    func seeded(_ store: Store) throws -> [ObjectID] {
        let c = Context(store: store)
        let notes = (0..<3).map { Note(title: "n\($0)") }
        for n in notes { try c.insert(n) }
        try c.save()
        return notes.compactMap(\.objectID)
    }

    func note(_ id: ObjectID, in c: Context) throws -> Note {
        try #require(try c.existingObject(with: id) as? Note)
    }

    @Test func aContextsOwnSavesKeepItsReadsCurrent() throws {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let ids = try seeded(store)
        let a = Context(store: store)
        #expect(a.readsCurrentAt == store.settledMoment)
        for round in 1...2 {
            try note(ids[0], in: a).rating = Int16(round)
            try a.delete(try note(ids[round], in: a))
            try a.save()
            // Each save was made on the commit its reads were current at: it moves them on.
            #expect(a.readsCurrentAt == store.settledMoment)
        }
        #expect(try note(ids[0], in: Context(store: store)).rating == 2)
        #expect(try Context(store: store).count(for: FetchRequest<Note>()) == 1)
    }

    /// A reads n0; B saves n0; A saves n1 only (no conflict: it did not change n0) — on a base
    /// it did not read at, so it must stop trusting its reads. A then changes n0: the conflict
    /// with B is found. (Had A's own save moved its moment on, this save would skip n0's row.)
    @Test func anotherContextsCommitEndsTheTrustForGood() throws {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let ids = try seeded(store)
        let a = Context(store: store)
        let mine = try note(ids[0], in: a)
        _ = mine.title
        let b = Context(store: store)
        try note(ids[0], in: b).title = "B"
        try b.save()
        try note(ids[1], in: a).title = "A1"
        try a.save()
        #expect(a.readsCurrentAt == nil)
        mine.title = "A0"
        let error = #expect(throws: DocStoreError.self) { try a.save() }
        #expect(error?.code == .mergeConflict)
        #expect(try note(ids[0], in: Context(store: store)).title == "B")
    }

    /// A commit that did not go through a save or a batch (so the row cache was not told) is
    /// never trusted: a context made after it saves with every row checked.
    @Test func aCommitThatDidNotSettleIsNotTrusted() throws {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let ids = try seeded(store)
        try store.write { txn in try txn.createTreeIfMissing("k6-probe") }
        let a = Context(store: store)
        #expect(a.readsCurrentAt == store.settledMoment)
        try note(ids[0], in: a).title = "A"
        try a.save()
        #expect(a.readsCurrentAt == nil)
        #expect(try note(ids[0], in: Context(store: store)).title == "A")
    }

    /// After a reopen, LSNs may repeat: a context made before it never trusts its reads again.
    @Test func aReopenEndsTheTrust() throws {
        let directory = TemporaryDirectory("k6")
        let url = URL(fileURLWithPath: directory.file("k6.docstore"))
        let store = try Store(url: url, models: ModelClassTests.models)
        let ids = try seeded(store)
        let a = Context(store: store)
        let before = store.settledMoment
        try store.reopen()
        #expect(store.settledMoment != before && store.settledMoment.lsn == before.lsn)
        try note(ids[0], in: a).title = "A"
        try a.save()
        #expect(a.readsCurrentAt == nil)
        let b = Context(store: store)
        try note(ids[1], in: b).title = "B"
        try b.save()
        #expect(b.readsCurrentAt == store.settledMoment)
        try store.close()
    }

    /// A trusted save deletes a deleted object's links from what its delete rules loaded (K6):
    /// the stored ones, whatever the context added or removed before the delete — and those of
    /// an object this context inserted and saved earlier. Every link goes: nothing dangles.
    @Test func aDeletedObjectsStoredLinksAllGo() throws {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let a = Context(store: store)
        let tags = (0..<4).map { Tag(name: "t\($0)") }
        let edited = Note(title: "edited"), fresh = Note(title: "fresh"), kept = Note(title: "kept")
        for t in tags { try a.insert(t) }
        for n in [edited, fresh, kept] { try a.insert(n) }
        edited.tags = [tags[0], tags[1]]
        fresh.tags = [tags[1], tags[2]]
        kept.tags = [tags[0], tags[3]]
        try a.save()
        #expect(a.readsCurrentAt == store.settledMoment)
        // Loaded in another context's reads only: this one saved them, so it has them loaded.
        edited.tags.insert(tags[2])
        edited.tags.remove(tags[0])
        try a.delete(edited)
        try a.delete(fresh)
        try a.save()
        #expect(a.readsCurrentAt == store.settledMoment)
        #expect(try store.verify().isEmpty)
        let b = Context(store: store)
        let counts = try b.fetch(FetchRequest<Tag>(sortDescriptors: [SortKey("name")])).map(\.notes.count)
        #expect(counts == [1, 0, 0, 1])
        // A later context reads the links afresh and deletes the last note the same way.
        let c = Context(store: store)
        try c.delete(try note(try #require(kept.objectID), in: c))
        try c.save()
        #expect(try store.verify().isEmpty)
        #expect(try Context(store: store).fetch(FetchRequest<Tag>()).allSatisfy { $0.notes.isEmpty })
    }

    /// Found in review: a merge of an earlier commit's delete makes a loaded list forget a
    /// member whose link stays stored (`.noAction`). The context must stop trusting its loaded
    /// links, or deleting the shelf afterwards leaves that link behind.
    @Test func aMergedDeleteEndsTheTrustInLoadedLinks() throws {
        let store = try Store.inMemory(models: [K6Shelf.self, K6Book.self])
        let seed = Context(store: store)
        let shelf = K6Shelf(), book = K6Book()
        try seed.insert(shelf)
        try seed.insert(book)
        shelf.books = [book]
        try seed.save()
        let shelfID = try #require(shelf.objectID), bookID = try #require(book.objectID)
        let b = Context(store: store)
        try b.delete(try #require(try b.existingObject(with: bookID)))
        try b.save()
        let deletion = try #require(try store.history(entities: ["K6Book"]).last)
        let a = Context(store: store)
        let mine = try #require(try a.existingObject(with: shelfID) as? K6Shelf)
        let held = mine.books                   // the link noAction left, to a fault kept here
        #expect(held.count == 1)
        a.mergeChanges(from: deletion)          // a commit made before `a` was
        #expect(a.readsCurrentAt == nil)
        try a.delete(mine)
        try a.save()
        #expect(try store.verify().isEmpty)
        withExtendedLifetime(held) {}
    }

    /// A pinned context reads its snapshot: it trusts its reads only while that snapshot is the
    /// save's base. Pinned before B's save, it finds the conflict.
    @Test func aPinnedContextFindsTheConflict() throws {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let ids = try seeded(store)
        let a = Context(store: store)
        try a.setQueryGenerationFrom(.current)
        let mine = try note(ids[0], in: a)
        _ = mine.title
        let b = Context(store: store)
        try note(ids[0], in: b).title = "B"
        try b.save()
        mine.title = "A"
        let error = #expect(throws: DocStoreError.self) { try a.save() }
        #expect(error?.code == .mergeConflict)
    }
}
