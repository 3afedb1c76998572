// WriteBatch: a save's puts and deletes grouped by tree. Applying it writes every tree's entries
// and leaves the batch empty, each tree's entries freed once they are written (a large save must
// not hold every tree's entries while the last tree's pages are made). Deletes are made a chunk
// at a time and all before any put; a context save deleting more objects than a chunk leaves
// exactly the others, with their index entries and links. A save's large runs are put as they
// pile up, after their tree's deletes; a save larger than a run reads back whole.

import DocStore
import DocStoreEngine
import Foundation
import Testing

@testable import DocStoreCore

@Suite struct WriteBatchTests {
    /// A new in-memory store of books and labels, and a context holding `n` inserted labels.
    static func storeWithLabels(_ n: Int) throws -> (Store, Context, [QueryConformanceTests.Label]) {
        typealias Label = QueryConformanceTests.Label
        let store = try Store.inMemory(models: [QueryConformanceTests.Shelf.self, QueryConformanceTests.Book.self, Label.self])
        let context = Context(store: store)
        let labels = (0..<n).map { _ in Label() }
        for (i, label) in labels.enumerated() { label.name = "label \(i)"; try context.insert(label) }
        return (store, context, labels)
    }

    @Test func applyWritesEveryTreeAndLeavesTheBatchEmpty() throws {
        let (store, _) = try QueryConformanceTests.makeStore()
        let label = try #require(store.model.entity(named: "Label"))
        let shelf = try #require(store.model.entity(named: "Shelf"))
        let trees = [label.recordsTree, shelf.recordsTree]
        var batch = WriteBatch()
        // Keys far above any object's, interleaved between the two trees.
        let keys = (0..<500).map { PrimaryKey.bytes(PrimaryKey.make(entity: 0xFFFF, sequence: UInt64($0))) }
        for (i, key) in keys.enumerated() { batch.put([UInt8(i & 0xFF), 7], for: key, in: trees[i % 2]) }
        #expect(!batch.isEmpty)
        try store.write { txn in
            try batch.apply(txn)
            #expect(batch.isEmpty)
        }
        let read = try store.read { txn in
            try keys.indices.map { i in (try txn.get(keys[i], in: trees[i % 2]), try txn.get(keys[i], in: trees[1 - i % 2])) }
        }
        for (i, (own, other)) in read.enumerated() {
            #expect(own == [UInt8(i & 0xFF), 7] && other == nil, "entry \(i)")
        }
    }

    @Test func deletesAreMadeInChunksAndBeforeThePuts() throws {
        let (store, _) = try QueryConformanceTests.makeStore()
        let tree = try #require(store.model.entity(named: "Label")).recordsTree
        let n = 2 * WriteBatch.deleteChunk + 2_000
        let keys = (0..<n).map { PrimaryKey.bytes(PrimaryKey.make(entity: 0xFFFF, sequence: UInt64($0))) }
        try store.write { txn in for key in keys { try txn.put([1], for: key, in: tree) } }
        var batch = WriteBatch()
        try store.write { txn in
            // Every other key, in a scattered order; the first chunk is made as it fills.
            let evens = Array(stride(from: 0, to: n, by: 2))
            let doomed = evens.indices.map { evens[($0 * 7_919) % evens.count] }     // 7 919 is prime to their count
            #expect(Set(doomed).count == evens.count)
            #expect(doomed.count > WriteBatch.deleteChunk)
            for i in doomed.reversed() { try batch.delete(keys[i], in: tree, txn) }
            #expect(try txn.get(keys[doomed.last ?? 0], in: tree) == nil, "the first chunk is made when it fills")
            #expect(!batch.isEmpty)
            batch.put([2], for: keys[0], in: tree)     // deleted, then put again
            try batch.applyDeletes(txn)
            try batch.apply(txn)
            #expect(batch.isEmpty)
        }
        let read = try store.read { txn in try keys.map { try txn.get($0, in: tree) } }
        for (i, value) in read.enumerated() {
            let expected: [UInt8]? = i == 0 ? [2] : i % 2 == 0 ? nil : [1]
            #expect(value == expected, "key \(i)")
        }
    }

