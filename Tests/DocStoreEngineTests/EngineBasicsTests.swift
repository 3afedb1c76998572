// Engine basics: trees, put/get/delete, values of every size, cursors, persistence across
// reopen, on both the real file system and the in-memory one.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

/// Opens a store on a fresh path of the given file system kind.
func makeStore(_ kind: String, options: EngineOptions = EngineOptions()) throws -> (Engine, String, any FileSystem, TemporaryDirectory) {
    let dir = TemporaryDirectory()
    var options = options
    let fs: any FileSystem
    let path: String
    if kind == "memory" {
        fs = MemoryFileSystem()
        try fs.createDirectory("/db")
        path = "/db/Test.docstore"
    } else {
        fs = FoundationFileSystem()
        path = dir.file("Test.docstore")
    }
    options.fileSystem = fs
    return (try Engine.open(at: path, options: options), path, fs, dir)
}

@Suite struct EngineBasicsTests {
    @Test(arguments: ["memory", "real"])
    func putThenGetReturnsTheValue(kind: String) throws {
        let (engine, _, _, _) = try makeStore(kind)
        try engine.write { txn in
            try txn.createTree(named: "notes")
            try txn.put(bytes("hello"), for: bytes("k1"), in: "notes")
        }
        let v = try engine.read { try $0.get(bytes("k1"), in: "notes") }
        #expect(v == bytes("hello"))
        let missing = try engine.read { try $0.get(bytes("k2"), in: "notes") }
        #expect(missing == nil)
        try engine.close()
    }

    @Test func missingTreeThrowsTreeNotFound() throws {
        let (engine, _, _, _) = try makeStore("memory")
        #expect(throws: EngineError.self) { try engine.read { try $0.get(bytes("a"), in: "nope") } }
        do {
            _ = try engine.read { try $0.get(bytes("a"), in: "nope") }
        } catch let e as EngineError {
            #expect(e.code == .treeNotFound)
        }
    }

    @Test func reservedTreeNameIsRejected() throws {
        let (engine, _, _, _) = try makeStore("memory")
        do {
            try engine.write { try $0.createTree(named: "$blobs") }
            Issue.record("expected invalidArgument")
        } catch let e as EngineError {
            #expect(e.code == .invalidArgument)
        }
    }

    @Test(arguments: ["memory", "real"])
    func manyRandomKeysMatchAnOrderedModel(kind: String) throws {
        let seed: UInt64 = 7
        var rng = SplitMix64(seed: seed)
        let (engine, path, fs, dir) = try makeStore(kind)
        _ = dir
        var model: [[UInt8]: [UInt8]] = [:]
        try engine.write { try $0.createTree(named: "t") }
        for round in 0..<20 {
            try engine.write { txn in
                for _ in 0..<500 {
                    let key = rng.bytes(Int(rng.next() % 24) + 1)
                    let r = rng.next() % 10
                    if r < 7 {
                        let value = rng.bytes(Int(rng.next() % 200))
                        try txn.put(value, for: key, in: "t")
                        model[key] = value
                    } else if let victim = model.keys.randomElement(using: &rng) {
                        #expect(try txn.delete(victim, in: "t"), "seed \(seed) round \(round)")
                        model[victim] = nil
                    }
                }
            }
        }
        func check(_ engine: Engine) throws {
            try engine.read { txn in
                #expect(try txn.count(in: "t") == model.count, "seed \(seed)")
                let all = try txn.entries(in: "t")
                let expected = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }
                #expect(all.map(\.key) == expected.map(\.key), "seed \(seed)")
                #expect(all.map(\.value) == expected.map(\.value), "seed \(seed)")
                let reversed = try txn.entries(in: "t", reverse: true)
                #expect(reversed.map(\.key) == expected.reversed().map(\.key), "seed \(seed)")
                for (k, v) in model.prefix(300) { #expect(try txn.get(k, in: "t") == v, "seed \(seed)") }
            }
            let report = try engine.verify()
            #expect(report.problems.isEmpty, "seed \(seed): \(report.problems)")
        }
        try check(engine)
        try engine.close()
        var options = EngineOptions()
        options.fileSystem = fs
        let reopened = try Engine.open(at: path, options: options)
        try check(reopened)
        try reopened.close()
    }

