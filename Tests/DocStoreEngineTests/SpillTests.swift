// A write transaction past EngineOptions.writeSpillBytes writes its pages into the file before it
// commits (PageWorkspace.spill): it holds at most its limit in memory, pages it touches again are
// read back, a rollback leaves the store and its size as they were, readers keep their snapshots,
// and the commit reads back whole from the files alone — from its log record, and after the
// checkpoint that syncs the spilled pages instead of writing them. Puts made one by one and reads
// stay within the limit too, and a spilled page that cannot be read back fails the transaction.
// The crash campaign over spilling transactions is in CrashPointTests.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

@Suite struct SpillTests {
    static let limitPages = 16

    typealias TestStore = (engine: Engine, fileSystem: MemoryFileSystem, options: EngineOptions, path: String)

    static func spillingStore(_ name: String) throws -> TestStore {
        try TestStores.memory(name) { $0.writeSpillBytes = limitPages * 4096 }
    }

    /// A spilling store whose tree "t" holds `entries` (committed), and its contents.
    static func spillingStore(_ name: String, holding entries: [(key: [UInt8], value: [UInt8])]) throws -> (TestStore, [[UInt8]: [UInt8]]) {
        let store = try spillingStore(name)
        try store.engine.write { txn in
            try txn.createTreeIfMissing("t")
            try txn.put(entries: entries, in: "t")
        }
        return (store, try contents(store.engine, "t"))
    }

    /// The store opened again from a copy of its files alone, as after a crash now.
    static func reopened(_ store: TestStore) throws -> Engine { try TestStores.reopenedAfterCrash(store) }