    @Test func largeRunsAreMadeAfterTheirTreesDeletesAndTheRestWaits() throws {
        let (store, _) = try QueryConformanceTests.makeStore()
        let a = try #require(store.model.entity(named: "Label")).recordsTree
        let b = try #require(store.model.entity(named: "Shelf")).recordsTree
        let keys = (0..<200).map { PrimaryKey.bytes(PrimaryKey.make(entity: 0xFFFF, sequence: UInt64($0))) }
        try store.write { txn in for key in keys.prefix(100) { try txn.put([1], for: key, in: a) } }
        var batch = WriteBatch()
        try store.write { txn in
            for key in keys.prefix(50) { try batch.delete(key, in: a, txn) }   // fewer than a chunk: they wait
            batch.put([2], for: keys[0], in: a)                                // deleted, then put again
            for key in keys[100...] { batch.put([3], for: key, in: a) }
            batch.put([4], for: keys[0], in: b)
            try batch.putLargeRuns(txn, over: 1_000)       // tree a's run is past it, b's is not
            #expect(try txn.get(keys[0], in: a) == [2], "the run was put after its tree's deletes")
            #expect(try txn.get(keys[1], in: a) == nil && txn.get(keys[49], in: a) == nil)
            #expect(try txn.get(keys[50], in: a) == [1] && txn.get(keys[150], in: a) == [3])
            #expect(try txn.get(keys[0], in: b) == nil, "a small run waits for apply")
            #expect(!batch.isEmpty)
            try batch.apply(txn)
            #expect(batch.isEmpty)
        }
        #expect(try store.read { txn in try txn.get(keys[0], in: b) } == [4])
        #expect(try store.read { txn in try txn.get(keys[0], in: a) } == [2])
    }