    @Test(arguments: [0, 1, 100, 1_000, 5_000, 70_000, 300_000])
    func valuesOfEverySizeRoundTrip(size: Int) throws {
        var rng = SplitMix64(seed: UInt64(size))
        var options = EngineOptions()
        options.blobThreshold = 200_000
        let (engine, path, fs, _) = try makeStore("memory", options: options)
        let random = rng.bytes(size)
        let compressible = [UInt8](repeating: 0x41, count: size)
        try engine.write { txn in
            try txn.createTree(named: "v")
            try txn.put(random, for: bytes("random"), in: "v")
            try txn.put(compressible, for: bytes("same"), in: "v")
        }
        #expect(try engine.read { try $0.get(bytes("random"), in: "v") } == random)
        #expect(try engine.read { try $0.get(bytes("same"), in: "v") } == compressible)
        try engine.close()
        options.fileSystem = fs
        let again = try Engine.open(at: path, options: options)
        #expect(try again.read { try $0.get(bytes("random"), in: "v") } == random)
        #expect(try again.read { try $0.get(bytes("same"), in: "v") } == compressible)
        #expect(try again.verify().problems.isEmpty)
        try again.close()
    }

    @Test func keyLongerThanTheLimitThrowsKeyTooLarge() throws {
        let (engine, _, _, _) = try makeStore("memory")
        do {
            try engine.write { txn in
                try txn.createTree(named: "t")
                try txn.put([], for: [UInt8](repeating: 1, count: 5000), in: "t")
            }
            Issue.record("expected keyTooLarge")
        } catch let e as EngineError {
            #expect(e.code == .keyTooLarge)
        }
        // The failed transaction left nothing behind.
        #expect(try engine.read { try $0.treeExists("t") } == false)
    }

