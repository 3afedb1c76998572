// Buffered deletes (DeleteBuffer): a write transaction applies consecutive deletes from a tree in
// key order when something needs the tree, having looked each key up when it was deleted. Its
// answers (whether a key was there), its reads, the committed state and the state replayed from
// the WAL must equal deleting one by one in call order.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

@Suite struct DeleteBufferTests {
    @Test func aKeyDeletedTwiceInARowIsThereOnlyTheFirstTime() throws {
        let store = try TestStores.memory("DB1")
        try store.engine.write { (txn) throws in
            try txn.createTree(named: "t")
            try txn.put(entries: (0..<100).map { ([UInt8($0)], [UInt8($0)]) }, in: "t")
        }
        try store.engine.write { (txn) throws in
            #expect(try txn.delete([7], in: "t"))
            #expect(try txn.delete([9], in: "t"))
            #expect(try !txn.delete([7], in: "t"), "a repeat in the same run of deletes")
            #expect(try !txn.delete([200], in: "t"), "never there")
            #expect(try txn.count(in: "t") == 98)
            #expect(try txn.get([7], in: "t") == nil)
            #expect(try !txn.delete([9], in: "t"), "a repeat after the run was applied")
        }
        #expect(try store.engine.read { try $0.count(in: "t") } == 98)
        #expect(try store.engine.verify().isClean)
    }

    /// Long runs of deletes in random order (keys there, gone already, never there), with reads,
    /// puts and deletes from another tree between them, buffers applied by size (a small limit)
    /// and pages spilled (a small spill limit): checked against a model at every answer, after
    /// the commit, and after recovery replays the WAL one operation at a time.
    @Test func randomDeletesMatchAModelInTheTransactionAfterCommitAndAfterReplay() throws {
        let seed: UInt64 = 1_801
        var rng = SplitMix64(seed: seed)
        let store = try TestStores.memory("DBR") {
            $0.walPreallocationBytes = 0
            $0.writeSpillBytes = 32 * 4096
        }
        func key(_ i: Int) -> [UInt8] { Array("key \(String(format: "%05d", i))".utf8) }
        var model: [String: [[UInt8]: [UInt8]]] = ["a": [:], "b": [:]]
        try store.engine.write { (txn) throws in
            for tree in ["a", "b"] {
                try txn.createTree(named: tree)
                for i in 0..<4_000 {
                    let value = rng.bytes(20 + Int(rng.next() % 100))
                    try txn.put(value, for: key(i), in: tree)
                    model[tree]?[key(i)] = value
                }
            }
        }
        for round in 0..<3 {
            try store.engine.write { (txn) throws in
                txn.bufferedPutBytes = 2_000   // about forty deletes: long runs reach it
                for step in 0..<6_000 {
                    let k = key(Int(rng.next() % 5_000))
                    let tree = rng.next() % 20 == 0 ? "b" : "a"
                    let context = "seed \(seed) round \(round) step \(step)"
                    switch rng.next() % 100 {
                    case 0..<88:
                        #expect(try txn.delete(k, in: tree) == (model[tree]?[k] != nil), "\(context)")
                        model[tree]?[k] = nil
                    case 88..<91:
                        #expect(try txn.get(k, in: tree) == model[tree]?[k], "\(context)")
                    case 91:
                        #expect(try txn.contains(k, in: tree) == (model[tree]?[k] != nil), "\(context)")
                    case 92:
                        #expect(try txn.count(in: tree) == model[tree]?.count ?? 0, "\(context)")
                    case 93:
                        // The bulk forms after buffered deletes: the buffer goes first.
                        let keys = (0..<4).map { _ in key(Int(rng.next() % 5_000)) }
                        let present = Set(keys).filter { model[tree]?[$0] != nil }.count
                        #expect(try txn.delete(keys: keys, in: tree) == present, "\(context)")
                        for k in keys { model[tree]?[k] = nil }
                    case 94:
                        let entries = (0..<4).map { _ in (key: key(Int(rng.next() % 5_000)), value: rng.bytes(30)) }
                        try txn.put(entries: entries, in: tree)
                        for e in entries { model[tree]?[e.key] = e.value }
                    default:
                        let value = rng.bytes(Int(rng.next() % 80))
                        try txn.put(value, for: k, in: tree)
                        model[tree]?[k] = value
                    }
                }
            }
            try Self.expect(store.engine, holds: model, "seed \(seed) round \(round)")
        }
        try Self.expect(TestStores.reopenedAfterCrash(store), holds: model, "seed \(seed) after replay")
    }

