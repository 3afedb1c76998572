// Online compaction (Engine+Compact.swift, BTree+Relocate.swift): after heavy deletes the file
// shrinks, every remaining entry (inline and overflow values) reads back the same, the store
// verifies and reopens; a snapshot open during compaction keeps reading its state; writers go on
// between steps; and a crash at any file-system call of a compaction leaves every entry intact.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

@Suite struct CompactionTests {
    /// Fills three trees (small values, and every 50th value large enough to overflow its leaf),
    /// then deletes most entries; returns what is left, by tree.
    static func fillThenThin(_ engine: Engine, seed: UInt64, keys: Int = 6_000, keep: Int = 5) throws -> [String: [[UInt8]: [UInt8]]] {
        var rng = SplitMix64(seed: seed)
        var expected: [String: [[UInt8]: [UInt8]]] = [:]
        for tree in ["a", "b", "c"] {
            try engine.write { txn in try txn.createTree(named: tree) }
            var all: [[UInt8]: [UInt8]] = [:]
            for start in stride(from: 0, to: keys, by: 1000) {
                try engine.write { txn in
                    for i in start..<min(keys, start + 1000) {
                        let key = Array("\(tree)-\(String(format: "%06d", i))".utf8)
                        let size = i % 50 == 0 ? 9_000 : 100 + Int(rng.next() % 200)
                        let value = (0..<size).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                        try txn.put(value, for: key, in: tree)
                        all[key] = value
                    }
                }
            }
            try engine.write { txn in
                for key in all.keys.sorted(by: { $0.lexicographicallyPrecedes($1) }) where Int(rng.next() % 100) >= keep * 10 {
                    _ = try txn.delete(key, in: tree)
                    all[key] = nil
                }
            }
            expected[tree] = all
        }
        try engine.checkpoint()
        return expected
    }

    static func contents(_ engine: Engine) throws -> [String: [[UInt8]: [UInt8]]] {
        try engine.read { txn in
            var out: [String: [[UInt8]: [UInt8]]] = [:]
            for tree in try txn.treeNames() {
                var cursor = try txn.cursor(in: tree)
                var entry = try cursor.seek(to: [])
                var all: [[UInt8]: [UInt8]] = [:]
                while let (k, v) = entry { all[k] = v; entry = try cursor.next() }
                out[tree] = all
            }
            return out
        }
    }

    @Test(arguments: ["memory", "real"])
    func afterHeavyDeletesTheFileShrinksAndEveryEntryStays(kind: String) throws {
        let (engine, path, fs, dir) = try makeStore(kind)
        _ = dir
        let expected = try Self.fillThenThin(engine, seed: 7)
        let before = try fs.openFile(path, create: false, readOnly: true).size()
        var reports: [CompactionReport] = []
        let report = try engine.compact(pagesPerStep: 256) { reports.append($0) }
        #expect(report.bytesBefore == before)
        #expect(report.pagesMoved > 0 && report.steps > 1 && reports.count >= report.steps)
        // About half the entries are left: the file must give back at least a third of itself.
        #expect(Double(report.bytesAfter) <= Double(before) * 0.67, "\(report)")
        #expect(try fs.openFile(path, create: false, readOnly: true).size() == report.bytesAfter)
        #expect(try Self.contents(engine) == expected)
        #expect(try engine.verify().isClean)
        // Writes go on normally afterwards, and everything survives reopening.
        try engine.write { txn in try txn.put([1, 2, 3], for: Array("after".utf8), in: "a") }
        try engine.close()
        var options = EngineOptions()
        options.fileSystem = fs
        let reopened = try Engine.open(at: path, options: options)
        var all = expected
        all["a"]?[Array("after".utf8)] = [1, 2, 3]
        #expect(try Self.contents(reopened) == all)
        #expect(try reopened.verify().isClean)
        print("compaction (\(kind)): \(report)")
        try reopened.close()
    }

    @Test func aSnapshotOpenDuringCompactionKeepsItsStateAndWritersGoOnBetweenSteps() throws {
        let (engine, _, _, _) = try makeStore("memory")
        let expected = try Self.fillThenThin(engine, seed: 11)
        let snapshot = try engine.beginRead()
        var written = 0
        let first = try engine.compact(pagesPerStep: 128) { _ in
            // A writer between steps (the progress callback runs outside any transaction).
            try? engine.write { txn in try txn.put([UInt8(written % 256)], for: Array("w\(written)".utf8), in: "b") }
            written += 1
        }
        // The snapshot still reads its own state, overflow values included.
        var seen = 0
        for (tree, entries) in expected {
            for (k, v) in entries.prefix(200) {
                #expect(try snapshot.get(k, in: tree) == v)
                seen += 1
            }
        }
        #expect(seen > 0)
        snapshot.close()
        // With the snapshot gone, a second pass reclaims what it held.
        let second = try engine.compact(pagesPerStep: 128)
        #expect(second.bytesAfter <= first.bytesAfter)
        var all = expected
        for i in 0..<written { all["b"]?[Array("w\(i)".utf8)] = [UInt8(i % 256)] }
        #expect(written > 0)
        #expect(try Self.contents(engine) == all)
        #expect(try engine.verify().isClean)
        try engine.close()
    }

    /// A crash at each mutating call of a compaction (three power-loss images each): the store
    /// recovers with every entry as before, and verifies.
    @Test func aCrashAnywhereInACompactionLosesNothing() throws {
        func options(_ fs: any FileSystem) -> EngineOptions {
            var o = EngineOptions()
            o.fileSystem = fs
            o.checkpointWALBytes = 64_000
            return o
        }
        let path = "/db/Compacting.docstore"
        // The store before compaction, made once; each crash point starts from a copy of it.
        let made = FaultInjectingFileSystem()
        let filler = try Engine.open(at: path, options: options(made))
        let expected = try Self.fillThenThin(filler, seed: 3, keys: 1_500)
        try filler.close()
        let base = made.crashImage(.applyAll)

        let clean = FaultInjectingFileSystem(files: base)
        let engine = try Engine.open(at: path, options: options(clean))
        let report = try engine.compact(pagesPerStep: 32)
        try engine.close()
        let calls = clean.callCount
        #expect(report.pagesMoved > 0 && calls > 20)
        var images = 0
        for point in 1...calls {
            let fs = FaultInjectingFileSystem(files: base)
            fs.crash(at: point)
            if let e = try? Engine.open(at: path, options: options(fs)) {
                _ = try? e.compact(pagesPerStep: 32)
                try? e.close()
            }
            for mode in [CrashMode.dropUnsynced, .applyAll, .random(seed: UInt64(point))] {
                images += 1
                let image = FaultInjectingFileSystem(files: fs.crashImage(mode))
                let where_ = "crash point \(point)/\(calls), \(mode)"
                do {
                    let recovered = try Engine.open(at: path, options: options(image))
                    #expect(try Self.contents(recovered) == expected, "\(where_)")
                    #expect(try recovered.verify().isClean, "\(where_)")
                    try recovered.close()
                } catch {
                    Issue.record("recovery failed: \(error) — \(where_)")
                }
            }
        }
        print("compaction crash campaign: \(calls) crash points, \(images) images")
    }
}