    /// `n` entries with keys in a shuffled order (so a later batch lands in leaves an earlier
    /// one filled) and values of a few hundred bytes.
    static func entries(_ n: Int, seed: UInt64, tag: String) -> [(key: [UInt8], value: [UInt8])] {
        var rng = SplitMix64(seed: seed)
        var keys = (0..<n).map { i in Array("key \(String(format: "%06d", i * 7919 % 1_000_003))".utf8) }
        for i in stride(from: keys.count - 1, to: 0, by: -1) { keys.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
        return keys.map { ($0, Array("\(tag) \(String(decoding: $0, as: UTF8.self)) ".utf8) + rng.bytes(200)) }
    }

    static func contents(_ engine: Engine, _ tree: String) throws -> [[UInt8]: [UInt8]] {
        try engine.read { txn in
            var all: [[UInt8]: [UInt8]] = [:]
            var cursor = try txn.cursor(in: tree)
            var entry = try cursor.first()
            while let e = entry {
                all[e.key] = e.value
                entry = try cursor.next()
            }
            return all
        }
    }

    @Test func aLargeTransactionHoldsAtMostItsLimitAndReadsBackWhole() throws {
        let store = try Self.spillingStore("S")
        let all = Self.entries(4_000, seed: 11, tag: "v")
        var expected: [[UInt8]: [UInt8]] = [:]
        var spilledAtSomePoint = false
        try store.engine.write { txn in
            try txn.createTreeIfMissing("t")
            // Four batches over the whole key range: each lands in leaves the earlier ones
            // filled and spilled, which are read back, changed and spilled again.
            for batch in 0..<4 {
                let part = Array(all[(batch * 1_000)..<((batch + 1) * 1_000)])
                try txn.put(entries: part, in: "t")
                for (k, v) in part { expected[k] = v }
                #expect(txn.ws.owned.count <= Self.limitPages, "batch \(batch): \(txn.ws.owned.count) pages in memory")
                spilledAtSomePoint = spilledAtSomePoint || !txn.ws.spilled.isEmpty
                // Reads inside the transaction see every put, spilled or not.
                let probe = part[part.count / 2]
                #expect(try txn.get(probe.key, in: "t") == probe.value)
            }
            // Deletes of every third key: leaves are read back, emptied and merged (pages freed).
            let gone = all.enumerated().filter { $0.offset % 3 == 0 }.map(\.element.key)
            try txn.delete(keys: gone, in: "t")
            for k in gone { expected[k] = nil }
            // One-by-one overwrites through the buffered path.
            for (k, _) in all.prefix(300) where expected[k] != nil {
                let v = Array("overwritten".utf8) + k
                try txn.put(v, for: k, in: "t")
                expected[k] = v
            }
            #expect(txn.ws.owned.count <= Self.limitPages)
        }
        #expect(spilledAtSomePoint, "the transaction never spilled: the test does not test spilling")
        // Small enough to log: the WAL holds it, and readers read the spilled pages from the file.
        #expect(try store.engine.walReport().records.count == 1)
        #expect(try Self.contents(store.engine, "t") == expected)
        #expect(try store.engine.verify().isClean)
        // The files alone, as after a crash right after the commit returned: the log replays
        // onto the checkpoint, for which the spilled pages are free pages.
        let replayed = try Self.reopened(store)
        #expect(try Self.contents(replayed, "t") == expected)
        #expect(try replayed.verify().isClean)
        // A checkpoint syncs the spilled pages instead of writing them: the page file alone
        // (the log truncated by the checkpoint) reads back whole.
        try store.engine.checkpoint()
        #expect(try store.engine.walReport().records.isEmpty)
        let checkpointed = try Self.reopened(store)
        #expect(try Self.contents(checkpointed, "t") == expected)
        #expect(try checkpointed.verify().isClean)
    }

    @Test func aRolledBackSpillLeavesTheStoreAsItWas() throws {
        let first = Self.entries(1_500, seed: 21, tag: "first")
        let (store, before) = try Self.spillingStore("R", holding: first)
        let pagesBefore = store.engine.statistics().pageCount
        struct Abandon: Error {}
        #expect(throws: Abandon.self) {
            try store.engine.write { txn in
                try txn.put(entries: Self.entries(3_000, seed: 22, tag: "second"), in: "t")
                try txn.delete(keys: first.prefix(700).map(\.key), in: "t")
                #expect(!txn.ws.spilled.isEmpty)
                throw Abandon()
            }
        }
        #expect(store.engine.statistics().pageCount == pagesBefore, "the pages the rollback gave back are the file's end again")
        #expect(try Self.contents(store.engine, "t") == before)
        #expect(try store.engine.verify().isClean)
        // The spilled bytes lie in free pages: the next transaction reuses them, and the files
        // reopen to what was committed.
        try store.engine.write { txn in try txn.put(Array("after".utf8), for: Array("zzz".utf8), in: "t") }
        let again = try Self.reopened(store)
        var expected = before
        expected[Array("zzz".utf8)] = Array("after".utf8)
        #expect(try Self.contents(again, "t") == expected)
        #expect(try again.verify().isClean)
    }

