// Report: runs the engines K times and prints the medians as a Markdown table with the ratios
// DocStore ÷ LMDB and DocStore ÷ SQLite, then this machine's own limits.

import BenchmarkSupport
import Foundation

func runBenchmark(_ options: Options) throws -> Int32 {
    let sizes = Sizes(scale: options.scale)
    let engines = Options.engines.filter { options.only?.contains($0) ?? true }
    let started = Date()
    let loadBefore = loadAverage()
    progress("making the workload (N = \(sizes.keys)) …")
    let w = Workload(sizes: sizes)

    let fm = FileManager.default
    let root = fm.temporaryDirectory.appendingPathComponent("docstore-bench-\(getpid())").path
    try fm.createDirectory(atPath: root, withIntermediateDirectories: true)
    defer { try? fm.removeItem(atPath: root) }

    var results: [String: [Figures]] = [:]
    var failures: [String: String] = [:]
    var syncP50: [Double] = [], syncP99: [Double] = [], emptyStarts: [Double] = []
    for r in 1...options.repeats {
        progress("run \(r)/\(options.repeats)")
        // 9: the machine's durable-append cost, and its empty process start.
        let sync = try fdatasyncLatency(directory: root)
        syncP50.append(sync.p50)
        syncP99.append(sync.p99)
        _ = try spawnSelf(["__noop"])
        let empty = median(try (0..<7).map { _ in try spawnSelf(["__noop"]).seconds })
        emptyStarts.append(empty)
        progress(String(format: "  machine: fdatasync p50 %.3f ms, empty process %.2f ms", sync.p50 * 1e3, empty * 1e3))

        for name in engines where failures[name] == nil {
            var f = Figures()
            do {
                switch name {
                case DocStoreSubject.name: try runWorkloads(DocStoreSubject.self, w, root: root, into: &f)
                case LMDBSubject.name: try runWorkloads(LMDBSubject.self, w, root: root, into: &f)
                default: try runWorkloads(SQLiteSubject.self, w, root: root, into: &f)
                }
            } catch {
                failures[name] = "\(error)"
                progress("  \(name) FAILED: \(error)")
            }
            results[name, default: []].append(f)
        }
    }

    // MARK: The table

    func value(_ engine: String, _ m: Metric) -> Double? {
        let xs = (results[engine] ?? []).compactMap { $0[m] }
        return xs.isEmpty ? nil : median(xs)
    }
    print("")
    print("### DocStore engine benchmark")
    print("")
    print("N = \(sizes.keys) keys of 16 random bytes, 100-byte values; \(options.repeats == 1 ? "one run" : "median of \(options.repeats) runs"); \(ProcessInfo.processInfo.activeProcessorCount) cores; \(String(format: "%.0f", Date().timeIntervalSince(started))) s in all.")
    print("")
    print("| workload | DocStore | LMDB | SQLite | DocStore/LMDB | DocStore/SQLite |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    let docstore = DocStoreSubject.name
    for m in Metric.allCases {
        let cells = Options.engines.map { e in value(e, m).map { format($0, m.unit) } ?? (failures[e] != nil ? "failed" : "–") }
        func ratio(_ other: String) -> String {
            guard let d = value(docstore, m), let o = value(other, m), o > 0 else { return "–" }
            return String(format: "%.2f", d / o)
        }
        let label = m.label(sizes) + (m.higherIsBetter ? " ↑" : " ↓")
        print("| \(label) | \(cells[0]) | \(cells[1]) | \(cells[2]) | \(ratio(LMDBSubject.name)) | \(ratio(SQLiteSubject.name)) |")
    }
    print("")
    print("Ratios are DocStore ÷ other. ↑ rows are rates: a ratio above 1 means DocStore is faster.")
    print("↓ rows are latencies, times and sizes: a ratio below 1 means DocStore is better.")
    print("")
    print("| machine (same run) | value |")
    print("| --- | ---: |")
    let p50 = median(syncP50)
    print("| 9. fdatasync after a 4 KiB append, p50 | \(format(p50, .millis)) |")
    print("| 9. fdatasync after a 4 KiB append, p99 | \(format(median(syncP99), .millis)) |")
    print("| empty process start (Foundation `Process`, spawn to exit) | \(format(median(emptyStarts), .millis)) |")
    print("| load average (1 min) at start / end — above ~0.5, other work shared the cores | \(loadBefore) / \(loadAverage()) |")
    for e in engines {
        if let c = value(e, .commitP50) {
            print("| \(e) durable commit p50 ÷ fdatasync p50 | \(String(format: "%.2f", c / p50)) |")
        }
    }
    if !failures.isEmpty {
        print("")
        for (e, message) in failures.sorted(by: { $0.key < $1.key }) { print("**\(e) failed:** \(message)") }
    }
    return failures.isEmpty ? 0 : 1
}

