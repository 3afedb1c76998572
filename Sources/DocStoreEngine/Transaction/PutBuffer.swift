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

    /// About the memory the buffered entries take when the buffer is their only holder: their
    /// bytes, plus an array header each for key and value and the two references.
    private(set) var bytes = 0

    var isEmpty: Bool { keys.isEmpty }

    mutating func append(_ key: [UInt8], _ value: [UInt8], tree: String) {
        self.tree = tree
        keys.append(key)
        values.append(value)
        bytes += key.count + value.count + Self.entryOverhead
    }

    /// An entry's memory beside its bytes (two array headers, two references).
    static let entryOverhead = 80

    /// Empties the buffer, returning its tree and its entries in key order, one per key (the
    /// last put of each key).
    mutating func drain() -> (tree: String, entries: [(key: [UInt8], value: [UInt8])])? {
        guard let tree, !keys.isEmpty else { return nil }
        let keys = self.keys, values = self.values
        self.tree = nil
        self.keys = []
        self.values = []
        self.bytes = 0

        let order = Self.keyOrder(keys.count) { keys[$0] } ?? Array(keys.indices)
        var entries: [(key: [UInt8], value: [UInt8])] = []
        entries.reserveCapacity(order.count)
        for i in order { entries.append((keys[i], values[i])) }
        return (tree, entries)
    }

    /// The positions of `count` keys in ascending key order, one per distinct key (the last of
    /// equal keys: a later put wins); nil when they are ascending and distinct already.
    ///
    /// Keys are sorted by their first 16 bytes as two big-endian numbers (zero-padded, so a
    /// shorter key sorts no later than its extensions), ties by position; runs of equal
    /// numbers are then settled by the whole key. Comparing arrays for every pair was most of
    /// the cost of a sort; two-number keys (links, most records) never need it.
    static func keyOrder(_ count: Int, _ key: (Int) -> [UInt8]) -> [Int]? {
        keyOrder(count, prefixes: { prefixes(key($0)) }, compare: { compare(key($0), key($1)) })
    }

    /// `keyOrder` over keys read through `prefixes` (entry i's first 16 bytes, as `prefixes(_:)`
    /// gives them) and `compare` (entries i and j's whole keys, as `compare(_:_:)`), for keys
    /// that are not arrays of their own.
    static func keyOrder(_ count: Int, prefixes: (Int) -> (UInt64, UInt64), compare: (Int, Int) -> Int) -> [Int]? {
        var order = [RadixSort.Entry]()
        order.reserveCapacity(count)
        var ascending = true
        for i in 0..<count {
            let (high, low) = prefixes(i)
            if ascending, let last = order.last,
               high < last.high || (high == last.high && (low < last.low || (low == last.low && compare(Int(last.payload), i) >= 0))) {
                ascending = false
            }
            order.append((high, low, UInt64(i)))
        }
        if ascending { return nil }
        RadixSort.sort(&order)   // stable: ties keep their positions' order
        var start = 0
        while start < order.count {
            var end = start + 1
            while end < order.count && order[end].high == order[start].high && order[end].low == order[start].low { end += 1 }
            if end - start > 1 {
                order[start..<end].sort { a, b in
                    let c = compare(Int(a.payload), Int(b.payload))
                    return c != 0 ? c < 0 : a.payload < b.payload
                }
            }
            start = end
        }
        var out: [Int] = []
        out.reserveCapacity(order.count)
        for j in order.indices {
            // A later put of the same key follows this one: it wins.
            if j + 1 < order.count, order[j + 1].high == order[j].high, order[j + 1].low == order[j].low,
               compare(Int(order[j + 1].payload), Int(order[j].payload)) == 0 { continue }
            out.append(Int(order[j].payload))
        }
        return out
    }

    /// The first 16 bytes of `key` as two big-endian numbers, zero-padded.
    @inline(__always) static func prefixes(_ key: [UInt8]) -> (UInt64, UInt64) {
        key.withUnsafeBytes { prefixes($0) }
    }

    @inline(__always) static func prefixes(_ b: UnsafeRawBufferPointer) -> (UInt64, UInt64) {
        if b.count >= 16 {
            return (UInt64(bigEndian: b.loadUnaligned(as: UInt64.self)), UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self)))
        }
        var high: UInt64 = 0, low: UInt64 = 0
        for i in 0..<8 { high = high << 8 | UInt64(i < b.count ? b[i] : 0) }
        for i in 8..<16 { low = low << 8 | UInt64(i < b.count ? b[i] : 0) }
        return (high, low)
    }

    static func compare(_ a: [UInt8], _ b: [UInt8]) -> Int {
        a.withUnsafeBytes { x in b.withUnsafeBytes { y in compareKeys(x, y) } }
    }
}