    @Test func throwingBodyRollsBackEverything() throws {
        struct Boom: Error {}
        let (engine, _, _, _) = try makeStore("memory")
        try engine.write { try $0.createTree(named: "t") }
        #expect(throws: Boom.self) {
            try engine.write { txn in
                try txn.put(bytes("x"), for: bytes("a"), in: "t")
                throw Boom()
            }
        }
        #expect(try engine.read { try $0.count(in: "t") } == 0)
    }

    @Test func snapshotDoesNotSeeLaterCommits() throws {
        let (engine, _, _, _) = try makeStore("memory")
        try engine.write { txn in
            try txn.createTree(named: "t")
            try txn.put(bytes("1"), for: bytes("a"), in: "t")
        }
        let snapshot = try engine.beginRead()
        try engine.write { txn in
            try txn.put(bytes("2"), for: bytes("a"), in: "t")
            try txn.put(bytes("3"), for: bytes("b"), in: "t")
        }
        // Churn enough that freed pages would be reused if the snapshot did not hold them (I9).
        for i in 0..<200 {
            try engine.write { try $0.put(bytes("v\(i)"), for: bytes("k\(i)"), in: "t") }
        }
        #expect(try snapshot.get(bytes("a"), in: "t") == bytes("1"))
        #expect(try snapshot.get(bytes("b"), in: "t") == nil)
        #expect(try snapshot.count(in: "t") == 1)
        snapshot.close()
        #expect(throws: EngineError.self) { try snapshot.get(bytes("a"), in: "t") }
        #expect(try engine.read { try $0.get(bytes("a"), in: "t") } == bytes("2"))
    }

    @Test func cursorSeeksAndWalksBothWays() throws {
        let (engine, _, _, _) = try makeStore("memory")
        try engine.write { txn in
            try txn.createTree(named: "t")
            for i in stride(from: 0, to: 2000, by: 2) {
                try txn.put(bytes("\(i)"), for: withUnsafeBytes(of: UInt32(i).bigEndian, Array.init), in: "t")
            }
        }
        try engine.read { txn in
            var c = try txn.cursor(in: "t")
            let k = { (i: UInt32) in withUnsafeBytes(of: i.bigEndian, Array.init) }
            #expect(try c.seek(to: k(501))?.key == k(502))
            #expect(try c.next()?.key == k(504))
            #expect(try c.previous()?.key == k(502))
            #expect(try c.previous()?.key == k(500))
            #expect(try c.seek(atOrBefore: k(501))?.key == k(500))
            #expect(try c.seek(to: k(5000)) == nil)
            #expect(try c.first()?.key == k(0))
            #expect(try c.previous() == nil)
            #expect(try c.last()?.key == k(1998))
            #expect(try c.next() == nil)
            let range = try txn.entries(in: "t", from: k(100), to: k(110))
            #expect(range.map(\.key) == [k(100), k(102), k(104), k(106), k(108)])
        }
    }

    /// withValue(forKey:) hands over exactly what get returns — in place for a value in its leaf,
    /// assembled for an overflow one — and nil for a missing key, in any order of lookups.
    /// A store with tree "t" of keys 0, step, 2·step … below 3 000 (4-byte big-endian), every
    /// `overflowEvery`-th one with a value too large for its leaf.
    static func numberedTree(step: Int, overflowEvery: Int) throws -> Engine {
        let (engine, _, _, _) = try makeStore("memory")
        try engine.write { txn in
            try txn.createTree(named: "t")
            for i in stride(from: 0, to: 3_000, by: step) {
                let value = i % overflowEvery == 0 ? [UInt8](repeating: UInt8(i % 251), count: 9_000) : bytes("value \(i)")
                try txn.put(value, for: numberedKey(UInt32(i)), in: "t")
            }
        }
        return engine
    }

    static func numberedKey(_ i: UInt32) -> [UInt8] { withUnsafeBytes(of: i.bigEndian, Array.init) }

    @Test func withValueMatchesGetForInlineAndOverflowValues() throws {
        let engine = try Self.numberedTree(step: 2, overflowEvery: 97)
        let k = Self.numberedKey
        var rng = SplitMix64(seed: 23)
        let keys = (0..<2_000).map { _ in UInt32(rng.next() % 3_100) }
        try engine.read { txn in
            var cursor = try txn.cursor(in: "t")
            // Random order; ascending with gaps (the next leaf is tried before a descent);
            // every key in order (the next entry is tried first); descending.
            let every = Array(UInt32(0)..<3_100)
            for key in keys + keys.sorted() + every + every.reversed() {
                let inPlace = try cursor.withValue(forKey: k(key)) { Array($0) }
                #expect(inPlace == (try txn.get(k(key), in: "t")), "key \(key)")
            }
        }
    }

    /// A tree "t" of the even numbers below 120 000 (numbered keys, forty-byte values): deep
    /// enough for a level between the root and the leaves.
    private func evenKeysToOneHundredTwentyThousand() throws -> Engine {
        let (engine, _, _, _) = try makeStore("memory")
        try engine.write { txn in
            try txn.createTree(named: "t")
            for i in stride(from: 0, to: 120_000, by: 2) {
                try txn.put(bytes("value of \(i) padded to about forty bytes"), for: Self.numberedKey(UInt32(i)), in: "t")
            }
        }
        return engine
    }

    /// Ascending lookups far apart in a tree three levels deep climb the cursor's path only to
    /// the branch they share with the last one: each finds what `get` finds, present or not,
    /// for strides within a leaf, across leaves, across level-two branches, and with a key
    /// before the cursor's leaf now and then (a descent from the root).
    @Test func ascendingLookupsThroughTheCursorsPathMatchGet() throws {
        let engine = try evenKeysToOneHundredTwentyThousand()
        #expect(try engine.treeShape("t")?.depth ?? 0 >= 3, "the tree must have a level between root and leaves")
        try engine.read { txn in
            var rng = SplitMix64(seed: 29)
            for stride in [1, 7, 37, 501, 3_001, 40_001] {
                var cursor = try txn.cursor(in: "t")
                var key = UInt32(rng.next() % 100)
                var checked = 0
                while key < 120_010 {
                    let found = try cursor.withValue(forKey: Self.numberedKey(key)) { Array($0) }
                    #expect(found == (try txn.get(Self.numberedKey(key), in: "t")), "stride \(stride), key \(key)")
                    checked += 1
                    // Now and then a step back, below the cursor's leaf.
                    key = rng.next() % 50 == 0 && key > 5_000 ? key - 5_000 : key + UInt32(stride) + UInt32(rng.next() % 3)
                    if checked > 30_000 { break }
                }
                #expect(checked > 2)
            }
        }
    }

    /// `move(forwardTo:)` lands where `move(to:)` from the root does — on the first key at or
    /// after the one asked for, or nowhere past the last — for keys between the stored ones and
    /// on them, strides within a leaf and across branches, a step back now and then, and a move
    /// after the cursor ran off the end.
    @Test func movingForwardLandsWhereAMoveFromTheRootDoes() throws {
        let engine = try evenKeysToOneHundredTwentyThousand()
        try engine.read { txn in
            var rng = SplitMix64(seed: 31)
            for stride in [1, 3, 37, 501, 40_001] {
                var forward = try txn.cursor(in: "t")
                var key = UInt32(rng.next() % 100)
                var checked = 0, restarts = 0
                while checked < 20_000 && restarts < 2 {
                    let moved = try forward.move(forwardTo: Self.numberedKey(key))
                    var fresh = try txn.cursor(in: "t")
                    let expected = try fresh.move(to: Self.numberedKey(key))
                    #expect(moved == expected, "stride \(stride), key \(key)")
                    #expect(forward.key == fresh.key, "stride \(stride), key \(key)")
                    checked += 1
                    if key > 120_010 {
                        key = UInt32(rng.next() % 1_000)     // off the end: start again
                        restarts += 1
                    } else {
                        // Now and then a step back: within the leaf, or below it.
                        let back = [0, 3, 5_000][Int(rng.next() % 40 == 0 ? 1 + rng.next() % 2 : 0)]
                        key = key > UInt32(back) && back > 0 ? key - UInt32(back) : key + UInt32(stride) + UInt32(rng.next() % 2)
                    }
                }
                #expect(checked > 3)
            }
        }
    }

    /// Eight-byte keys start their leaf search where the parent's separators say the key would
    /// sit if the leaf were evenly filled (`BTree.leafSearch(_:_:parent:)`). Whatever the keys'
    /// spread — dense runs, runs with holes, lone keys far apart, a run deleted — every lookup,
    /// through `get` and through a cursor, finds what a model holds, present or not.
    @Test(arguments: [41, 42] as [UInt64]) func eightByteKeysAreFoundWhateverTheirSpread(seed: UInt64) throws {
        let (engine, _, _, _) = try makeStore("memory")
        var rng = SplitMix64(seed: seed)
        var model: [UInt64: [UInt8]] = [:]
        for i in 0..<6_000 as Range<UInt64> { model[1 << 48 | i] = bytes("dense \(i)") }
        for i in 0..<6_000 as Range<UInt64> where rng.next() % 3 != 0 { model[2 << 48 | (i * 7)] = bytes("holes \(i)") }
        for _ in 0..<3_000 { model[3 << 48 | (rng.next() >> 20)] = bytes("sparse") }
        for i in 0..<2_000 as Range<UInt64> { model[4 << 48 | (i < 1_000 ? i : 1 << 40 | i)] = bytes("two runs \(i)") }
        func key(_ k: UInt64) -> [UInt8] { withUnsafeBytes(of: k.bigEndian, Array.init) }
        try engine.write { txn in
            try txn.createTree(named: "t")
            for (k, v) in model.sorted(by: { $0.key < $1.key }) { try txn.put(v, for: key(k), in: "t") }
        }
        // A run taken out again, so leaves are left with gaps their separators do not show.
        try engine.write { txn in
            for i in 2_000..<2_600 as Range<UInt64> {
                _ = try txn.delete(key(1 << 48 | i), in: "t")
                model[1 << 48 | i] = nil
            }
        }
        var probes = Array(model.keys)
        probes += model.keys.flatMap { [$0 &+ 1, $0 &- 1] }
        probes += (0..<5_000).map { _ in UInt64(1 + rng.next() % 4) << 48 | rng.next() % 50_000 }
        try engine.read { txn in
            for k in probes {
                #expect(try txn.get(key(k), in: "t") == model[k], "seed \(seed), key \(String(k, radix: 16))")
            }
            var cursor = try txn.cursor(in: "t")
            for k in probes.sorted() {
                #expect(try cursor.withValue(forKey: key(k)) { Array($0) } == model[k], "seed \(seed), key \(String(k, radix: 16))")
            }
        }
    }

    /// A scan in place (move, withCurrent, advance) visits exactly the entries `entries` lists,
    /// from any start key.
    @Test func anInPlaceScanVisitsWhatEntriesLists() throws {
        let engine = try Self.numberedTree(step: 3, overflowEvery: 89)
        let k = Self.numberedKey
        try engine.read { txn in
            for start in [0, 1, 1_500, 2_998, 3_000] as [UInt32] {
                var cursor = try txn.cursor(in: "t")
                var seen: [(key: [UInt8], value: [UInt8])] = []
                var more = try cursor.move(to: k(start))
                while more {
                    if let entry = try cursor.withCurrent({ (key, value) in (Array(key), Array(value)) }) { seen.append(entry) }
                    more = try cursor.advance()
                }
                let expected = try txn.entries(in: "t", from: k(start), to: nil)
                #expect(seen.map(\.key) == expected.map(\.key) && seen.map(\.value) == expected.map(\.value), "from \(start)")
            }
        }
    }

    @Test func dropTreeFreesItsPages() throws {
        let (engine, _, _, _) = try makeStore("memory")
        try engine.write { txn in
            try txn.createTree(named: "big")
            for i in 0..<3000 { try txn.put([UInt8](repeating: 7, count: 300), for: bytes("key\(i)"), in: "big") }
        }
        try engine.checkpoint()
        let before = engine.statistics()
        try engine.write { try $0.dropTree(named: "big") }
        try engine.checkpoint()
        let after = engine.statistics()
        #expect(after.freePages > before.freePages + 200)
        #expect(try engine.read { try $0.treeNames() } == [])
        #expect(try engine.verify().problems.isEmpty)
    }

    @Test func smallCacheEvictsCleanPagesAndStillReadsEverything() throws {
        var options = EngineOptions()
        options.cacheBytes = 64 * 4096  // the minimum: 64 pages
        options.checkpointWALBytes = 256 << 10
        let (engine, path, fs, _) = try makeStore("memory", options: options)
        var rng = SplitMix64(seed: 21)
        var model: [[UInt8]: [UInt8]] = [:]
        for _ in 0..<10 {
            try engine.write { txn in
                try txn.createTreeIfMissing("t")
                for _ in 0..<400 {
                    let k = rng.bytes(12), v = rng.bytes(Int(rng.next() % 300))
                    model[k] = v
                    try txn.put(v, for: k, in: "t")
                }
            }
        }
        try engine.read { txn in
            for (k, v) in model {
                let stored = try txn.get(k, in: "t")
                #expect(stored == v)
            }
        }
        #expect(try engine.verify().isClean)
        try engine.close()
        options.fileSystem = fs
        let again = try Engine.open(at: path, options: options)
        let count = try again.read { try $0.entries(in: "t").count }
        #expect(count == model.count)
    }
}

