// The shared workload: the keys, the value, and the operations every engine under test runs.
// Each adapter implements whole loops (not single operations) so that no dynamic dispatch sits
// inside a timed loop of one engine but not another.

import Foundation

/// A small fixed-seed generator (SplitMix64), the same stream for every engine.
struct Rng {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

struct Workload {
    let keys: [[UInt8]]          // 16 random bytes each
    let value: [UInt8]           // 100 bytes, mildly compressible
    let readOrder: [Int]         // random indices for point reads
    let deleteOrder: [Int]       // distinct random indices for deletes

    init(count: Int, reads: Int, deletes: Int, seed: UInt64 = 42) {
        var rng = Rng(state: seed)
        var keys: [[UInt8]] = []
        keys.reserveCapacity(count)
        var seen = Set<[UInt8]>()
        while keys.count < count {
            var k = [UInt8]()
            k.reserveCapacity(16)
            withUnsafeBytes(of: rng.next()) { k += $0 }
            withUnsafeBytes(of: rng.next()) { k += $0 }
            if seen.insert(k).inserted { keys.append(k) }
        }
        self.keys = keys
        self.value = (0..<100).map { i in UInt8(truncatingIfNeeded: i % 10 == 0 ? Int(rng.next() & 0xFF) : 97 + i % 26) }
        self.readOrder = (0..<reads).map { _ in Int(rng.next() % UInt64(count)) }
        var order = Array(0..<count)
        for i in stride(from: count - 1, to: 0, by: -1) { order.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
        self.deleteOrder = Array(order.prefix(deletes))
    }
}

/// One engine under test.
protocol BenchStore: AnyObject {
    static var name: String { get }
    /// Creates an empty store in `directory`.
    init(directory: String, durable: Bool) throws
    /// Inserts every key with the value in one transaction.
    func bulkLoad(_ w: Workload) throws
    /// One durable transaction per key, each timed; returns the latencies in seconds.
    func durableCommits(_ keys: ArraySlice<[UInt8]>, value: [UInt8]) throws -> [Double]
    /// Point reads in the given order; returns how many were found.
    func pointReads(_ w: Workload) throws -> Int
    /// Reads every entry in key order; returns the count.
    func scan() throws -> Int
    /// Deletes the given keys in one transaction.
    func deletes(_ w: Workload) throws
    /// Makes everything durable and compact as the engine would at rest (checkpoint).
    func settle() throws
    /// Bytes the store occupies on disk.
    func diskBytes() -> UInt64
    /// Commits from several threads at once, durably: `threads` × `perThread` single-key commits.
    func concurrentCommits(threads: Int, perThread: Int, value: [UInt8]) throws
    func close() throws
    /// Opens an existing store and reads one key (run in a fresh process).
    static func openAndReadOne(directory: String, key: [UInt8]) throws -> Bool
}

func directorySize(_ path: String) -> UInt64 {
    let fm = FileManager.default
    guard let items = fm.enumerator(atPath: path) else { return 0 }
    var total: UInt64 = 0
    for case let item as String in items {
        if let size = (try? fm.attributesOfItem(atPath: path + "/" + item))?[.size] as? NSNumber,
           (try? fm.attributesOfItem(atPath: path + "/" + item))?[.type] as? FileAttributeType == .typeRegular {
            total += size.uint64Value
        }
    }
    return total
}

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}

/// Runs `body` on `threads` real threads and waits for all.
func onThreads(_ threads: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for t in 0..<threads {
        group.enter()
        let thread = Thread {
            body(t)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}
