// Packed bulk puts (PutEntries, WriteTransaction.put(entries:in:)) across chunk boundaries: runs
// of several megabytes — entries of random sizes, one larger than a chunk, keys out of order and
// repeated, values written in place — read back exactly, in the transaction, after commit and
// after the WAL is replayed. The random small-run cases are in PutBufferTests.

import DocStoreEngine
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct PutEntriesTests {
    /// Link keys written in place (two big-endian words, no value) among ordinary entries, over
    /// several chunks: each reads back as the 16 bytes it names.
    @Test func linkKeysWrittenInPlaceReadBackAsTheirBytes() throws {
        var rng = SplitMix64(seed: 9)
        let store = try TestStores.memory("PL") { $0.walPreallocationBytes = 0 }
        try store.engine.write { (txn) throws in try txn.createTree(named: "t") }
        var model: [[UInt8]: [UInt8]] = [:]
        var entries = PutEntries()
        for i in 0..<150_000 {
            let (a, b) = (rng.next(), rng.next())
            let key = withUnsafeBytes(of: a.bigEndian) { Array($0) } + withUnsafeBytes(of: b.bigEndian) { Array($0) }
            if i % 10 == 0 {
                let value = rng.bytes(Int(rng.next() % 40))
                entries.append(key: key, value: value)
                model[key] = value
            } else {
                entries.append(keyOf: a, b)
                model[key] = []
            }
        }
        #expect(entries.byteCount == model.reduce(0) { $0 + $1.key.count + $1.value.count })
        try store.engine.write { (txn) throws in try txn.put(entries: entries, in: "t") }
        let stored = try store.engine.read { try $0.entries(in: "t") }
        #expect(stored.count == model.count)
        for e in stored { #expect(model[e.key] == e.value, "key \(e.key)") }
    }

    @Test(arguments: [3, 4] as [UInt64])
    func runsOverManyChunksReadBackExactly(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let store = try TestStores.memory("PE") { $0.walPreallocationBytes = 0 }
        try store.engine.write { (txn) throws in try txn.createTree(named: "t") }
        var model: [[UInt8]: [UInt8]] = [:]
        try store.engine.write { (txn) throws in
            var entries = PutEntries()
            for i in 0..<4000 {
                // Keys repeat (a later put wins) and arrive out of order.
                let n = UInt32(truncatingIfNeeded: rng.next() % 3000)
                var key = withUnsafeBytes(of: n.bigEndian) { Array($0) }
                if i % 7 == 0 { key += rng.bytes(Int(rng.next() % 20)) }
                let size = i == 1234 ? (1 << 20) + 4321 : Int(rng.next() % 1800)
                let value = rng.bytes(size)
                if i % 3 == 0 {
                    entries.append(key: key, valueCapacity: size / 2) { $0.append(contentsOf: value) }
                } else {
                    entries.append(key: key, value: value)
                }
                model[key] = value
            }
            #expect(entries.count == 4000, "seed \(seed)")
            try txn.put(entries: entries, in: "t")
            let inside = try txn.entries(in: "t")
            #expect(inside.count == model.count, "seed \(seed): in the transaction")
            for e in inside { #expect(model[e.key] == e.value, "seed \(seed): in the transaction, key \(e.key)") }
        }
        let committed = try store.engine.read { try $0.entries(in: "t") }
        #expect(committed.count == model.count, "seed \(seed): after commit")
        for e in committed { #expect(model[e.key] == e.value, "seed \(seed): after commit, key \(e.key)") }

        var options = store.options
        options.fileSystem = MemoryFileSystem(files: store.fileSystem.snapshot())
        let reopened = try Engine.open(at: store.path, options: options)
        let replayed = try reopened.read { try $0.entries(in: "t") }
        #expect(replayed.count == model.count, "seed \(seed): after replay")
        for e in replayed { #expect(model[e.key] == e.value, "seed \(seed): after replay, key \(e.key)") }
    }

    /// More entries than one segment of spans holds (65 536), so entries are found across
    /// segments, in reverse order (the transaction sorts them).
    @Test func moreEntriesThanASegmentHolds() throws {
        let store = try TestStores.memory("PES") { $0.walPreallocationBytes = 0 }
        try store.engine.write { (txn) throws in try txn.createTree(named: "t") }
        let n = 70_000
        try store.engine.write { (txn) throws in
            var entries = PutEntries()
            for i in (0..<n).reversed() {
                entries.append(key: withUnsafeBytes(of: UInt32(i).bigEndian) { Array($0) }, value: [UInt8(i & 0xFF), UInt8(i >> 8 & 0xFF)])
            }
            try txn.put(entries: entries, in: "t")
        }
        let stored = try store.engine.read { try $0.entries(in: "t") }
        #expect(stored.count == n)
        for (i, e) in stored.enumerated() {
            #expect(e.key == withUnsafeBytes(of: UInt32(i).bigEndian) { Array($0) } && e.value == [UInt8(i & 0xFF), UInt8(i >> 8 & 0xFF)], "entry \(i)")
            if e.value != [UInt8(i & 0xFF), UInt8(i >> 8 & 0xFF)] { break }
        }
    }

    /// P3: a copy is a value. Two copies appended to in turn (across chunks and span segments,
    /// values written in place too) each keep exactly their own entries; a copy whose twin is
    /// gone appends in place.
    @Test(arguments: [5, 6] as [UInt64])
    func copiesAppendedToInTurnKeepTheirOwnEntries(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        func key(_ tag: UInt8, _ i: Int) -> [UInt8] { [tag] + withUnsafeBytes(of: UInt32(i).bigEndian) { Array($0) } }
        var a = PutEntries(), models: [[[UInt8]: [UInt8]]] = [[:], [:], [:]]
        for i in 0..<3000 {
            let value = rng.bytes(Int(rng.next() % 300))
            a.append(key: key(0, i), value: value)
            models[0][key(0, i)] = value
        }
        var b = a
        models[1] = models[0]
        var c = PutEntries()
        for i in 0..<80_000 {
            // In turn: a, then b, then (from entry 40 000) a copy of b made then, whose twin b
            // is dropped later.
            let value = rng.bytes(Int(rng.next() % 60))
            switch i % 3 {
            case 0:
                a.append(key: key(1, i), value: value)
                models[0][key(1, i)] = value
            case 1:
                b.append(key: key(2, i), valueCapacity: 8) { $0.append(contentsOf: value) }
                models[1][key(2, i)] = value
            default:
                if i == 40_001 {
                    c = b
                    models[2] = models[1]
                }
                guard i > 40_001 else { continue }
                c.append(key: key(3, i), value: value)
                models[2][key(3, i)] = value
                if i == 60_002 { b = PutEntries() }   // c alone holds its storage from here on (b starts anew)
            }
        }
        let store = try TestStores.memory("PCW") { $0.walPreallocationBytes = 0 }
        try store.engine.write { (txn) throws in
            for (name, entries) in [("a", a), ("c", c)] {
                try txn.createTree(named: name)
                try txn.put(entries: entries, in: name)
            }
        }
        for (name, model) in [("a", models[0]), ("c", models[2])] {
            let stored = try store.engine.read { try $0.entries(in: name) }
            #expect(stored.count == model.count, "seed \(seed): \(name)")
            for e in stored where model[e.key] != e.value {
                Issue.record("seed \(seed): \(name) key \(e.key) holds \(e.value.count) bytes, not its own")
                break
            }
        }
        #expect(a.count == 3000 + 26_667 && c.count == models[2].count && b.count == 6_666, "seed \(seed)")
    }
}
