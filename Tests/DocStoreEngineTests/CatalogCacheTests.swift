// Read transactions share the catalog entries they looked up (CatalogCache), keyed by their
// snapshot: a reader of an older snapshot, held open across commits that create, fill and drop
// trees, must still see its own state, and every new reader the latest one — whichever of them
// looked a tree up first.

import DocStoreEngine
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct CatalogCacheTests {
    @Test func readersOfEachSnapshotSeeTheirOwnCatalog() throws {
        let store = try TestStores.memory("CC")
        let engine = store.engine
        try engine.write { (txn) throws in
            try txn.createTree(named: "a")
            try txn.put([1], for: [1], in: "a")
        }
        let old = try engine.beginRead()
        defer { old.close() }
        #expect(try old.count(in: "a") == 1)
        for round in 1...5 {
            try engine.write { (txn) throws in
                try txn.put([UInt8(round)], for: [UInt8(round + 1)], in: "a")
                if round == 2 { try txn.createTree(named: "b") }
                if round == 4 { try txn.dropTree(named: "b") }
            }
            // A new reader first (it caches the new snapshot's entries), then the old one.
            let fresh = try engine.beginRead()
            #expect(try fresh.count(in: "a") == round + 1, "round \(round)")
            #expect(try fresh.treeExists("b") == (round == 2 || round == 3), "round \(round)")
            fresh.close()
            #expect(try old.count(in: "a") == 1, "round \(round): the old snapshot")
            #expect(try old.treeExists("b") == false, "round \(round): the old snapshot")
        }
        // The old reader looks up first this time; a new one must not take its entries.
        let older = try engine.beginRead()
        try engine.write { (txn) throws in try txn.put([9], for: [9], in: "a") }
        #expect(try older.count(in: "a") == 6)
        let newest = try engine.beginRead()
        #expect(try newest.count(in: "a") == 7)
        newest.close()
        older.close()
    }
}
