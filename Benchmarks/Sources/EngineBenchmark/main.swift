// EngineBenchmark: the engine workloads of issue #2 against DocStore, LMDB and SQLite in one run.
//
//   EngineBenchmark [--scale S] [--repeat K] [--only NAME]
//
// Prints a Markdown table with each engine's figure (the median of K runs) and the ratios
// DocStore ÷ LMDB and DocStore ÷ SQLite. For throughputs a ratio above 1 favours DocStore; for
// latencies, sizes and times, below 1 does. Also measures this machine's fdatasync latency.
// Hidden subcommands used by the cold-open workload: `open-read ENGINE DIR HEXKEY`, `noop`.

import Foundation

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Hidden subcommands (run in child processes)

let arguments = CommandLine.arguments
if arguments.count >= 2 && arguments[1] == "noop" { exit(0) }
if arguments.count == 5 && arguments[1] == "open-read" {
    let key = stride(from: 0, to: arguments[4].count, by: 2).map { i -> UInt8 in
        let s = arguments[4].index(arguments[4].startIndex, offsetBy: i)
        return UInt8(arguments[4][s..<arguments[4].index(s, offsetBy: 2)], radix: 16) ?? 0
    }
    do {
        let found: Bool
        switch arguments[2] {
        case DocStoreBench.name: found = try DocStoreBench.openAndReadOne(directory: arguments[3], key: key)
        case LMDBBench.name: found = try LMDBBench.openAndReadOne(directory: arguments[3], key: key)
        default: found = try SQLiteBench.openAndReadOne(directory: arguments[3], key: key)
        }
        exit(found ? 0 : 3)
    } catch {
        FileHandle.standardError.write(Data("open-read failed: \(error)\n".utf8))
        exit(1)
    }
}

// MARK: - Options

var scale = 1.0
var repeats = 1
var only: String?
var i = 1
while i < arguments.count {
    switch arguments[i] {
    case "--scale": scale = Double(arguments[i + 1]) ?? 1; i += 2
    case "--repeat": repeats = Int(arguments[i + 1]) ?? 1; i += 2
    case "--only": only = arguments[i + 1]; i += 2
    default:
        print("usage: EngineBenchmark [--scale S] [--repeat K] [--only DocStore|LMDB|SQLite]")
        exit(2)
    }
}
let count = max(1000, Int(1_000_000 * scale))
let durableCount = max(200, Int(2000 * min(scale, 1)))
let threads = 8, perThread = max(50, Int(500 * min(scale, 1)))
print("workload: \(count) keys (16 B) with 100 B values; \(count) point reads; \(count / 10) deletes; \(durableCount) durable commits; \(threads) threads x \(perThread) durable commits; \(repeats) run(s), medians")
let workload = Workload(count: count, reads: count, deletes: count / 10)
let root = NSTemporaryDirectory() + "/docstore-bench-\(getpid())"

// MARK: - Measurement

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let t = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? .nan : s[s.count / 2]
}

func percentile(_ xs: [Double], _ p: Double) -> Double {
    let s = xs.sorted()
    return s.isEmpty ? .nan : s[min(s.count - 1, Int(Double(s.count) * p))]
}

/// Runs a child process and returns its wall time.
func childSeconds(_ args: [String]) throws -> Double {
    let p = Process()
    p.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).standardizedFileURL
    if !FileManager.default.fileExists(atPath: p.executableURL!.path) {
        p.executableURL = Bundle.main.executableURL
    }
    p.arguments = args
    let t = DispatchTime.now().uptimeNanoseconds
    try p.run()
    p.waitUntilExit()
    let s = Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9
    if p.terminationStatus != 0 { throw BenchError("child \(args) exited \(p.terminationStatus)") }
    return s
}

/// The machine's own cost of a durable 4 KiB append.
func fdatasyncLatency() -> Double {
    let path = root + "/fsync-probe"
    let fd = open(path, O_CREAT | O_WRONLY | O_APPEND, 0o644)
    defer { close(fd); unlink(path) }
    let block = [UInt8](repeating: 7, count: 4096)
    var times: [Double] = []
    for _ in 0..<300 {
        times.append(seconds {
            _ = block.withUnsafeBytes { write(fd, $0.baseAddress, 4096) }
            fdatasync(fd)
        })
    }
    return median(times)
}

struct Figures {
    var bulk: [Double] = [], reads: [Double] = [], scan: [Double] = [], deletes: [Double] = []
    var size: [Double] = [], commitP50: [Double] = [], commitP99: [Double] = [], commitRate: [Double] = []
    var concurrent: [Double] = [], coldOpen: [Double] = []
}

