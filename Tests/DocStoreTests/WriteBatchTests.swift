// WriteBatch: a save's puts grouped by tree. Applying it writes every tree's entries and
// leaves the batch empty, each tree's entries freed once they are written (a large save must
// not hold every tree's entries while the last tree's pages are made).

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
}