@Suite struct BlobRegressionTests {
    // Regression: a value committed as an ordinary put (overflow pages) was re-stored as an
    // unregistered blob file when the WAL was replayed with a lower blob threshold; the orphan
    // sweep then deleted the file and the value read back as "corrupt: blob missing". Cause:
    // makeLeafCell moved large .bytes values to blobs itself. Fix: only WriteTransaction.put
    // decides on blobs (and logs putBlob); a replayed put stays in the page file.
    @Test func reopeningWithALowerBlobThresholdKeepsEveryValue() throws {
        let store = try TestStores.memory("B") { options in
            options.blobThreshold = 1 << 20
        }
        let engine = store.engine
        let fs = store.fileSystem
        var options = store.options
        let value = (0..<50_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try engine.write { txn in
            try txn.createTree(named: "t")
            try txn.put(value, for: [1], in: "t")
        }
        // No close: the put lives only in the WAL.
        options.blobThreshold = 10_000
        let image = MemoryFileSystem(files: fs.snapshot())
        options.fileSystem = image
        let reopened = try Engine.open(at: "/db/B.docstore", options: options)
        #expect(try reopened.read { try $0.get([1], in: "t") } == value)
        #expect(try reopened.verify().isClean)
    }

    @Test func blobFilesAreRemovedOnceTheirDeleteIsCheckpointed() throws {
        let store = try TestStores.memory("C") { options in
            options.blobThreshold = 10_000
        }
        let engine = store.engine
        let fs = store.fileSystem
        try engine.write { txn in
            try txn.createTree(named: "t")
            try txn.put([UInt8](repeating: 7, count: 20_000), for: [1], in: "t")
        }
        #expect(try fs.listDirectory("/db/C.docstore-blobs").count == 1)
        let snapshot = try engine.beginRead()
        try engine.write { try $0.delete([1], in: "t") }
        try engine.checkpoint()
        try engine.write { try $0.put([1], for: [2], in: "t") }
        // The snapshot still reads the blob, so its file stays (I7, I9).
        #expect(try snapshot.get([1], in: "t") == [UInt8](repeating: 7, count: 20_000))
        snapshot.close()
        try engine.write { try $0.put([2], for: [3], in: "t") }
        #expect(try fs.listDirectory("/db/C.docstore-blobs").isEmpty)
        #expect(try engine.verify().isClean)
    }
}

@Suite struct PageSizeAndBlobSweepTests {
    @Test(arguments: [4096, 16384, 65536])
    func everyPageSizeStoresAndReopens(pageSize: Int) throws {
        let store = try TestStores.memory("P") { options in
            options.pageSize = pageSize
        }
        let engine = store.engine
        var options = store.options
        var rng = SplitMix64(seed: UInt64(pageSize))
        var model: [[UInt8]: [UInt8]] = [:]
        try engine.write { txn in
            try txn.createTree(named: "t")
            for _ in 0..<3000 {
                let k = rng.bytes(Int(rng.next() % 40) + 1), v = rng.bytes(Int(rng.next() % 3000))
                model[k] = v
                try txn.put(v, for: k, in: "t")
            }
        }
        try engine.close()
        // Reopening ignores the requested page size: the store keeps its own.
        options.pageSize = 4096
        let again = try Engine.open(at: "/db/P.docstore", options: options)
        #expect(again.pageSize == pageSize)
        let entries = try again.read { try $0.entries(in: "t") }
        #expect(entries.count == model.count)
        #expect(entries.allSatisfy { model[$0.key] == $0.value })
        #expect(try again.verify().isClean)
    }