    /// Checks that `engine`'s trees hold exactly `model`'s entries and pass the integrity check.
    static func expect(_ engine: Engine, holds model: [String: [[UInt8]: [UInt8]]], _ context: String) throws {
        for (tree, entries) in model {
            let stored = try engine.read { try $0.entries(in: tree) }
            #expect(stored.count == entries.count, "\(context): tree \(tree)")
            for e in stored where entries[e.key] != e.value {
                Issue.record("\(context): wrong entry \(e.key) in tree \(tree)")
                break
            }
        }
        #expect(try engine.verify().isClean, "\(context)")
    }

    /// Values in overflow pages and in blob files, deleted through the buffer: their pages and
    /// files are freed as a delete one at a time frees them; a tree dropped right after
    /// buffered deletes from it is gone whole.
    @Test func deletedOverflowAndBlobValuesAreFreedAndADropAfterDeletesWorks() throws {
        let store = try TestStores.memory("DBB") { $0.blobThreshold = 8_192 }
        let overflow = [UInt8](repeating: 3, count: 3_000)
        let blob = [UInt8](repeating: 5, count: 20_000)
        try store.engine.write { (txn) throws in
            try txn.createTree(named: "t")
            try txn.createTree(named: "gone")
            for i in 0..<40 { try txn.put(i % 2 == 0 ? overflow : blob, for: [UInt8(i)], in: "t") }
            for i in 0..<10 { try txn.put([UInt8(i)], for: [UInt8(i)], in: "gone") }
        }
        let blobsBefore = try store.fileSystem.listDirectory(store.engine.paths.blobDirectory).count
        #expect(blobsBefore == 20)
        try store.engine.write { (txn) throws in
            for i in stride(from: 39, through: 0, by: -1) where i % 4 != 3 {
                #expect(try txn.delete([UInt8(i)], in: "t"))
            }
            #expect(try txn.delete([3], in: "gone"))
            #expect(try txn.delete([4], in: "gone"))
            try txn.dropTree(named: "gone")
        }
        try store.engine.read { (txn) throws in
            #expect(try txn.entries(in: "t").map(\.key) == stride(from: 3, to: 40, by: 4).map { [UInt8($0)] })
            #expect(try txn.get([3], in: "t") == blob)
            #expect(try !txn.treeExists("gone"))
        }
        // Freed blob files go once a checkpoint made the deletes durable and nothing reads them.
        try store.engine.checkpoint()
        try store.engine.write { (txn) throws in try txn.put([1], for: [200], in: "t") }
        try store.engine.checkpoint()
        #expect(try store.fileSystem.listDirectory(store.engine.paths.blobDirectory).count == 10)
        #expect(try store.engine.verify().isClean)
    }

    @Test func equalKeysHashAlikeAndTheHashReadsEveryByte() {
        let a: [UInt8] = Array("a key of nineteen b".utf8)
        #expect(DeleteBuffer.hash(a) == DeleteBuffer.hash(Array(a)))
        var seen: Set<UInt64> = []
        // Keys that differ in one byte anywhere (in a whole word or in the tail), or in length.
        for i in a.indices {
            var b = a
            b[i] ^= 1
            seen.insert(DeleteBuffer.hash(b))
        }
        seen.insert(DeleteBuffer.hash(a + [0]))
        seen.insert(DeleteBuffer.hash(Array(a.dropLast())))
        seen.insert(DeleteBuffer.hash(a))
        #expect(seen.count == a.count + 3)
    }
}
