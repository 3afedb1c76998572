// ImportWhileReading (issue #5's benchmark): a background import of N notes, saved in batches,
// while a reader keeps serving a UI's fetch — the newest 20 notes of a folder — as fast as it can.
//
//   ObjectBenchmark importWhileReading [--notes N] [--batch B] [--repeat K]
//
// DocStore: the importer is a Context of its own; the reader is a context that merges other
// contexts' saves automatically and holds the page it shows (as a UI does), so each merge
// refreshes what it holds. Each reader turn times the merge (processPendingChanges) and the fetch
// apart. SQLite (C API, WAL, synchronous=FULL): a writer connection inserts in transactions of B,
// a reader connection runs the same query; there is nothing to merge. Both on this machine's
// two cores in one process; the table gives the import rate, the reader's fetch latencies during
// the import (DocStore's include the merges each fetch does first), and DocStore's merge cost per
// imported note, measured apart by merging the import's transactions from history.

import BenchmarkSupport
import CSQLite
import DocStore
import Foundation
import Synchronization

/// What one subject's run measured.
struct ImportReadingResult {
    var importSeconds: Double
    var fetches: [Double]
    var merges: [Double]
}

/// Shared between the two threads of a run.
final class ImportRunState: Sendable {
    let importing = Atomic<Bool>(true)
    let importSeconds = Mutex<Double>(0)
    let failure = Mutex<String?>(nil)
}

func runImportWhileReading(_ arguments: [String]) throws -> Int32 {
    var notes = 100_000, batch = 1000, repeats = 1
    var i = 0
    while i < arguments.count {
        let value = i + 1 < arguments.count ? arguments[i + 1] : ""
        switch arguments[i] {
        case "--notes": notes = max(batch, Int(value) ?? notes)
        case "--batch": batch = max(1, Int(value) ?? batch)
        case "--repeat": repeats = max(1, Int(value) ?? 1)
        default: throw BenchmarkFailure("unknown argument \(arguments[i]); use --notes N, --batch B, --repeat K")
        }
        i += 2
    }
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("docstore-import-\(getpid())").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    var runs: [String: [ImportReadingResult]] = [:]
    for r in 1...repeats {
        for name in ["DocStore", "SQLite"] {
            progress("run \(r)/\(repeats): \(name), importing \(notes) notes in batches of \(batch) while reading")
            let dir = root + "/\(name)-\(r)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            let result = name == "DocStore"
                ? try docStoreImportWhileReading(dir, notes: notes, batch: batch)
                : try sqliteImportWhileReading(dir, notes: notes, batch: batch)
            runs[name, default: []].append(result)
            try? FileManager.default.removeItem(atPath: dir)
        }
    }
    func figure(_ name: String, _ f: (ImportReadingResult) -> Double) -> Double { median(runs[name, default: []].map(f)) }
    // Ratios are of time, as in the other tables: above 1, DocStore takes longer.
    let rows: [(label: String, value: (ImportReadingResult) -> Double, ratio: (Double, Double) -> String)] = [
        ("import, notes/s", { Double(notes) / $0.importSeconds }, { d, s in String(format: "%.2f", s / d) }),
        ("reader fetches during the import", { Double($0.fetches.count) }, { _, _ in "—" }),
        ("fetch p50, µs", { percentile($0.fetches, 0.5) * 1e6 }, { d, s in String(format: "%.2f", d / s) }),
        ("fetch p99, µs", { percentile($0.fetches, 0.99) * 1e6 }, { d, s in String(format: "%.2f", d / s) }),
        ("fetch max, µs", { ($0.fetches.max() ?? 0) * 1e6 }, { d, s in String(format: "%.2f", d / s) }),
    ]
    print("| import of \(notes) notes (batches of \(batch)) while reading | DocStore | SQLite | DocStore ÷ SQLite, time |")
    print("| --- | --- | --- | --- |")
    for row in rows {
        let d = figure("DocStore", row.value), s = figure("SQLite", row.value)
        print("| \(row.label) | \(String(format: "%.0f", d)) | \(String(format: "%.0f", s)) | \(row.ratio(d, s)) |")
    }
    let mergePerNote = figure("DocStore") { $0.merges.reduce(0, +) / Double(notes) }
    let mergeP50 = figure("DocStore") { percentile($0.merges, 0.5) }
    let mergeP99 = figure("DocStore") { percentile($0.merges, 0.99) }
    let mergeCount = figure("DocStore") { Double($0.merges.count) }
    print("")
    print(String(format: "DocStore merge cost: %.2f µs per imported note (%.0f transactions of %d merged into a context holding 100 folders and 2 000 notes: p50 %.0f µs, p99 %.0f µs each); the fetch figures above include the merges the reader did before each fetch", mergePerNote * 1e6, mergeCount, batch, mergeP50 * 1e6, mergeP99 * 1e6))
    print("medians of \(repeats) run\(repeats == 1 ? "" : "s"); load average \(loadAverage())")
    return 0
}