    @Test func invalidPageSizeIsRejected() {
        var options = EngineOptions()
        options.fileSystem = MemoryFileSystem()
        options.pageSize = 5000
        #expect(throws: EngineError.self) { try Engine.open(at: "/x.docstore", options: options) }
    }

    @Test func orphanBlobFilesAreSweptAtOpenAndReferencedOnesKept() throws {
        let store = try TestStores.memory("S") { options in
            options.blobThreshold = 5000
        }
        let engine = store.engine
        let fs = store.fileSystem
        let options = store.options
        try engine.write { txn in
            try txn.createTree(named: "t")
            try txn.put([UInt8](repeating: 5, count: 8000), for: [1], in: "t")
        }
        try engine.close()
        // A blob file that no tree references (left by a transaction that never committed).
        let orphan = "/db/S.docstore-blobs/" + BlobID(0xABCDEF).fileName
        fs.setContents(of: orphan, to: [1, 2, 3])
        #expect(try fs.listDirectory("/db/S.docstore-blobs").count == 2)
        let again = try Engine.open(at: "/db/S.docstore", options: options)
        #expect(try fs.listDirectory("/db/S.docstore-blobs").count == 1)
        #expect(!fs.fileExists(orphan))
        #expect(try again.read { try $0.get([1], in: "t") } == [UInt8](repeating: 5, count: 8000))
    }
}

@Suite struct WALPreallocationTests {
    /// A checkpoint leaves the WAL at its 32-byte header (an idle store holds no zeros); the first
    /// commit after it allocates one step, and the commits after that overwrite it.
    @Test func checkpointLeavesAHeaderOnlyWALAndTheNextCommitAllocates() throws {
        let store = try TestStores.memory("C") { $0.walPreallocationBytes = 64 << 10 }
        let engine = store.engine
        try engine.write { txn in try txn.createTreeIfMissing("t"); try txn.put([1], for: [1], in: "t") }
        try engine.checkpoint()
        #expect(store.fileSystem.contents(of: "/db/C.docstore-wal")?.count == WALFormat.headerSize)
        try engine.write { try $0.put([2], for: [2], in: "t") }
        #expect(store.fileSystem.contents(of: "/db/C.docstore-wal")?.count == 64 << 10)
        try engine.close()
        #expect(store.fileSystem.contents(of: "/db/C.docstore-wal")?.count == WALFormat.headerSize)
        let again = try Engine.open(at: store.path, options: store.options)
        #expect(try again.read { try $0.count(in: "t") } == 2)
        try again.close()
    }

    @Test func preallocatedZerosAreNotATornTailAndSurviveReopen() throws {
        let store = try TestStores.memory("W") { options in
            options.walPreallocationBytes = 64 << 10
        }
        let engine = store.engine
        let fs = store.fileSystem
        let options = store.options
        for i in 0..<5 { try engine.write { txn in try txn.createTreeIfMissing("t"); try txn.put([UInt8(i)], for: [UInt8(i)], in: "t") } }
        let wal = try #require(fs.contents(of: "/db/W.docstore-wal"))
        #expect(wal.count == 64 << 10, "the WAL is preallocated in 64 KiB steps")
        let report = try engine.walReport()
        #expect(report.records.count == 5)
        #expect(report.tailBytes == 0 && report.stopReason == nil)
        #expect(report.preallocatedBytes > 0)
        // Reopen from what is on disk: all five commits, the zeros kept, appends continue.
        let again = try Engine.open(at: "/db/W.docstore", options: { var o = options; o.fileSystem = MemoryFileSystem(files: fs.snapshot()); return o }())
        #expect(try again.read { try $0.count(in: "t") } == 5)
        try again.write { try $0.put([9], for: [9], in: "t") }
        #expect(try again.walReport().records.count == 6)
    }
}
