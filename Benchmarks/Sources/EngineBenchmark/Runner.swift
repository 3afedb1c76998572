// Runner: one run of every workload against one engine, in the order
//   bulk load (+ settle) → file size → point reads → scan → deletes (+ settle) → file size → close →
//   new-process opens → reopen durable → single durable commits → concurrent durable commits →
//   final scan (the check that no commit was lost) → close → delete the files.
// Each engine gets a fresh directory; the durable commits go into the loaded store (a tree of
// ~900 000 keys), as an app's commits would.

import BenchmarkSupport
import Foundation

/// The figures of the table, in its order.
enum Metric: Int, CaseIterable {
    case bulkRate, bulkSeconds, commitP50, commitP99, readRate, scanRate, deleteRate, fileBytes,
         fileBytesAfterDeletes, concurrentRate, openWall, openNet, openInChild, closeInChild

    var unit: BenchUnit {
        switch self {
        case .bulkRate, .readRate, .scanRate, .deleteRate, .concurrentRate: .rate
        case .bulkSeconds: .seconds
        case .commitP50, .commitP99, .openWall, .openNet, .openInChild, .closeInChild: .millis
        case .fileBytes, .fileBytesAfterDeletes: .bytes
        }
    }

    /// Rates: more is better. Times and sizes: less is better.
    var higherIsBetter: Bool { unit == .rate }

    func label(_ s: Sizes) -> String {
        switch self {
        case .bulkRate: "1. bulk load, \(s.keys) puts in one transaction + sync (ops/s)"
        case .bulkSeconds: "1. bulk load, same run (seconds)"
        case .commitP50: "2. durable single-key commit, p50 of \(s.durableCommits)"
        case .commitP99: "2. durable single-key commit, p99"
        case .readRate: "3. random point reads, \(s.pointReads) in one read txn (ops/s)"
        case .scanRate: "4. full ordered scan (rows/s)"
        case .deleteRate: "5. random deletes, \(s.deletes) in one transaction + sync (ops/s)"
        case .fileBytes: "6. file size after load + checkpoint (bytes)"
        case .fileBytesAfterDeletes: "6. file size after the deletes + checkpoint (bytes)"
        case .concurrentRate: "7. durable commits, \(s.threads) threads × \(s.commitsPerThread) (commits/s)"
        case .openWall: "8. new process: open + one read, spawn to exit (wall)"
        case .openNet: "8. same, minus an empty process start (interleaved)"
        case .openInChild: "8. open + one read, timed inside the child"
        case .closeInChild: "8. then close, timed inside the child"
        }
    }
}

typealias Figures = [Metric: Double]

struct Options {
    var scale = 1.0
    var repeats = 1
    var only: Set<String>?
    static let engines = [DocStoreSubject.name, LMDBSubject.name, SQLiteSubject.name]

    static let usage = """
        usage: EngineBenchmark [--scale S] [--repeat K] [--only ENGINE[,ENGINE…]]
          --scale S    multiply N = 1 000 000 keys by S (0.1 for a quick run); the commit counts
                       shrink with it down to 200 single commits and 8 × 50 concurrent ones
          --repeat K   run everything K times and report the median of each figure
          --only E     run only these engines (\(engines.joined(separator: ", ")))
        """

    init(_ args: [String]) throws {
        var i = 0
        func value() throws -> String {
            guard i + 1 < args.count else { throw BenchError("\(args[i]) needs a value\n\(Options.usage)") }
            i += 1
            return args[i]
        }
        while i < args.count {
            switch args[i] {
            case "--scale":
                guard let s = Double(try value()), s > 0, s <= 10 else { throw BenchError("--scale takes a number in (0, 10]") }
                scale = s
            case "--repeat":
                guard let k = Int(try value()), k >= 1 else { throw BenchError("--repeat takes a positive whole number") }
                repeats = k
            case "--only":
                let names = Set(try value().split(separator: ",").map(String.init))
                let unknown = names.subtracting(Options.engines)
                guard unknown.isEmpty else { throw BenchError("unknown engine(s) \(unknown.sorted()); choose from \(Options.engines)") }
                only = names
            case "-h", "--help":
                print(Options.usage)
                exit(0)
            default:
                throw BenchError("unknown argument \(args[i])\n\(Options.usage)")
            }
            i += 1
        }
    }
}

func secs(_ x: Double) -> String { String(format: "%.2f", x) }

