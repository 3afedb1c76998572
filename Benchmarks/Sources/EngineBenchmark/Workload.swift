// Workload: the data every engine gets — the same keys, values and orders, made once per run from
// a fixed seed, before any clock starts.

import BenchmarkSupport

/// Sizes of one run, scaled by `--scale`.
struct Sizes: Sendable {
    var keys: Int              // N: keys bulk-loaded (1 000 000 at scale 1)
    var pointReads: Int        // random point reads (N)
    var deletes: Int           // random deletes in one transaction (N / 10)
    var durableCommits: Int    // single-key durable commits, one after another (2 000)
    var threads: Int           // concurrent committers (8)
    var commitsPerThread: Int  // durable commits each (500)

    init(scale: Double) {
        keys = max(1_000, Int((1_000_000 * scale).rounded()))
        pointReads = keys
        deletes = keys / 10
        // Commit counts shrink with the scale too, but not below a size that still gives a p99.
        durableCommits = max(200, Int((2_000 * min(scale, 1)).rounded()))
        threads = 8
        commitsPerThread = max(50, Int((500 * min(scale, 1)).rounded()))
    }
}

/// The data of a run. Keys are 16 random bytes; values are 100 bytes, random-ish but somewhat
/// compressible (see `makeValue`). Everything is made up front so no timed loop allocates test data.
struct Workload: Sendable {
    let sizes: Sizes
    /// The N keys bulk-loaded, in load order (random order, so the B+trees see random inserts).
    let keys: [[UInt8]]
    /// values[i] belongs to keys[i].
    let values: [[UInt8]]
    /// Indices into `keys` for the point reads (uniform, with repeats).
    let readOrder: [Int]
    /// Distinct indices into `keys` deleted in the delete workload.
    let deleteOrder: [Int]
    /// An index whose key survives the deletes: the key the new-process open reads.
    let survivor: Int
    /// Fresh keys for the single durable commits (not among `keys`).
    let commitKeys: [[UInt8]]
    /// Fresh keys for the concurrent commits, one list per thread.
    let threadKeys: [[[UInt8]]]

    /// Live entries once every workload ran: the check that nothing was lost or left behind.
    var finalCount: Int { keys.count - deleteOrder.count + commitKeys.count + threadKeys.reduce(0) { $0 + $1.count } }

    /// Small words that values are mostly made of, so that values compress somewhat (as records
    /// of field names and enum-like strings do), unlike pure random bytes.
    private static let words: [[UInt8]] = [
        "title", "note", "draft", "inbox", "done", "todo", "tag:", "home", "work", "id=",
        "2026-", "true", "false", "null", "name", "body",
    ].map { Array($0.utf8) }

    /// 100 bytes: about half random bytes, half words from a 16-word vocabulary, in random order.
    static func makeValue(_ rng: inout SplitMix64) -> [UInt8] {
        var v = [UInt8]()
        v.reserveCapacity(100)
        while v.count < 100 {
            let r = rng.next()
            if r & 1 == 0 {
                v += rng.bytes(4)
            } else {
                v += words[Int((r >> 1) & 15)]
            }
        }
        return Array(v.prefix(100))
    }

    init(sizes: Sizes, seed: UInt64 = 0xD0C5_7012E) {
        self.sizes = sizes
        var rng = SplitMix64(seed: seed)
        let n = sizes.keys
        // 16 random bytes: with N = 10^6 the chance that two keys collide is about 10^-27; the
        // scans check the counts, so a collision would fail the run rather than skew it.
        var keys = [[UInt8]](), values = [[UInt8]]()
        keys.reserveCapacity(n)
        values.reserveCapacity(n)
        for _ in 0..<n {
            keys.append(rng.bytes(16))
            values.append(Self.makeValue(&rng))
        }
        self.keys = keys
        self.values = values
        readOrder = (0..<sizes.pointReads).map { _ in rng.below(n) }
        // Partial Fisher-Yates: the first `deletes` slots become a random sample without repeats;
        // the slot after them holds a key that is not deleted.
        var order = Array(0..<n)
        for i in 0..<min(sizes.deletes + 1, n - 1) {
            order.swapAt(i, i + rng.below(n - i))
        }
        deleteOrder = Array(order.prefix(sizes.deletes))
        survivor = order[sizes.deletes]
        commitKeys = (0..<sizes.durableCommits).map { _ in rng.bytes(16) }
        threadKeys = (0..<sizes.threads).map { _ in (0..<sizes.commitsPerThread).map { _ in rng.bytes(16) } }
    }

    /// The value a commit writes: one of the generated values (all are 100 bytes).
    func commitValue(_ i: Int) -> [UInt8] { values[i % values.count] }
}