func run<S: BenchStore>(_ type: S.Type, into f: inout Figures) throws {
    let loaded = root + "/\(S.name)-loaded", durable = root + "/\(S.name)-durable"
    for d in [loaded, durable] {
        try? FileManager.default.removeItem(atPath: d)
        try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
    }
    let store = try S(directory: loaded, durable: false)
    f.bulk.append(Double(count) / (try seconds { try store.bulkLoad(workload); try store.settle() }))
    f.size.append(Double(store.diskBytes()))
    var found = 0
    f.reads.append(Double(count) / (try seconds { found = try store.pointReads(workload) }))
    if found != workload.readOrder.count { throw BenchError("\(S.name) found \(found) of \(workload.readOrder.count) keys") }
    var scanned = 0
    f.scan.append(Double(count) / (try seconds { scanned = try store.scan() }))
    if scanned != count { throw BenchError("\(S.name) scanned \(scanned) of \(count)") }
    f.deletes.append(Double(workload.deleteOrder.count) / (try seconds { try store.deletes(workload); try store.settle() }))
    try store.close()
    // A new process opens the loaded store and reads one key that is still there.
    let present = workload.keys.indices.first { !Set(workload.deleteOrder).contains($0) } ?? 0
    let hex = workload.keys[present].map { String(format: "%02x", $0) }.joined()
    let opens = try (0..<5).map { _ in try childSeconds(["open-read", S.name, loaded, hex]) }
    f.coldOpen.append(median(opens))

    let d = try S(directory: durable, durable: true)
    let latencies = try d.durableCommits(workload.keys.prefix(durableCount), value: workload.value)
    f.commitP50.append(percentile(latencies, 0.5))
    f.commitP99.append(percentile(latencies, 0.99))
    f.commitRate.append(Double(latencies.count) / latencies.reduce(0, +))
    f.concurrent.append(Double(threads * perThread) / (try seconds { try d.concurrentCommits(threads: threads, perThread: perThread, value: workload.value) }))
    try d.close()
    try? FileManager.default.removeItem(atPath: loaded)
    try? FileManager.default.removeItem(atPath: durable)
}

// MARK: - Run

try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
defer { try? FileManager.default.removeItem(atPath: root) }
let sync = fdatasyncLatency()
let emptyProcess = median(try (0..<5).map { _ in try childSeconds(["noop"]) })
var results: [String: Figures] = [:]
for r in 0..<repeats {
    for name in [DocStoreBench.name, LMDBBench.name, SQLiteBench.name] where only == nil || only == name {
        var f = results[name] ?? Figures()
        FileHandle.standardError.write(Data("run \(r + 1)/\(repeats): \(name)…\n".utf8))
        switch name {
        case DocStoreBench.name: try run(DocStoreBench.self, into: &f)
        case LMDBBench.name: try run(LMDBBench.self, into: &f)
        default: try run(SQLiteBench.self, into: &f)
        }
        results[name] = f
    }
}

func fmt(_ v: Double, _ unit: String) -> String {
    switch unit {
    case "/s": return v >= 1e6 ? String(format: "%.2f M/s", v / 1e6) : String(format: "%.0f k/s", v / 1e3)
    case "ms": return String(format: "%.3f ms", v * 1e3)
    case "MB": return String(format: "%.1f MB", v / 1e6)
    default: return String(format: "%.3g", v)
    }
}

let rows: [(String, String, KeyPath<Figures, [Double]>)] = [
    ("bulk load \(count) keys, one transaction (+ checkpoint/sync)", "/s", \.bulk),
    ("random point reads", "/s", \.reads),
    ("full ordered scan", "/s", \.scan),
    ("\(count / 10) random deletes, one transaction (+ checkpoint/sync)", "/s", \.deletes),
    ("file size after load", "MB", \.size),
    ("durable single-key commit p50", "ms", \.commitP50),
    ("durable single-key commit p99", "ms", \.commitP99),
    ("durable single-key commits, one thread", "/s", \.commitRate),
    ("durable commits, \(threads) threads", "/s", \.concurrent),
    ("new process: open + one read (wall)", "ms", \.coldOpen),
]
print("")
print("| workload | DocStore | LMDB | SQLite | DocStore/LMDB | DocStore/SQLite |")
print("| --- | --- | --- | --- | --- | --- |")
for (label, unit, path) in rows {
    let v = [DocStoreBench.name, LMDBBench.name, SQLiteBench.name].map { results[$0].map { median($0[keyPath: path]) } }
    let cells = v.map { $0.map { fmt($0, unit) } ?? "–" }
    func ratio(_ a: Double?, _ b: Double?) -> String {
        guard let a, let b, b > 0 else { return "–" }
        return String(format: "%.2f", a / b)
    }
    print("| \(label) | \(cells[0]) | \(cells[1]) | \(cells[2]) | \(ratio(v[0], v[1])) | \(ratio(v[0], v[2])) |")
}
print("")
print("Ratios are DocStore ÷ other: above 1 is better for DocStore on rates (/s), below 1 on times and sizes.")
print(String(format: "machine: fdatasync of a 4 KiB append p50 %.3f ms; empty process start (wall) %.2f ms; %d cores", sync * 1e3, emptyProcess * 1e3, ProcessInfo.processInfo.activeProcessorCount))
