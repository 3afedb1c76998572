// Buffered puts (PutBuffer): a write transaction applies consecutive puts to a tree in key order
// when something needs the tree. Whatever the order of calls, the transaction's reads, the
// committed state and the state replayed from the WAL after a crash must equal applying every
// operation one by one in call order.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

@Suite struct PutBufferTests {
    @Test func readsInTheTransactionSeeEveryEarlierPutAndTheLastPutOfAKeyWins() throws {
        let store = try TestStores.memory("PB")
        try store.engine.write { (txn) throws in
            try txn.createTree(named: "t")
            try txn.put([1], for: [9], in: "t")
            try txn.put([2], for: [3], in: "t")
            try txn.put([3], for: [9], in: "t")  // same key again: this one wins
            #expect(try txn.get([9], in: "t") == [3])
            #expect(try txn.count(in: "t") == 2)
            try txn.put([4], for: [9], in: "t")
            #expect(try txn.delete([9], in: "t"))   // the buffered put is applied first
            #expect(try txn.get([9], in: "t") == nil)
            try txn.put([5], for: [9], in: "t")
            var cursor = try txn.cursor(in: "t")
            #expect(try cursor.first()?.key == [3])
            #expect(try cursor.next()?.value == [5])
        }
        #expect(try store.engine.read { try $0.entries(in: "t").map(\.value) } == [[2], [5]])
    }

    @Test func putsToSeveralTreesAndBlobValuesKeepCallOrder() throws {
        let store = try TestStores.memory("PB2") { $0.blobThreshold = 4096 }
        let big = [UInt8](repeating: 7, count: 10_000)
        try store.engine.write { (txn) throws in
            try txn.createTree(named: "a")
            try txn.createTree(named: "b")
            try txn.put([1], for: [1], in: "a")
            try txn.put([2], for: [1], in: "b")    // another tree: "a" is applied first
            try txn.put([3], for: [1], in: "a")
            try txn.put(big, for: [2], in: "a")    // a blob value: not buffered, applied in order
            try txn.put([4], for: [2], in: "a")    // ...so this small put replaces it
            try txn.put([5], for: [3], in: "a")
            try txn.put(big, for: [3], in: "a")    // and this blob replaces the buffered [5]
        }
        try store.engine.read { (txn) throws in
            #expect(try txn.get([1], in: "a") == [3])
            #expect(try txn.get([1], in: "b") == [2])
            #expect(try txn.get([2], in: "a") == [4])
            #expect(try txn.get([3], in: "a") == big)
        }
        #expect(try store.engine.verify().isClean)
    }

