// Page fill under random inserts (BTree.rebalance: share with a sibling, 3-to-4 and 2-to-3
// splits; format 2.0's 2-byte cell header), in small transactions as an app makes them over time
// (one large transaction is applied in key order and fills pages by appending: PutBuffer). A plain
// split-in-half B+tree leaves pages ~69 % full. Measured here: 84.4 %.

import DocStoreTestSupport
import Testing

@testable import DocStoreEngine

@Suite struct PageFillTests {
    @Test func randomInsertsLeavePagesAtLeast83PercentFull() throws {
        let store = try TestStores.memory("Fill")
        var rng = SplitMix64(seed: 7)
        let n = 20_000
        // Many small transactions, so that keys land all over the tree (one large transaction
        // would apply its puts sorted, PutBuffer, and fill pages by appending instead).
        try store.engine.write { try $0.createTree(named: "t") }
        for _ in 0..<(n / 50) {
            try store.engine.write { txn in
                for _ in 0..<50 { try txn.put(rng.bytes(100), for: rng.bytes(16), in: "t") }
            }
        }
        try store.engine.checkpoint()
        let stats = store.engine.statistics()
        let inUse = Int(stats.pageCount) - 2 - stats.freePages
        // Each entry: head 1 + key 16 + valueLength 1 + value 100 bytes, plus a 2-byte slot.
        let entryBytes = 1 + 16 + 1 + 100 + 2
        let fill = Double(n * entryBytes) / Double(inUse * (stats.pageSize - PageHeader.size))
        print("page fill: \(n) random entries in \(inUse) pages (\(stats.freePages) free): \(Int(fill * 1000)) ‰ full")
        #expect(fill >= 0.83, "pages are \(fill) full on average")
        #expect(try store.engine.verify().isClean)
        #expect(try store.engine.read { try $0.count(in: "t") } == n)
    }

    /// The same in small pieces: many transactions of random puts and deletes keep the tree
    /// valid through every kind of rebalance (verify checks order, separators and ownership) and
    /// hold exactly what a dictionary model holds.
    @Test func rebalancingKeepsTheTreeValidAcrossTransactions() throws {
        let seed: UInt64 = 8
        let store = try TestStores.memory("Churn")
        var rng = SplitMix64(seed: seed)
        // The model, with its keys in a fixed order so that the deletes are the same every run
        // (a Dictionary's order changes from process to process).
        var model: [[UInt8]: [UInt8]] = [:]
        var order: [[UInt8]] = []
        var position: [[UInt8]: Int] = [:]
        try store.engine.write { try $0.createTree(named: "t") }
        for round in 0..<40 {
            try store.engine.write { txn in
                for _ in 0..<300 {
                    let k = rng.bytes(Int(rng.next() % 24) + 1)
                    let v = rng.bytes(Int(rng.next() % 300))
                    try txn.put(v, for: k, in: "t")
                    if model.updateValue(v, forKey: k) == nil {
                        position[k] = order.count
                        order.append(k)
                    }
                }
                for _ in 0..<60 where !order.isEmpty {
                    let i = Int(rng.next() % UInt64(order.count))
                    let k = order[i]
                    #expect(try txn.delete(k, in: "t"), "seed \(seed), round \(round)")
                    model[k] = nil
                    position[k] = nil
                    let last = order.removeLast()
                    if i < order.count {
                        order[i] = last
                        position[last] = i
                    }
                }
            }
            if round % 10 == 9 { try store.engine.checkpoint() }
        }
        #expect(try store.engine.verify().isClean)
        try store.engine.read { txn in
            #expect(try txn.count(in: "t") == model.count)
            var cursor = try txn.cursor(in: "t")
            var entry = try cursor.first()
            var seen = 0
            while let (k, v) = entry {
                #expect(model[k] == v, "seed \(seed), key \(k)")
                seen += 1
                entry = try cursor.next()
            }
            #expect(seen == model.count)
        }
    }
}