/// Runs every workload once against `S` in a fresh directory under `root`, filling in `f` as it
/// goes (so that the figures before a failure are kept).
func runWorkloads<S: Subject>(_ type: S.Type, _ w: Workload, root: String, into f: inout Figures) throws {
    let fm = FileManager.default
    let dir = root + "/" + S.name
    try? fm.removeItem(atPath: dir)
    try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? fm.removeItem(atPath: dir) }
    let n = w.keys.count

    // 1, 6, 3, 4, 5: bulk work in .bulk mode, each write workload ending durable.
    var store: S? = try S(directory: dir, mode: .bulk, create: true)
    defer { try? store?.close() }
    let loadTxn = try timed { try store!.bulkLoad(w) }
    let loadSync = try timed { try store!.settle() }
    let load = loadTxn + loadSync
    f[.bulkSeconds] = load
    f[.bulkRate] = Double(n) / load
    f[.fileBytes] = Double(store!.fileBytes())
    progress("  \(S.name): bulk load \(secs(loadTxn)) s + settle \(secs(loadSync)) s, \(Int(f[.fileBytes]!)) bytes")

    var bytes = 0
    let reads = try timed { bytes = try store!.pointReads(w) }
    guard bytes == w.readOrder.count * 100 else { throw BenchError("\(S.name): point reads returned \(bytes) bytes, expected \(w.readOrder.count * 100)") }
    f[.readRate] = Double(w.readOrder.count) / reads

    var scanned = (rows: 0, bytes: 0)
    let scan = try timed { scanned = try store!.scan() }
    guard scanned.rows == n, scanned.bytes == n * 116 else { throw BenchError("\(S.name): scan saw \(scanned.rows) rows / \(scanned.bytes) bytes, expected \(n) / \(n * 116)") }
    f[.scanRate] = Double(n) / scan

    var removed = 0
    let delTxn = try timed { removed = try store!.deletes(w) }
    let delSync = try timed { try store!.settle() }
    guard removed == w.deleteOrder.count else { throw BenchError("\(S.name): deleted \(removed) of \(w.deleteOrder.count) keys") }
    f[.deleteRate] = Double(removed) / (delTxn + delSync)
    f[.fileBytesAfterDeletes] = Double(store!.fileBytes())
    progress("  \(S.name): reads \(secs(reads)) s, scan \(secs(scan)) s, deletes \(secs(delTxn)) s + settle \(secs(delSync)) s, \(Int(f[.fileBytesAfterDeletes]!)) bytes")
    try store!.close()
    store = nil

    // 8: a new process opens the store and reads one surviving key (OS page cache warm). Empty
    // process starts are interleaved with the opens, so that both see the same machine state.
    let probe = ["__open-read", S.name, dir, hex(w.keys[w.survivor])]
    _ = try spawnSelf(probe)  // warm-up: the binary's and the store's pages into the OS cache
    var walls: [Double] = [], empties: [Double] = [], inside: [Double] = [], closing: [Double] = []
    for _ in 0..<11 {
        empties.append(try spawnSelf(["__noop"]).seconds)
        let (wall, output) = try spawnSelf(probe)
        let fields = output.split(whereSeparator: \.isWhitespace).compactMap { Int($0) }
        guard fields.count == 3, fields[2] == 100 else { throw BenchError("\(S.name): the new process read '\(output)'") }
        walls.append(wall)
        inside.append(Double(fields[0]) / 1e9)
        closing.append(Double(fields[1]) / 1e9)
    }
    f[.openWall] = median(walls)
    f[.openNet] = median(walls) - median(empties)
    f[.openInChild] = median(inside)
    f[.closeInChild] = median(closing)

    // 2, 7: durable commits into the loaded store.
    store = try S(directory: dir, mode: .durable, create: false)
    var latencies: [Double] = []
    latencies.reserveCapacity(w.commitKeys.count)
    for (i, k) in w.commitKeys.enumerated() {
        let value = w.commitValue(i)
        latencies.append(try timed { try store!.commitOne(key: k, value: value) })
    }
    f[.commitP50] = percentile(latencies, 0.50)
    f[.commitP99] = percentile(latencies, 0.99)
    let concurrent = try store!.concurrentCommits(w.threadKeys, value: w.commitValue(7))
    let total = w.threadKeys.reduce(0) { $0 + $1.count }
    f[.concurrentRate] = Double(total) / concurrent
    progress("  \(S.name): \(latencies.count) durable commits in \(secs(latencies.reduce(0, +))) s, \(total) concurrent in \(secs(concurrent)) s; new-process open \(secs(median(inside) * 1000)) ms inside")

    let final = try store!.scan()
    guard final.rows == w.finalCount else { throw BenchError("\(S.name): \(final.rows) entries at the end, expected \(w.finalCount)") }
    try store!.close()
    store = nil
}
