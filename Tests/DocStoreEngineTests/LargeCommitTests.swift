// Large commits and the memory they hold: a record whose payload is written apart from its
// header replays like any other; puts announced past the WAL record limit commit by checkpoint
// without building a record first (blob-bound values not counted); and a page a write copies
// leaves the page cache when the file holds it, while a page only the cache holds stays.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

@Suite struct LargeCommitTests {
    /// Random bytes (LZ4 cannot shrink them) or a repeated text (it can).
    static func values(_ n: Int, size: Int, random: Bool, seed: UInt64, from first: Int = 0) -> [(key: [UInt8], value: [UInt8])] {
        var rng = SplitMix64(seed: seed)
        let text = Array(String(repeating: "the quick brown fox ", count: size / 20 + 1).utf8.prefix(size))
        return (0..<n).map { i in
            (Array("key \(100_000 + first + i)".utf8), random ? rng.bytes(size) : text + Array("\(i)".utf8))
        }
    }

    @Test(arguments: [true, false])
    func aRecordLargerThanOneWriteReplaysFromTheLog(random: Bool) throws {
        let store = try TestStores.memory("L")
        let entries = Self.values(300, size: 1_000, random: random, seed: 7)
        try store.engine.write { txn in
            try txn.createTreeIfMissing("t")
            try txn.put(entries: entries, in: "t")
        }
        let report = try store.engine.walReport()
        let record = try #require(report.records.last)
        #expect(record.rawLength > Engine.joinedRecordLimit)
        if !random { #expect(record.compressed) }
        // Random values: the header and the payload are written apart; compressed text: at once.
        #expect((record.size - WALFormat.recordHeaderSize > Engine.joinedRecordLimit) == random)
        #expect(report.tailBytes == 0 && report.stopReason == nil)
        // What is on disk now, without a checkpoint: the commit is only in the log.
        var options = store.options
        options.fileSystem = MemoryFileSystem(files: store.fileSystem.snapshot())
        let again = try Engine.open(at: store.path, options: options)
        for (key, value) in entries { #expect(try again.read { try $0.get(key, in: "t") } == value) }
        #expect(try again.verify().isClean)
    }

    @Test func putsAnnouncedPastTheLimitCommitByCheckpoint() throws {
        let store = try TestStores.memory("X") { $0.checkpointWALBytes = 256 << 10 }
        try store.engine.write { try $0.createTreeIfMissing("t") }
        let logged = try store.engine.walReport().records.count
        // Under the limit: one more record.
        var small = PutEntries()
        for (k, v) in Self.values(100, size: 1_000, random: true, seed: 1) { small.append(key: k, value: v) }
        try store.engine.write { txn in
            txn.expectPuts([small])
            try txn.put(entries: small, in: "t")
        }
        #expect(try store.engine.walReport().records.count == logged + 1)
        // Past it (two batches together): no record, and the WAL starts over after the checkpoint.
        var a = PutEntries(), b = PutEntries()
        let big = Self.values(300, size: 1_000, random: true, seed: 2, from: 100)
        for (k, v) in big.prefix(150) { a.append(key: k, value: v) }
        for (k, v) in big.suffix(150) { b.append(key: k, value: v) }
        try store.engine.write { txn in
            txn.expectPuts([a, b])
            #expect(txn.log.overflowed, "the log is given up before anything is copied into it")
            try txn.put(entries: a, in: "t")
            try txn.put(entries: b, in: "t")
        }
        #expect(try store.engine.walReport().records.isEmpty)
        #expect(store.fileSystem.contents(of: "/db/X.docstore-wal")?.count == WALFormat.headerSize)
        var options = store.options
        options.fileSystem = MemoryFileSystem(files: store.fileSystem.snapshot())
        let again = try Engine.open(at: store.path, options: options)
        for (key, value) in big { #expect(try again.read { try $0.get(key, in: "t") } == value) }
        #expect(try again.read { try $0.count(in: "t") } == 400)
    }

    @Test func valuesBoundForBlobFilesAreNotCountedAgainstTheLog() throws {
        let store = try TestStores.memory("B") { options in
            options.checkpointWALBytes = 256 << 10
            options.blobThreshold = 64 << 10
        }
        try store.engine.write { try $0.createTreeIfMissing("t") }
        let logged = try store.engine.walReport().records.count
        var entries = PutEntries()
        for (k, v) in Self.values(5, size: 100 << 10, random: true, seed: 3) { entries.append(key: k, value: v) }
        #expect(entries.byteCount > 256 << 10)
        try store.engine.write { txn in
            txn.expectPuts([entries])
            #expect(!txn.log.overflowed, "each value goes to a blob file; the log holds references")
            try txn.put(entries: entries, in: "t")
        }
        #expect(try store.engine.walReport().records.count == logged + 1)
    }

    /// The page numbers the cache holds.
    static func cached(_ engine: Engine) -> Set<Int> {
        engine.pager.cache.withLock { c in Set(c.pages.indices.filter { c.pages[$0] != nil }) }
    }

    @Test func aPageAWriteCopiesLeavesTheCacheOnlyWhenTheFileHoldsIt() throws {
        let store = try TestStores.memory("P")
        let engine = store.engine
        try engine.write { txn in
            try txn.createTreeIfMissing("t")
            for i in 0..<2_000 { try txn.put(Array("value \(i)".utf8), for: Array("key \(100_000 + i)".utf8), in: "t") }
        }
        try engine.checkpoint()
        _ = try engine.read { try $0.entries(in: "t") }
        let clean = Self.cached(engine)
        #expect(clean.count > 3)
        // Every page the put copies was clean: the cache holds its copy instead, not both.
        try engine.write { try $0.put([1], for: Array("key 100000".utf8), in: "t") }
        let afterFirst = Self.cached(engine)
        let replaced = clean.subtracting(afterFirst)
        #expect(!replaced.isEmpty, "the put copied the leaf and its ancestors")
        #expect(afterFirst.count == clean.count, "each copied page left the cache as its copy came in")
        // The copies are only in the cache until a checkpoint: copying them again keeps them.
        try engine.write { try $0.put([2], for: Array("key 100000".utf8), in: "t") }
        let afterSecond = Self.cached(engine)
        #expect(afterSecond.isSuperset(of: afterFirst), "a page the file does not hold yet is never dropped")
        #expect(try engine.read { try $0.get(Array("key 100000".utf8), in: "t") } == [2])
        #expect(try engine.read { try $0.get(Array("key 101999".utf8), in: "t") } == Array("value 1999".utf8))
        #expect(try engine.verify().isClean)
    }
}
