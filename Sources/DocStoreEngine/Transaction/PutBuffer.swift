// PutBuffer: a write transaction's run of consecutive puts into one tree, applied to the B+tree
// in key order when anything needs the tree's real state (a read, a delete, another tree, a blob
// value, the commit).
//
// Why: inserting in key order walks the same few pages again and again (they stay in the CPU's
// caches) and appends at the rightmost leaf of a growing tree, where a split leaves the full page
// full; random-order inserts touch a new path every time and rebalance leaves. Applying a bulk
// load sorted is what LMDB's MDB_APPEND and SQLite's sorted index builds ask the caller to do;
// here the engine does it.
//
// Invariants: the state after `drain()` is applied equals the state after applying the puts one
// by one in call order — for equal keys only the last put is applied (the sort is stable by call
// order). The WAL log records each put in call order as it is made, so replay (which applies
// the log op by op) reaches the same state.

struct PutBuffer {
    /// The tree the buffered puts go to; nil when empty.
    private(set) var tree: String?
    private var keys: [[UInt8]] = []
    private var values: [[UInt8]] = []

    var isEmpty: Bool { keys.isEmpty }

    mutating func append(_ key: [UInt8], _ value: [UInt8], tree: String) {
        self.tree = tree
        keys.append(key)
        values.append(value)
    }

    /// Empties the buffer, returning its tree and its entries in key order, one per key (the
    /// last put of each key).
    mutating func drain() -> (tree: String, entries: [(key: [UInt8], value: [UInt8])])? {
        guard let tree, !keys.isEmpty else { return nil }
        let keys = self.keys, values = self.values
        self.tree = nil
        self.keys = []
        self.values = []

        // Sort by the first 8 bytes as a big-endian number (zero-padded, so a shorter key sorts
        // no later than its extensions), ties by call order; then settle runs of equal prefixes
        // by the whole key.
        var order = [(prefix: UInt64, index: Int)]()
        order.reserveCapacity(keys.count)
        for (i, k) in keys.enumerated() { order.append((Self.prefix(k), i)) }
        order.sort { $0.prefix != $1.prefix ? $0.prefix < $1.prefix : $0.index < $1.index }
        var start = 0
        while start < order.count {
            var end = start + 1
            while end < order.count && order[end].prefix == order[start].prefix { end += 1 }
            if end - start > 1 {
                order[start..<end].sort { a, b in
                    let c = Self.compare(keys[a.index], keys[b.index])
                    return c != 0 ? c < 0 : a.index < b.index
                }
            }
            start = end
        }

        var entries: [(key: [UInt8], value: [UInt8])] = []
        entries.reserveCapacity(order.count)
        for (j, o) in order.enumerated() {
            // A later put of the same key follows this one: it wins.
            if j + 1 < order.count && keys[order[j + 1].index] == keys[o.index] { continue }
            entries.append((keys[o.index], values[o.index]))
        }
        return (tree, entries)
    }

    @inline(__always) static func prefix(_ key: [UInt8]) -> UInt64 {
        var p: UInt64 = 0
        for i in 0..<8 { p = p << 8 | UInt64(i < key.count ? key[i] : 0) }
        return p
    }

    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in compareKeys(x, y) } }
    }
}
