// ControllerMemory (issue #5): what a results controller over a large list costs —
//
//   ObjectBenchmark controllerMemory [--notes N]
//
// stores N notes (default 1 000 000), then in a fresh context makes a FetchedResultsController
// over all of them sorted by createdAt with a batch size of 50, and prints: the memory the
// controller holds after performFetch (resident set growth), the time of performFetch, of the
// first screen (object(at:) for rows 0…19), and of one change reported as a difference (a note
// inserted and processed). DocStore only: the figure is against the "stays small".

import BenchmarkSupport
import DocStore
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// glibc's malloc_trim (not in the Glibc module): returns freed heap memory to the system, so
/// the resident set measures what is still held.
@_silgen_name("malloc_trim") private func mallocTrim(_ pad: Int) -> Int32
private func releaseFreedMemory() { _ = mallocTrim(0) }

func runControllerMemory(_ arguments: [String]) throws -> Int32 {
    var notes = 1_000_000
    if let i = arguments.firstIndex(of: "--notes"), i + 1 < arguments.count { notes = max(1000, Int(arguments[i + 1]) ?? notes) }
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("docstore-controller-\(getpid())").path
    try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: dir) }
    let store = try Store(url: URL(fileURLWithPath: dir + "/list.docstore"), models: [Folder.self, Note.self, Tag.self])
    progress("storing \(notes) notes")
    let insertSeconds = try timed {
        var n = 0
        while n < notes {
            let c = Context(store: store)
            for _ in 0..<50_000 where n < notes {
                let note = Note()
                note.title = "note \(n)"
                note.createdAt = Date(timeIntervalSinceReferenceDate: Double(n))
                try c.insert(note)
                n += 1
            }
            try c.save()
        }
    }
    progress("making the controller")
    let context = Context(store: store)
    releaseFreedMemory()
    let before = residentBytes()
    let controller = try FetchedResultsController(
        fetchRequest: FetchRequest<Note>(sortDescriptors: [SortKey("createdAt")]), context: context, batchSize: 50)
    let fetchSeconds = try timed { try controller.performFetch() }
    releaseFreedMemory()      // what performFetch freed goes back: what stays is what the controller holds
    let held = residentBytes() - before
    var titles = 0
    let screenSeconds = try timed {
        for row in 0..<20 { titles += try controller.object(at: IndexPath(item: row, section: 0)).title.count }
    }
    var reported = 0
    controller.onChange = { difference in reported += difference.changes.count }
    let changeSeconds = try timed {
        let note = Note()
        note.title = "new"
        note.createdAt = Date(timeIntervalSinceReferenceDate: -1)
        try context.insert(note)
        context.processPendingChanges()
    }
    guard controller.count == notes + 1, reported == 1, titles > 0 else {
        throw BenchmarkFailure("controller holds \(controller.count) rows, reported \(reported) changes")
    }
    print("| results controller over \(notes) notes (batch size 50) | |")
    print("| --- | --- |")
    print(String(format: "| memory held after performFetch | %.1f MiB (%.1f bytes a row) |", Double(held) / 1_048_576, Double(held) / Double(notes)))
    print(String(format: "| performFetch | %.0f ms |", fetchSeconds * 1e3))
    print(String(format: "| first screen (20 rows) | %.2f ms |", screenSeconds * 1e3))
    print(String(format: "| one insert processed and reported | %.2f ms |", changeSeconds * 1e3))
    print(String(format: "| objects registered in the context | %d |", context.registeredObjects.count))
    print(String(format: "(storing the notes took %.1f s; load average %@)", insertSeconds, loadAverage()))
    try store.close()
    return 0
}