    /// A save whose records, index entries and links pass `WriteBatch.runBytes` (so they are put
    /// as they pile up), inserting and then rewriting every book: everything reads back.
    @Test func aSaveLargerThanARunReadsBackWhole() throws {
        typealias Book = QueryConformanceTests.Book
        let (store, context, labels) = try Self.storeWithLabels(4)
        let n = 9_000      // records and title index entries each about 6 MB: past WriteBatch.runBytes
        let long = String(repeating: "a long indexed title ", count: 30)      // ~630 bytes
        var books: [Book] = []
        for i in 0..<n {
            let b = Book()
            b.title = "\(i) \(long)"
            b.pages = i
            try context.insert(b)
            b.labels = [labels[i % 4], labels[(i + 1) % 4]]
            books.append(b)
        }
        try context.save()
        #expect(context.saveRunsPut >= 2, "the records and the title index were put as they piled up")
        // Every title changes (an index entry out and one in) and every book's labels move.
        for (i, b) in books.enumerated() {
            b.title = "\(i + 1) \(long)"
            b.labels = [labels[(i + 2) % 4]]
        }
        try context.save()

        let after = Context(store: store)
        #expect(try after.count(for: FetchRequest<Book>()) == n)
        for i in [0, 1, 2_345, n - 1] {
            let found = try after.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "title == %@", "\(i + 1) \(long)")))
            #expect(found.map(\.pages) == [i], "book \(i) under its new title")
        }
        #expect(try after.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "title == %@", "0 \(long)"))).isEmpty)
        for label in try after.fetch(FetchRequest<QueryConformanceTests.Label>()) {
            let index = try #require(labels.firstIndex { $0.name == label.name })
            #expect(label.books.count == n / 4)   // n is a multiple of 4
            #expect(label.books.allSatisfy { ($0.pages + 2) % 4 == index })
        }
        #expect(try store.verify().isEmpty)
        #expect(try store.verifyGraph().isEmpty)
    }

    @Model final class Playlist: ManagedObject {
        @Attribute(.unique) var name: String = ""
        @Relationship(deleteRule: .nullify, inverse: \Track.playlist) var tracks: [Track] = []
    }
    @Model final class Track: ManagedObject {
        @Attribute(.indexed) var title: String = ""
        var playlist: Playlist?
    }

    /// With runs put after every object, a save rewrites ordered links (deleted and put again
    /// under the same keys) and index entries exactly: each run is put after its tree's deletes.
    @Test func aSavePuttingRunsAsItGoesRewritesOrderedLinksExactly() throws {
        let store = try Store.inMemory(models: [Playlist.self, Track.self])
        let context = Context(store: store)
        context.saveRunBytes = 1
        let lists = (0..<3).map { i in let p = Playlist(); p.name = "list \(i)"; return p }
        for p in lists { try context.insert(p) }
        var tracks: [Track] = []
        for i in 0..<120 {
            let t = Track()
            t.title = "track \(i)"
            try context.insert(t)
            tracks.append(t)
        }
        for (i, p) in lists.enumerated() { p.tracks = Array(tracks[(40 * i)..<(40 * i + 40)]) }
        try context.save()
        #expect(context.saveRunsPut > 0, "the save put its runs as it went")
        let runsBefore = context.saveRunsPut
        // Each list reversed, its first track moved to the next list's end, every other title changed.
        for p in lists { p.tracks = p.tracks.reversed() }
        for (i, p) in lists.enumerated() {
            let moved = p.tracks[0]
            p.tracks.removeFirst()
            lists[(i + 1) % 3].tracks.append(moved)
        }
        for (i, t) in tracks.enumerated() where i % 2 == 0 { t.title = "renamed \(i)" }
        let expected = lists.map { $0.tracks.map(\.title) }
        try context.save()
        #expect(context.saveRunsPut > runsBefore)

        let after = Context(store: store)
        for (i, name) in lists.map(\.name).enumerated() {
            let p = try #require(try after.fetch(FetchRequest<Playlist>(predicate: try QueryPredicate(format: "name == %@", name))).first)
            #expect(p.tracks.map(\.title) == expected[i], "\(name) in its new order")
        }
        #expect(try after.fetch(FetchRequest<Track>(predicate: try QueryPredicate(format: "title == %@", "renamed 10"))).count == 1)
        #expect(try after.fetch(FetchRequest<Track>(predicate: try QueryPredicate(format: "title == %@", "track 10"))).isEmpty)
        #expect(try after.fetch(FetchRequest<Track>(predicate: try QueryPredicate(format: "title == %@", "track 11"))).count == 1)
        #expect(try store.verify().isEmpty)
        #expect(try store.verifyGraph().isEmpty)
    }

    @Test func aSaveDeletingMoreObjectsThanAChunkLeavesExactlyTheOthers() throws {
        typealias Book = QueryConformanceTests.Book
        typealias Label = QueryConformanceTests.Label
        let (store, setup, labels) = try Self.storeWithLabels(3)
        let n = WriteBatch.deleteChunk + 2_008      // nine in ten deleted: more than a chunk of records
        for i in 0..<n {
            let b = Book()
            b.title = "book \(i)"
            b.pages = i
            try setup.insert(b)
            b.labels = [labels[i % 3]]
        }
        try setup.save()
        let context = Context(store: store)
        for book in try context.fetch(FetchRequest<Book>()) where book.pages % 10 != 0 { try context.delete(book) }
        let kept = try #require(try context.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages == 20"))).first)
        kept.title = "renamed"      // an index entry out and another in, in the same save
        try context.save()

        let after = Context(store: store)
        #expect(try after.count(for: FetchRequest<Book>()) == (n + 9) / 10)
        #expect(try after.count(for: FetchRequest<Book>(predicate: try QueryPredicate(format: "pages < 100"))) == 10)
        #expect(try after.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "title == %@", "book 21"))).isEmpty)
        #expect(try after.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "title == %@", "book 20"))).isEmpty)
        #expect(try after.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "title == %@", "renamed"))).map(\.pages) == [20])
        #expect(try after.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "title == %@", "book 30"))).map(\.pages) == [30])
        var linked = 0
        for label in try after.fetch(FetchRequest<Label>()) {
            for book in label.books { #expect(book.pages % 10 == 0); linked += 1 }
        }
        #expect(linked == (n + 9) / 10, "every kept book keeps its label, and no deleted one is linked")
        #expect(try store.verify().isEmpty)
        #expect(try store.verifyGraph().isEmpty)
    }
}