    @Test func readersKeepTheirSnapshotWhileAndAfterATransactionSpills() throws {
        let first = Self.entries(1_000, seed: 31, tag: "old")
        let (store, before) = try Self.spillingStore("V", holding: first)
        let reader = try store.engine.beginRead()
        defer { reader.close() }
        let changed = first.map { ($0.key, Array("new".utf8) + $0.value) }
        try store.engine.write { txn in
            try txn.put(entries: changed, in: "t")
            try txn.put(entries: Self.entries(2_000, seed: 32, tag: "more").map { (Array("m".utf8) + $0.key, $0.value) }, in: "t")
            #expect(!txn.ws.spilled.isEmpty)
            // A snapshot taken during the write sees the committed state, not the spilled pages.
            #expect(try Self.contents(store.engine, "t") == before)
        }
        for (k, v) in first { #expect(try reader.get(k, in: "t") == v) }
        for (k, v) in changed { #expect(try store.engine.read { try $0.get(k, in: "t") } == v) }
        #expect(try store.engine.read { try $0.count(in: "t") } == 3_000)
        #expect(try store.engine.verify().isClean)
    }

    @Test func readsAndOneByOnePutsStayWithinTheLimit() throws {
        let store = try Self.spillingStore("P")
        let n = 1 << 16
        try store.engine.write { txn in
            try txn.createTreeIfMissing("t")
            // Puts one by one: applied each time the buffer holds a megabyte (about 7 000 of
            // these), each run spilling as it goes, so neither the buffer nor the pages grow
            // with the series.
            txn.bufferedPutBytes = 1 << 20
            for i in 0..<n {
                try txn.put(Array("value \(i) of a long series".utf8), for: Array("key \(String(format: "%07d", i * 7 % 65_537))".utf8), in: "t")
            }
            #expect(!txn.ws.spilled.isEmpty, "the run was applied and spilled before the commit")
            #expect(txn.ws.owned.count <= Self.limitPages)
            // Reads bring spilled leaves back; each read first spills what earlier ones brought.
            for i in stride(from: 0, to: n, by: 97) {
                let key = Array("key \(String(format: "%07d", i * 7 % 65_537))".utf8)
                #expect(try txn.get(key, in: "t") == Array("value \(i) of a long series".utf8))
                #expect(txn.ws.owned.count <= Self.limitPages + 8, "read \(i): \(txn.ws.owned.count) pages in memory")
            }
        }
        #expect(try store.engine.read { try $0.count(in: "t") } == n)
        #expect(try store.engine.verify().isClean)
        #expect(try Self.reopened(store).read { try $0.count(in: "t") } == n)
    }

    /// One sorted run far larger than the limit, put and then deleted in one operation each:
    /// the run spills between its entries (without it the transaction held every page the
    /// run made — hundreds here — until the operation ended).
    @Test func aLongSortedRunSpillsAsItGoes() throws {
        let store = try Self.spillingStore("R")
        let entries = Self.entries(20_000, seed: 51, tag: "long")
        // One operation adds at most a spread's new leaves and a few branches past the limit.
        let bound = Self.limitPages + BTree.spreadLeavesAtMost + 8
        try store.engine.write { txn in
            try txn.createTreeIfMissing("t")
            try txn.put(entries: entries, in: "t")
            #expect(txn.ws.mostOwned <= bound, "\(txn.ws.mostOwned) pages held at once")
        }
        #expect(try Self.contents(store.engine, "t") == Dictionary(entries, uniquingKeysWith: { $1 }))
        let doomed = entries.enumerated().filter { $0.offset % 3 != 0 }.map(\.element.key)
        try store.engine.write { txn in
            try txn.delete(keys: doomed, in: "t")
            #expect(txn.ws.mostOwned <= bound, "\(txn.ws.mostOwned) pages held at once")
        }
        let kept = entries.enumerated().filter { $0.offset % 3 == 0 }.map(\.element)
        #expect(try Self.contents(store.engine, "t") == Dictionary(kept, uniquingKeysWith: { $1 }))
        #expect(try store.engine.verify().isClean)
        #expect(try Self.reopened(store).read { try $0.count(in: "t") } == kept.count)
    }

    @Test func aSpilledPageThatCannotBeReadBackKeepsTheTransactionFromCommitting() throws {
        let first = Self.entries(500, seed: 41, tag: "kept")
        let (store, before) = try Self.spillingStore("C", holding: first)
        #expect(throws: EngineError.self) {
            try store.engine.write { txn in
                try txn.put(entries: Self.entries(3_000, seed: 42, tag: "lost"), in: "t")
                let victim = try #require(txn.ws.spilled.min())
                // The page's bytes in the file are damaged behind the transaction's back.
                var bytes = try #require(store.fileSystem.contents(of: store.path))
                bytes[Int(victim) * 4096 + 100] ^= 0xff
                store.fileSystem.setContents(of: store.path, to: bytes)
                // Touching every key reaches the damaged page; the body swallows the error and
                // returns as if it were done.
                var failures = 0
                for (key, _) in Self.entries(3_000, seed: 42, tag: "lost") {
                    do { _ = try txn.get(key, in: "t") } catch { failures += 1 }
                }
                #expect(failures > 0, "the damaged page was never read back")
            }
        }
        // Nothing of it committed, and the store refuses writes until reopened (I8).
        #expect(try Self.contents(store.engine, "t") == before)
        #expect(throws: EngineError.self) { try store.engine.write { txn in try txn.put([1], for: [1], in: "t") } }
        #expect(try Self.contents(Self.reopened(store), "t") == before)
    }
}
