// WriteBatch: a save's puts and deletes grouped by tree. Applying it writes every tree's entries
// and leaves the batch empty, each tree's entries freed once they are written (a large save must
// not hold every tree's entries while the last tree's pages are made). Deletes are made a chunk
// at a time and all before any put; a context save deleting more objects than a chunk leaves
// exactly the others, with their index entries and links.

import DocStoreEngine
import Foundation
import Testing

@testable import DocStoreCore

@Suite struct WriteBatchTests {
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

    @Test func aSaveDeletingMoreObjectsThanAChunkLeavesExactlyTheOthers() throws {
        typealias Book = QueryConformanceTests.Book
        typealias Label = QueryConformanceTests.Label
        typealias Shelf = QueryConformanceTests.Shelf
        let store = try Store.inMemory(models: [Shelf.self, Book.self, Label.self])
        let setup = Context(store: store)
        let labels = (0..<3).map { _ in Label() }
        for (i, label) in labels.enumerated() { label.name = "label \(i)"; try setup.insert(label) }
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
