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

    /// P3: a copy is a value. Copies made at a segment's growth (256 entries) and past a full
    /// segment (70 000 entries: two segments to copy), then appended to in turn with their
    /// originals (values written in place too, over new chunks), each keep exactly their own
    /// entries; a copy whose twin is gone appends in place.
    @Test(arguments: [5, 6] as [UInt64])
    func copiesAppendedToInTurnKeepTheirOwnEntries(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        func key(_ tag: UInt8, _ i: Int) -> [UInt8] { [tag] + withUnsafeBytes(of: UInt32(i).bigEndian) { Array($0) } }
        var values: [PutEntries] = []
        var models: [[[UInt8]: [UInt8]]] = []
        /// Appends a random entry tagged `tag` to value `v` (in place or by `valueCapacity`).
        func append(_ v: Int, _ tag: UInt8, _ i: Int) {
            let value = rng.bytes(Int(rng.next() % 80))
            if i % 2 == 0 {
                values[v].append(key: key(tag, i), value: value)
            } else {
                values[v].append(key: key(tag, i), valueCapacity: 8) { $0.append(contentsOf: value) }
            }
            models[v][key(tag, i)] = value
        }
        // 0: 256 entries, then copied (1); 2: 70 000 entries, then copied (3).
        values = [PutEntries(), PutEntries(), PutEntries(), PutEntries()]
        models = [[:], [:], [:], [:]]
        for i in 0..<256 { append(0, 0, i) }
        values[1] = values[0]
        models[1] = models[0]
        for i in 0..<70_000 { append(2, 2, i) }
        values[3] = values[2]
        models[3] = models[2]
        for i in 0..<9_000 {   // in turn: each copy's first append copies the storage it shares
            append(i % 4, UInt8(10 + i % 4), 100_000 + i)
        }
        // A copy whose twin is then dropped: the copy goes on alone, in place.
        var alone = values[3]
        var aloneModel = models[3]
        values[3] = PutEntries()
        for i in 0..<3_000 {
            let value = rng.bytes(Int(rng.next() % 80))
            alone.append(key: key(20, i), value: value)
            aloneModel[key(20, i)] = value
        }
        values.append(alone)
        models.append(aloneModel)
        let store = try TestStores.memory("PCW") { $0.walPreallocationBytes = 0 }
        try store.engine.write { (txn) throws in
            for (v, entries) in values.enumerated() where v != 3 {
                try txn.createTree(named: "t\(v)")
                try txn.put(entries: entries, in: "t\(v)")
            }
        }
        for v in values.indices where v != 3 {
            let stored = try store.engine.read { try $0.entries(in: "t\(v)") }
            #expect(stored.count == models[v].count && values[v].count == models[v].count, "seed \(seed): value \(v)")
            for e in stored where models[v][e.key] != e.value {
                Issue.record("seed \(seed): value \(v), key \(e.key) holds \(e.value.count) bytes, not its own")
                break
            }
        }
        #expect(values[3].isEmpty)
    }
}
