// A long walk keeps the page cache as it found it: a cursor past `Cursor.passingAfter` leaves
// reads further leaves in passing (`Pager.pageInPassing`) — validated as any read, not kept —
// while the branches above them and every leaf a point lookup or a short walk reads are cached
// as before. What a scan returns does not change, in a read or a write transaction.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

@Suite struct ScanCacheTests {
    static func key(_ i: Int) -> [UInt8] { Array("k\(1_000_000 + i)".utf8) }

    /// A store whose tree "t" has `count` entries on many more leaves than `passingAfter`,
    /// checkpointed and opened again, so its cache starts empty.
    static func bigTree(_ count: Int) throws -> Engine {
        let store = try TestStores.memory("S")
        try store.engine.write { txn in
            try txn.createTreeIfMissing("t")
            for i in 0..<count { try txn.put(Array(repeating: UInt8(i & 0xFF), count: 40), for: key(i), in: "t") }
        }
        try store.engine.checkpoint()
        var options = store.options
        options.fileSystem = MemoryFileSystem(files: store.fileSystem.snapshot())
        return try Engine.open(at: store.path, options: options)
    }

    static func resident(_ engine: Engine) -> Int { engine.pager.cache.withLock { $0.resident } }

    @Test func aLongScanLeavesTheCacheAboutAsItFoundIt() throws {
        let count = 150_000
        let engine = try Self.bigTree(count)
        let before = Self.resident(engine)
        var seen = 0
        var previous: [UInt8]?
        try engine.read { txn in
            var cursor = try txn.cursor(in: "t")
            var entry = try cursor.first()
            while let (k, v) = entry {
                #expect(previous.map { $0.lexicographicallyPrecedes(k) } ?? true, "keys in order")
                #expect(v.count == 40)
                previous = k
                seen += 1
                entry = try cursor.next()
            }
        }
        #expect(seen == count)
        #expect(engine.statistics().pageCount > UInt64(3 * Cursor.passingAfter), "the tree has many more leaves than the cursor keeps")
        let grown = Self.resident(engine) - before
        // The first `passingAfter` leaves and the branches stay; the rest were read in passing.
        #expect(grown <= Cursor.passingAfter + 64, "the scan kept \(grown) pages")
        #expect(UInt64(grown) < engine.statistics().pageCount / 2, "the scan kept most of the tree: \(grown) pages")

        // A point lookup still caches its leaf, and reads what the scan read.
        let k = Self.key(count - 7)
        let afterScan = Self.resident(engine)
        #expect(try engine.read { try $0.get(k, in: "t") } == Array(repeating: UInt8((count - 7) & 0xFF), count: 40))
        #expect(Self.resident(engine) == afterScan + 1, "a lookup keeps the leaf it read")

        // Backwards too, and inside a write transaction (its own pages first).
        var backwards = 0
        try engine.read { txn in
            var cursor = try txn.cursor(in: "t")
            var entry = try cursor.last()
            while entry != nil { backwards += 1; entry = try cursor.previous() }
        }
        #expect(backwards == count)
        try engine.write { txn in
            try txn.put([1], for: Self.key(count), in: "t")
            #expect(try txn.entries(in: "t").count == count + 1)
        }
        #expect(try engine.verify().isClean)
    }

    /// One cursor placed again and again (what a count's index ranges do) starts its count of
    /// leaves walked anew each time: short walks that add up to far more than `passingAfter`
    /// leaves still keep every leaf they read.
    @Test func manyShortWalksFromOneCursorKeepTheirLeaves() throws {
        let count = 150_000
        let engine = try Self.bigTree(count)
        let before = Self.resident(engine)
        let walks = 300, stride = count / walks, steps = 280
        var seen = 0
        try engine.read { txn in
            var cursor = try txn.cursor(in: "t")
            for w in 0..<walks {
                var entry = try cursor.seek(to: Self.key(w * stride))
                #expect(entry?.key == Self.key(w * stride))
                for _ in 0..<steps where entry != nil {
                    seen += 1
                    entry = try cursor.next()
                }
            }
        }
        #expect(seen == walks * steps)
        let grown = Self.resident(engine) - before
        // Each walk of 280 entries crosses a few leaves: together well past `passingAfter`,
        // every one of them kept (a count that never restarted keeps at most `passingAfter`).
        let perLeaf = count / Int(engine.statistics().pageCount)
        #expect(walks * steps / perLeaf > 2 * Cursor.passingAfter, "the walks cross enough leaves to tell")
        #expect(grown > 2 * Cursor.passingAfter, "the short walks kept only \(grown) pages")
    }
}