/// The folder count and the notes the store starts with.
private let folderCount = 100
private let seedNotes = 2000

func docStoreImportWhileReading(_ dir: String, notes: Int, batch: Int) throws -> ImportReadingResult {
    let store = try Store(url: URL(fileURLWithPath: dir + "/import.docstore"), models: [Folder.self, Note.self, Tag.self])
    do {
        let c = Context(store: store)
        let folders = (0..<folderCount).map { i -> Folder in let f = Folder(); f.name = "folder \(i)"; return f }
        for f in folders { try c.insert(f) }
        for n in 0..<seedNotes { try c.insert(importedNote(n, folders)) }
        try c.save()
    }
    let state = ImportRunState()
    let writer = Thread {
        do {
            let c = Context(store: store, name: "import")
            let folders = try c.fetch(FetchRequest<Folder>(sortDescriptors: [SortKey("name")]))
            let seconds = try timed {
                var n = seedNotes
                while n < seedNotes + notes {
                    for _ in 0..<batch where n < seedNotes + notes {
                        try c.insert(importedNote(n, folders))
                        n += 1
                    }
                    try c.save()
                }
            }
            state.importSeconds.withLock { $0 = seconds }
        } catch {
            state.failure.withLock { $0 = "\(error)" }
        }
        state.importing.store(false, ordering: .releasing)
    }
    var result = ImportReadingResult(importSeconds: 0, fetches: [], merges: [])
    let reader = Context(store: store, name: "ui")
    reader.automaticallyMergesChangesFromParent = true
    let folderIDs = try (1...folderCount).map { try store.objectID(forEntityName: "Folder", number: UInt64($0)) }
    var shown: [Note] = []
    writer.start()
    var turn = 0
    while state.importing.load(ordering: .acquiring) {
        // The fetch merges what other contexts saved first (processPendingChanges): its time
        // is what the UI waits, merges included.
        let fetchStart = nowNanos()
        let request = FetchRequest<Note>(predicate: try QueryPredicate(format: "folder == %@", folderIDs[turn % folderCount]),
                                         sortDescriptors: [SortKey("createdAt", ascending: false)], fetchLimit: 20)
        shown = try reader.fetch(request)
        _ = shown.reduce(0) { $0 + $1.title.count }
        result.fetches.append(Double(nowNanos() - fetchStart) / 1e9)
        turn += 1
    }
    if let failure = state.failure.withLock({ $0 }) { throw BenchmarkFailure("DocStore import: \(failure)") }
    result.importSeconds = state.importSeconds.withLock { $0 }
    // The merge cost alone: the import's transactions, from history, merged one by one into a
    // context that holds what a UI would (every folder, a page of notes of each).
    let merging = Context(store: store, name: "merge")
    var held: [ManagedObject] = try merging.fetch(Folder.self)
    for folder in folderIDs {
        held += try merging.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "folder == %@", folder),
                                                     sortDescriptors: [SortKey("createdAt", ascending: false)], fetchLimit: 20))
    }
    for transaction in try store.history() where transaction.contextName == "import" {
        let start = nowNanos()
        merging.mergeChanges(from: transaction)
        result.merges.append(Double(nowNanos() - start) / 1e9)
    }
    _ = held.count
    let total = try Context(store: store).count(for: FetchRequest<Note>())
    guard total == seedNotes + notes else { throw BenchmarkFailure("DocStore holds \(total) notes, not \(seedNotes + notes)") }
    try store.close()
    return result
}