    /// A fixed-seed random mix of puts (many repeating keys; one by one and in bulk), deletes
    /// (one by one and sorted) and reads over two trees,
    /// in transactions that commit or roll back, checked against a model after every read, after
    /// every commit, and after recovery replays the WAL (the log holds the puts in call order and
    /// replay applies them one by one, unbuffered).
    @Test func randomOperationsMatchAModelInTheTransactionAfterCommitAndAfterReplay() throws {
        let seed: UInt64 = 41
        var rng = SplitMix64(seed: seed)
        let store = try TestStores.memory("PBR") { $0.walPreallocationBytes = 0 }
        var committed: [String: [[UInt8]: [UInt8]]] = ["x": [:], "y": [:]]
        try store.engine.write { (txn) throws in
            try txn.createTree(named: "x")
            try txn.createTree(named: "y")
        }
        for round in 0..<30 {
            var model = committed
            let rollBack = rng.next() % 5 == 0
            try store.engine.write { (txn) throws in
                for step in 0..<400 {
                    let tree = rng.next() % 3 == 0 ? "y" : "x"
                    let key = [UInt8(rng.next() % 40), UInt8(rng.next() % 4)]
                    switch rng.next() % 10 {
                    case 0..<5:
                        let value = rng.bytes(Int(rng.next() % 60))
                        try txn.put(value, for: key, in: tree)
                        model[tree, default: [:]][key] = value
                    case 5:
                        // A bulk put (WriteTransaction.put(entries:in:)): any order, keys repeating.
                        var entries: [(key: [UInt8], value: [UInt8])] = []
                        for _ in 0..<Int(rng.next() % 12) {
                            entries.append(([UInt8(rng.next() % 40), UInt8(rng.next() % 4)], rng.bytes(Int(rng.next() % 60))))
                        }
                        if rng.next() % 2 == 0 { entries.sort { $0.key.lexicographicallyPrecedes($1.key) } }
                        try txn.put(entries: entries, in: tree)
                        for e in entries { model[tree, default: [:]][e.key] = e.value }
                    case 6:
                        let removed = try txn.delete(key, in: tree)
                        #expect(removed == (model[tree]?[key] != nil), "seed \(seed) round \(round) step \(step)")
                        model[tree]?[key] = nil
                    case 7:
                        let keys = (0..<Int(rng.next() % 8)).map { _ in [UInt8(rng.next() % 40), UInt8(rng.next() % 4)] }
                        let present = Set(keys).filter { model[tree]?[$0] != nil }.count
                        #expect(try txn.delete(keys: keys, in: tree) == present, "seed \(seed) round \(round) step \(step)")
                        for k in keys { model[tree]?[k] = nil }
                    case 8:
                        #expect(try txn.get(key, in: tree) == model[tree]?[key], "seed \(seed) round \(round) step \(step)")
                    default:
                        #expect(try txn.count(in: tree) == model[tree]?.count ?? 0, "seed \(seed) round \(round) step \(step)")
                    }
                }
                if rollBack { txn.rollback() }
            }
            if !rollBack { committed = model }
            for tree in ["x", "y"] {
                let entries = try store.engine.read { try $0.entries(in: tree) }
                #expect(entries.count == committed[tree]?.count, "seed \(seed) round \(round)")
                for e in entries { #expect(committed[tree]?[e.key] == e.value, "seed \(seed) round \(round)") }
            }
        }
        // Crash: the files as they are (no close, so no checkpoint), then recovery replays the WAL.
        var options = store.options
        options.fileSystem = MemoryFileSystem(files: store.fileSystem.snapshot())
        let reopened = try Engine.open(at: store.path, options: options)
        #expect(try reopened.walReport().records.count > 0, "the test should replay WAL records")
        for tree in ["x", "y"] {
            let entries = try reopened.read { try $0.entries(in: tree) }
            #expect(entries.count == committed[tree]?.count, "seed \(seed) after replay")
            for e in entries { #expect(committed[tree]?[e.key] == e.value, "seed \(seed) after replay") }
        }
        #expect(try reopened.verify().isClean)
    }

    /// Large buffered runs (BTree+SortedRun): thousands of keys over many leaves, in random
    /// order, new keys and replaced ones, inline and overflow values, into a tree whose
    /// committed pages the transaction must copy first — the result matches a model, the tree
    /// passes the integrity check, and so does a reopening that replays the WAL.
    @Test func largeSortedRunsOverManyLeavesMatchAModel() throws {
        let seed: UInt64 = 77
        var rng = SplitMix64(seed: seed)
        let store = try TestStores.memory("PBL") { $0.walPreallocationBytes = 0 }
        var model: [[UInt8]: [UInt8]] = [:]
        try store.engine.write { (txn) throws in try txn.createTree(named: "t") }
        for round in 0..<4 {
            try store.engine.write { (txn) throws in
                for _ in 0..<6_000 {
                    var key = [UInt8](repeating: 0, count: 4 + Int(rng.next() % 9))
                    for i in key.indices { key[i] = UInt8(rng.next() % (i < 2 ? 8 : 256)) }
                    let size = rng.next() % 50 == 0 ? 900 + Int(rng.next() % 3_000) : Int(rng.next() % 120)
                    let value = rng.bytes(size)
                    try txn.put(value, for: key, in: "t")
                    model[key] = value
                }
            }
            let entries = try store.engine.read { try $0.entries(in: "t") }
            #expect(entries.count == model.count, "seed \(seed) round \(round)")
            #expect(entries.map(\.key) == model.keys.sorted { PutBuffer.compare($0, $1) < 0 }, "seed \(seed) round \(round)")
            for e in entries where model[e.key] != e.value {
                Issue.record("seed \(seed) round \(round): wrong value for \(e.key)")
                break
            }
            #expect(try store.engine.verify().isClean, "seed \(seed) round \(round)")
        }
        var options = store.options
        options.fileSystem = MemoryFileSystem(files: store.fileSystem.snapshot())
        let reopened = try Engine.open(at: store.path, options: options)
        let replayed = try reopened.read { try $0.entries(in: "t") }
        #expect(replayed.count == model.count, "seed \(seed) after replay")
        #expect(try reopened.verify().isClean, "seed \(seed) after replay")
    }

    /// Stretches of a sorted run that fall in one full leaf go in together (BTree.spreadRun):
    /// thousands of keys at each of a few points inside a tree (a batch insert's links under
    /// each tag), appends past its end, inline values replaced inside a stretch, an overflow
    /// value in the middle of one, and keys near the longest allowed (few leaves at a time, or
    /// none) — the tree matches a model in the transaction, after commit and after replay, and
    /// passes the integrity check; keys appended in order fill their leaves.
    @Test func stretchesOfARunIntoFullLeavesMatchAModel() throws {
        let seed: UInt64 = 4242
        var rng = SplitMix64(seed: seed)
        let store = try TestStores.memory("PBS") { $0.walPreallocationBytes = 0 }
        var model: [[UInt8]: [UInt8]] = [:]
        func bigEndian(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
        func check(_ tree: String, _ model: [[UInt8]: [UInt8]], _ round: Int, in txn: Transaction) throws {
            let entries = try txn.entries(in: tree)
            let inOrder = entries.map(\.key) == model.keys.sorted { PutBuffer.compare($0, $1) < 0 }
            #expect(inOrder, "seed \(seed) round \(round): \(entries.count) keys in \(tree), \(model.count) in the model")
            for e in entries where model[e.key] != e.value {
                Issue.record("seed \(seed) round \(round): wrong value for \(e.key)")
                break
            }
        }
        try store.engine.write { (txn) throws in
            try txn.createTree(named: "t")
            try txn.createTree(named: "append")
            try txn.createTree(named: "long")
            try txn.createTree(named: "random")
        }
        // The first round starts from a one-leaf tree (the leaf is the root); later rounds add
        // at the end of each of 12 prefixes, replace some values and put an overflow value.
        var sequence = [UInt64](repeating: 0, count: 12)
        func sortedKeys(_ model: [[UInt8]: [UInt8]]) -> [[UInt8]] { model.keys.sorted { PutBuffer.compare($0, $1) < 0 } }
        for round in 0..<5 {
            try store.engine.write { (txn) throws in
                for _ in 0..<(round == 0 ? 40 : 9_000) {
                    let prefix = Int(rng.next() % 12)
                    sequence[prefix] += 1
                    let key: [UInt8] = [UInt8(prefix)] + bigEndian(sequence[prefix] * 4)
                    let value = rng.next() % 400 == 0 ? rng.bytes(1_500 + Int(rng.next() % 2_000)) : rng.bytes(10 + Int(rng.next() % 30))
                    try txn.put(value, for: key, in: "t")
                    model[key] = value
                }
                // Inline values of existing keys replaced among the new ones (a key's old value
                // may be an overflow one: the stretch stops there and `put` takes it).
                for key in sortedKeys(model).shuffled(using: &rng).prefix(round * 300) {
                    let value = rng.bytes(5 + Int(rng.next() % 40))
                    try txn.put(value, for: key, in: "t")
                    model[key] = value
                }
                try check("t", model, round, in: txn)
            }
            try store.engine.read { txn in try check("t", model, round, in: txn) }
            #expect(try store.engine.verify().isClean, "seed \(seed) round \(round)")
        }

        let middle = try #require(try store.engine.treeShape("t"))
        // Stretches go to leaves 9/10 full (the replaced values, of other sizes, leave some
        // holes): 0.80 with this seed, 0.74 when every entry goes in one by one.
        let middleLeaves = try #require(middle.levels.last)
        #expect(middleLeaves.fill(pageSize: middle.pageSize) > 0.77, "seed \(seed): leaves \(middleLeaves.fill(pageSize: middle.pageSize)) full")

        // Keys between the existing ones: all of prefix 2's gaps at once (more than one stretch
        // takes: it stops at its budget inside the tree), a key in a gap of every other prefix
        // here and there, after a third of prefix 5's keys are deleted (leaves with holes).
        try store.engine.write { (txn) throws in
            let prefix5 = sortedKeys(model).filter { $0.first == 5 }
            for key in prefix5 where rng.next() % 3 == 0 {
                _ = try txn.delete(key, in: "t")
                model[key] = nil
            }
            for s in 1...sequence[2] {
                let key: [UInt8] = [2] + bigEndian(s * 4 + 2)
                let value = rng.bytes(10 + Int(rng.next() % 30))
                try txn.put(value, for: key, in: "t")
                model[key] = value
            }
            for prefix in [0, 1, 3, 4, 5, 6, 7, 8, 9, 10, 11] as [UInt8] {
                for s in 1...sequence[Int(prefix)] where rng.next() % 4 == 0 {
                    let key: [UInt8] = [prefix] + bigEndian(s * 4 + 1 + rng.next() % 3)
                    let value = rng.next() % 300 == 0 ? rng.bytes(1_500) : rng.bytes(8 + Int(rng.next() % 30))
                    try txn.put(value, for: key, in: "t")
                    model[key] = value
                }
            }
            try check("t", model, 5, in: txn)
        }
        try store.engine.read { txn in try check("t", model, 5, in: txn) }
        #expect(try store.engine.verify().isClean, "seed \(seed) gaps")

        // A few random keys into a committed tree of random keys: short stretches go through
        // `put`, whose rebalance keeps the leaves as full as before — 0.800 with this seed,
        // 0.764 when every full leaf's stretch, however short, is split in new leaves.
        var random: [[UInt8]: [UInt8]] = [:]
        /// Puts `count` keys made by `key` (with values of `size` random bytes) into `tree` in one
        /// transaction, and into `model`.
        func putAll(_ count: Int, in tree: String, _ model: inout [[UInt8]: [UInt8]], size: Int, key: (Int) -> [UInt8]) throws {
            try store.engine.write { (txn) throws in
                for i in 0..<count {
                    let k = key(i), value = rng.bytes(size)
                    try txn.put(value, for: k, in: tree)
                    model[k] = value
                }
            }
        }
        /// How full `tree`'s leaves are (TreeShape's fill of its last level).
        func leafFill(_ tree: String) throws -> Double {
            let shape = try #require(try store.engine.treeShape(tree))
            return try #require(shape.levels.last).fill(pageSize: shape.pageSize)
        }
        for count in [20_000, 2_000] {
            try putAll(count, in: "random", &random, size: 100) { _ in bigEndian(rng.next()) + bigEndian(rng.next()) }
        }
        try store.engine.read { txn in try check("random", random, 0, in: txn) }
        let randomFill = try leafFill("random")
        #expect(randomFill > 0.78, "seed \(seed): random leaves \(randomFill) full")

        // Appends past the end fill their leaves: long runs, and short ones (a few keys a
        // transaction, each run finding the last leaf full; 0.83 if the full leaf's cells and
        // the new ones were shared evenly over two leaves instead of filling them in order).
        var appended: [[UInt8]: [UInt8]] = [:]
        for round in 0..<3 {
            try putAll(20_000, in: "append", &appended, size: 20) { bigEndian(UInt64(round * 20_000 + $0)) }
        }
        for round in 0..<400 {
            try putAll(25, in: "append", &appended, size: 20) { bigEndian(UInt64(60_000 + round * 25 + $0)) }
        }
        try store.engine.read { txn in try check("append", appended, 0, in: txn) }
        let appendFill = try leafFill("append")
        #expect(appendFill > 0.95, "leaves of appended keys \(appendFill) full")

        // Keys near the longest a page allows: a stretch can make at most a leaf or two.
        var long: [[UInt8]: [UInt8]] = [:]
        let longest = ValuePlacement.Limits(pageSize: store.options.pageSize, blobThreshold: .max).maxKeySize
        for round in 0..<3 {
            try store.engine.write { (txn) throws in
                for _ in 0..<300 {
                    let key = [UInt8](repeating: UInt8(rng.next() % 4), count: longest - 8 - Int(rng.next() % 200)) + bigEndian(rng.next())
                    let value = rng.bytes(Int(rng.next() % 8))
                    try txn.put(value, for: key, in: "long")
                    long[key] = value
                }
            }
            try store.engine.read { txn in try check("long", long, round, in: txn) }
        }
        #expect(try store.engine.verify().isClean, "seed \(seed)")

        var options = store.options
        options.fileSystem = MemoryFileSystem(files: store.fileSystem.snapshot())
        let reopened = try Engine.open(at: store.path, options: options)
        try reopened.read { txn in
            try check("t", model, -1, in: txn)
            try check("append", appended, -1, in: txn)
            try check("long", long, -1, in: txn)
            try check("random", random, -1, in: txn)
        }
        #expect(try reopened.verify().isClean, "seed \(seed) after replay")
    }

    /// A stretch short of half a page goes in together only as a block — new keys between the
    /// same two cells of the leaf, the end of a range that grows — and is left to `put` when it
    /// is scattered among the leaf's cells (BTree.spreadRun, called on one leaf).
    @Test func aShortStretchSpreadsAsABlockAndIsDeclinedWhenScattered() throws {
        let store = try TestStores.memory("PBB") { $0.walPreallocationBytes = 0 }
        func bigEndian(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
        let value = [UInt8](repeating: 7, count: 20)
        try store.engine.write { (txn) throws in
            /// A leaf of this transaction holding keys 0, 10, …, 1200.
            func leaf() -> Page {
                let page = txn.ws.newPage(.leaf)
                var cells = CellRun()
                for k in stride(from: 0, through: 1200, by: 10) {
                    bigEndian(UInt64(k)).withUnsafeBytes { key in value.withUnsafeBytes { cells.appendInlineLeafCell(key: key, value: $0) } }
                }
                cells.write(0..<cells.count, into: page, type: .leaf, link: .none)
                return page
            }
            // Nine keys between 500 and 510 (288 bytes, a sixteenth of a page or more): a block.
            let blockLeaf = leaf()
            let block = ArrayPutRun(entries: (501...509).map { (bigEndian(UInt64($0)), value) })
            switch try BTree.spreadRun(block, from: 0, over: blockLeaf, below: nil, path: [], root: blockLeaf.number, ws: txn.ws) {
            case .spread(_, let consumed, let added): #expect(consumed == 9 && added == 9)
            case let other: Issue.record("a block was not spread: \(other)")
            }
            // Twelve keys in twelve gaps (384 bytes): declined, nothing written.
            let scatteredLeaf = leaf()
            let scattered = ArrayPutRun(entries: (0..<12).map { (bigEndian(UInt64(5 + 100 * $0)), value) })
            switch try BTree.spreadRun(scattered, from: 0, over: scatteredLeaf, below: nil, path: [], root: scatteredLeaf.number, ws: txn.ws) {
            case .declined: #expect(scatteredLeaf.count == 121)
            case let other: Issue.record("a scattered short stretch was not declined: \(other)")
            }
        }
    }

    /// A range that grows at its end while the next range's first cells share its leaf: each
    /// block moves those cells once, not a block-sized piece of them at a time (which left a
    /// string of nearly empty leaves behind) — the leaves stay full.
    @Test func aGrowingRangeBeforeAnotherLeavesItsLeavesFull() throws {
        let store = try TestStores.memory("PBG") { $0.walPreallocationBytes = 0 }
        func bigEndian(_ v: UInt64) -> [UInt8] { withUnsafeBytes(of: v.bigEndian) { Array($0) } }
        var model: [[UInt8]: [UInt8]] = [:]
        var rng = SplitMix64(seed: 5150)
        try store.engine.write { (txn) throws in
            try txn.createTree(named: "g")
            for (prefix, count) in [(UInt8(0), 3), (1, 300)] {
                for s in 0..<count {
                    let key = [prefix] + bigEndian(UInt64(s)), value = rng.bytes(20)
                    try txn.put(value, for: key, in: "g")
                    model[key] = value
                }
            }
            _ = try txn.get([0], in: "g")
            for round in 0..<20 {
                for s in 0..<12 {
                    let key = [0] + bigEndian(UInt64(3 + round * 12 + s)), value = rng.bytes(20)
                    try txn.put(value, for: key, in: "g")
                    model[key] = value
                }
                _ = try txn.get([0], in: "g")     // applies the buffered puts: one run a round
            }
        }
        let entries = try store.engine.read { try $0.entries(in: "g") }
        #expect(entries.map(\.key) == model.keys.sorted { PutBuffer.compare($0, $1) < 0 })
        #expect(entries.allSatisfy { model[$0.key] == $0.value })
        let shape = try #require(try store.engine.treeShape("g"))
        let leaves = try #require(shape.levels.last)
        #expect(leaves.fill(pageSize: shape.pageSize) > 0.8, "leaves \(leaves.fill(pageSize: shape.pageSize)) full, \(leaves.pages) of them")
        #expect(try store.engine.verify().isClean)
    }

    /// `delete(keys:in:)` (BTree.deleteSorted): many keys over many leaves, some missing, some
    /// with overflow values, some emptying their leaf — the tree matches a model in the
    /// transaction, after commit and after replay of the log.
    @Test func sortedDeletesOverManyLeavesMatchAModel() throws {
        let seed: UInt64 = 91
        var rng = SplitMix64(seed: seed)
        let store = try TestStores.memory("PBD") { $0.walPreallocationBytes = 0 }
        var model: [[UInt8]: [UInt8]] = [:]
        try store.engine.write { (txn) throws in
            try txn.createTree(named: "t")
            for _ in 0..<8_000 {
                var key = [UInt8](repeating: 0, count: 4 + Int(rng.next() % 6))
                for i in key.indices { key[i] = UInt8(rng.next() % 256) }
                let value = rng.bytes(rng.next() % 40 == 0 ? 1_500 : Int(rng.next() % 90))
                try txn.put(value, for: key, in: "t")
                model[key] = value
            }
        }
        for round in 0..<3 {
            try store.engine.write { (txn) throws in
                var doomed: [[UInt8]] = []
                for key in model.keys where rng.next() % 3 == 0 { doomed.append(key) }
                // Whole runs: every key of a stretch, so leaves empty and go.
                let sorted = model.keys.sorted { PutBuffer.compare($0, $1) < 0 }
                let start = Int(rng.next() % UInt64(max(1, sorted.count - 400)))
                doomed += sorted[start..<min(sorted.count, start + 300)]
                doomed += (0..<50).map { _ in rng.bytes(7) }          // mostly not there
                let expected = Set(doomed).filter { model[$0] != nil }.count
                let removed = try txn.delete(keys: doomed.shuffled(using: &rng), in: "t")
                #expect(removed == expected, "seed \(seed) round \(round)")
                for k in doomed { model[k] = nil }
                let inside = try txn.entries(in: "t")
                #expect(inside.count == model.count, "seed \(seed) round \(round), in the transaction")
            }
            let entries = try store.engine.read { try $0.entries(in: "t") }
            #expect(entries.map(\.key) == model.keys.sorted { PutBuffer.compare($0, $1) < 0 }, "seed \(seed) round \(round)")
            #expect(entries.allSatisfy { model[$0.key] == $0.value }, "seed \(seed) round \(round)")
            #expect(try store.engine.verify().isClean, "seed \(seed) round \(round)")
        }
        var options = store.options
        options.fileSystem = MemoryFileSystem(files: store.fileSystem.snapshot())
        let reopened = try Engine.open(at: store.path, options: options)
        let replayed = try reopened.read { try $0.entries(in: "t") }
        #expect(replayed.count == model.count && replayed.allSatisfy { model[$0.key] == $0.value }, "seed \(seed) after replay")
        #expect(try reopened.verify().isClean, "seed \(seed) after replay")
    }
}
