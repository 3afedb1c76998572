// Report: runs every subject's workloads (each in a child process), K times, and prints the
// medians as one Markdown table with ratios, then the memory table.

import BenchmarkSupport
import Foundation

let subjects = [DocStoreNotes.name, SQLiteNotes.name, GRDBNotes.name]

func runObjectBenchmark(_ arguments: [String]) throws -> Int32 {
    var scale = 1.0, repeats = 1
    var only = Set(subjects)
    var i = 0
    while i < arguments.count {
        let value = i + 1 < arguments.count ? arguments[i + 1] : ""
        switch arguments[i] {
        case "--scale": scale = Double(value) ?? 1
        case "--repeat": repeats = max(1, Int(value) ?? 1)
        case "--only": only = Set(value.split(separator: ",").map(String.init))
        default: throw BenchmarkFailure("unknown argument \(arguments[i]); use --scale S, --repeat K, --only A,B")
        }
        i += 2
    }
    let sizes = NotesSizes(scale: scale)
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("docstore-objects-\(getpid())").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    let started = Date()
    let loadBefore = loadAverage()

    var seconds: [String: [Workload: [Double]]] = [:]
    var peaks: [String: [Workload: [Double]]] = [:]
    var checks: [String: [Workload: Int]] = [:]
    var entriesRead: [Workload: Int] = [:]
    var opens: [String: [Double]] = [:]
    var faults: [Double] = []
    var failures: [String: String] = [:]
    for r in 1...repeats {
        progress("run \(r)/\(repeats)")
        for name in subjects where only.contains(name) && failures[name] == nil {
            let dir = root + "/\(name)-\(r)"
            try? FileManager.default.removeItem(atPath: dir)
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            do {
                for w in Workload.allCases {
                    if w == .faults && name != DocStoreNotes.name { continue }
                    if w == .delete {
                        // The new-process workload runs before the deletes, on the full store.
                        _ = try spawnSelf(["__open", name, dir])
                        let inside = try (0..<7).map { _ in
                            try ChildReport(try spawnSelf(["__open", name, dir]).output + " check=0 peak=0").seconds
                        }
                        opens[name, default: []].append(median(inside))
                    }
                    let report = try ChildReport(try spawnSelf(["__workload", name, w.rawValue, dir, String(scale)]).output)
                    if let f = report.fault { faults.append(f); continue }
                    if let e = report.entries { entriesRead[w] = e }
                    seconds[name, default: [:]][w, default: []].append(report.seconds)
                    peaks[name, default: [:]][w, default: []].append(report.peak)
                    checks[name, default: [:]][w] = report.check
                    progress(String(format: "  %@ %@: %.3f s, peak +%.1f MB", name, w.rawValue, report.seconds, report.peak / 1e6))
                }
            } catch {
                failures[name] = "\(error)"
                progress("  \(name) FAILED: \(error)")
            }
            try? FileManager.default.removeItem(atPath: dir)
        }
    }

    // Every subject must have seen the same data.
    for w in Workload.allCases {
        let values = Set(subjects.compactMap { checks[$0]?[w] })
        if values.count > 1 { failures["check"] = "subjects disagree on \(w.rawValue): \(subjects.map { "\($0) \(checks[$0]?[w] ?? -1)" })" }
    }

    func time(_ s: String, _ w: Workload) -> Double? { seconds[s]?[w].map(median) }
    let labels: [(Workload, String, Int)] = [
        (.insert, "insert \(sizes.notes) notes (+ \(sizes.folders) folders, \(sizes.tags) tags, 2 tags each), one save", sizes.notes),
        (.fetchByID, "fetch \(sizes.fetchByID) random notes by ID, read the title", sizes.fetchByID),
        (.fetchAll, "fetch all \(sizes.notes) notes, read every attribute", sizes.notes),
        (.folderNotes, "folder → its notes, \(sizes.folders) folders", sizes.notes),
        (.tagNotes, "tag → its notes, \(sizes.tags) tags", 2 * sizes.notes),
    ] + NotesData.queryLabels.map { w, label, count in
        // The tag query returns each note twice (two tags each) over the 50 tags.
        (w, label, w == .queryTag ? 2 * sizes.notes : count)
    } + [
        (.delete, "delete \(sizes.deletes) notes with their links, one save", sizes.deletes),
        (.findAndDelete, "find \(sizes.deletes) notes one at a time by date and delete each, one save", sizes.deletes),
        (.findOrCreate, "find-or-create \(sizes.deletes) notes by date, each asked twice, one save", sizes.deletes),
    ]
    print("")
    print("### DocStore object benchmark: the notes model")
    print("")
    print("\(sizes.notes) notes over \(sizes.folders) folders and \(sizes.tags) tags; \(repeats == 1 ? "one run" : "median of \(repeats) runs"); \(ProcessInfo.processInfo.activeProcessorCount) cores; \(String(format: "%.0f", Date().timeIntervalSince(started))) s in all; load average \(loadBefore) → \(loadAverage()).")
    print("")
    print("| workload | DocStore | SQLite (C API) | GRDB (Codable) | DocStore/SQLite | DocStore/GRDB |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    func cell(_ s: String, _ w: Workload, _ count: Int) -> String {
        guard let t = time(s, w) else { return failures[s] != nil ? "failed" : "–" }
        return "\(format(t, .seconds)) (\(format(Double(count) / t, .rate)))"
    }
    func ratio(_ a: Double?, _ b: Double?) -> String {
        guard let a, let b, b > 0 else { return "–" }
        return String(format: "%.2f", a / b)
    }
    for (w, label, count) in labels {
        let d = time(DocStoreNotes.name, w)
        print("| \(label) ↓ | \(cell(DocStoreNotes.name, w, count)) | \(cell(SQLiteNotes.name, w, count)) | \(cell(GRDBNotes.name, w, count)) | \(ratio(d, time(SQLiteNotes.name, w))) | \(ratio(d, time(GRDBNotes.name, w))) |")
    }
    let o = subjects.map { opens[$0].map(median) }
    print("| new process: open the store, fetch one note, close (timed inside the child, median of 7) ↓ | \(o[0].map { format($0, .millis) } ?? "–") | \(o[1].map { format($0, .millis) } ?? "–") | \(o[2].map { format($0, .millis) } ?? "–") | \(ratio(o[0], o[1])) | \(ratio(o[0], o[2])) |")
    print("")
    print("Times are seconds (rate in parentheses: notes, or notes seen, per second; for the counts and the scans, queries per second). Ratios are DocStore ÷ other: below 1 means DocStore is faster.")
    print("")
    print("| peak memory above the process's baseline | DocStore | SQLite (C API) | GRDB (Codable) |")
    print("| --- | ---: | ---: | ---: |")
    for (w, label, _) in labels {
        let cells = subjects.map { s in peaks[s]?[w].map { String(format: "%.1f MB", median($0) / 1e6) } ?? "–" }
        print("| \(label) | \(cells[0]) | \(cells[1]) | \(cells[2]) |")
    }
    if only.contains(DocStoreNotes.name) {
        let (cached, cold) = try DocStoreNotes.parseCost()
        print("")
        print(String(format: "Parsing a typical predicate format (`title BEGINSWITH[c] %%@ AND createdAt > %%@ AND ANY tags.name == %%@`, three arguments): %.2f µs when the format was parsed before (its template is cached), %.2f µs the first time (median of 1 000 distinct formats).", cached * 1e6, cold * 1e6))
    }
    if !entriesRead.isEmpty {
        print("")
        print("Index entries one DocStore query read (explain's analysis): " + NotesData.queryLabels.compactMap { w, label, _ in
            entriesRead[w].map { "\(w.rawValue) \($0)" }
        }.joined(separator: ", ") + ".")
    }
    if !faults.isEmpty {
        print("")
        print(String(format: "One DocStore fault (an object made for an ID, not loaded, held by the app): %.0f bytes.", median(faults)))
    }
    if !failures.isEmpty {
        print("")
        for (s, message) in failures.sorted(by: { $0.key < $1.key }) { print("**\(s) failed:** \(message)") }
    }
    return failures.isEmpty ? 0 : 1
}