private func importedNote(_ n: Int, _ folders: [Folder]) -> Note {
    let note = Note()
    note.title = "note \(n)"
    note.body = "imported body \(n)"
    note.createdAt = Date(timeIntervalSinceReferenceDate: Double(n))
    note.folder = folders[n % folders.count]
    return note
}

func sqliteImportWhileReading(_ dir: String, notes: Int, batch: Int) throws -> ImportReadingResult {
    let writerDB = try SQLiteNotes(directory: dir, create: true)
    try writerDB.exec("BEGIN")
    for f in 1...folderCount { try writerDB.exec("INSERT INTO folder(id, name) VALUES(\(f), 'folder \(f)')") }
    try writerDB.exec("COMMIT")
    try sqliteInsert(writerDB, from: 0, count: seedNotes, batch: seedNotes)
    let readerDB = try SQLiteNotes(directory: dir, create: false)
    let state = ImportRunState()
    nonisolated(unsafe) let writing = writerDB    // used by the writer thread alone from here on
    let writer = Thread {
        do {
            let seconds = try timed { try sqliteInsert(writing, from: seedNotes, count: notes, batch: batch) }
            state.importSeconds.withLock { $0 = seconds }
        } catch {
            state.failure.withLock { $0 = "\(error)" }
        }
        state.importing.store(false, ordering: .releasing)
    }
    var result = ImportReadingResult(importSeconds: 0, fetches: [], merges: [])
    let query = try readerDB.prepare("SELECT \(SQLiteNotes.columns) FROM note WHERE folderId = ? ORDER BY createdAt DESC LIMIT 20")
    writer.start()
    var turn = 0
    while state.importing.load(ordering: .acquiring) {
        let start = nowNanos()
        sqlite3_bind_int64(query, 1, Int64(1 + turn % folderCount))
        var rows: [SQLiteNotes.Row] = []
        while sqlite3_step(query) == SQLITE_ROW { rows.append(readerDB.row(query)) }
        sqlite3_reset(query)
        _ = rows.reduce(0) { $0 + $1.title.count }
        result.fetches.append(Double(nowNanos() - start) / 1e9)
        turn += 1
    }
    sqlite3_finalize(query)
    if let failure = state.failure.withLock({ $0 }) { throw BenchmarkFailure("SQLite import: \(failure)") }
    result.importSeconds = state.importSeconds.withLock { $0 }
    try readerDB.close()
    try writerDB.close()
    return result
}

private func sqliteInsert(_ db: SQLiteNotes, from first: Int, count: Int, batch: Int) throws {
    let note = try db.prepare("INSERT INTO note(id, title, body, createdAt, updatedAt, isRead, folderId) VALUES(?, ?, ?, ?, ?, 0, ?)")
    defer { sqlite3_finalize(note) }
    let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
    var n = first
    while n < first + count {
        try db.exec("BEGIN")
        for _ in 0..<batch where n < first + count {
            sqlite3_bind_int64(note, 1, Int64(n + 1))
            sqlite3_bind_text(note, 2, "note \(n)", -1, transient)
            sqlite3_bind_text(note, 3, "imported body \(n)", -1, transient)
            sqlite3_bind_double(note, 4, Double(n))
            sqlite3_bind_double(note, 5, Double(n))
            sqlite3_bind_int64(note, 6, Int64(1 + n % folderCount))
            try db.step(note)
            n += 1
        }
        try db.exec("COMMIT")
    }
}
