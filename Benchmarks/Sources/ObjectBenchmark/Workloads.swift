// Workloads: the object-level workloads of issue #3, each run in a child process of its own (so
// each one's peak memory is its own), against a store the insert workload made:
//   insert       every folder, tag and note with links, one transaction (a context save)
//   fetchByID    N random notes by ID, reading each one's title
//   fetchAll     every note, reading every attribute
//   folderNotes  each folder → its notes (reading titles)
//   tagNotes     each tag → its notes (reading titles)
//   faults       DocStore only: the memory one fault costs
//   query…       the queries of issue #4 (NotesData.queryLabels)
//   delete       N/2 notes with their links, one transaction
//   findAndDelete  the other N/2 notes, each found by its (unique, indexed) creation date and
//                deleted, one at a time, one transaction (a context with 50 000 deletions
//                pending must still find the next note at the cost of one lookup)
//   findOrCreate N/2 notes, each looked up by creation date twice in a row and inserted when
//                not found (the second lookup finds the first's unsaved insert), one transaction
// The child prints `seconds=… check=… peak=…`: the workload's time, a count that must be the
// same for every subject (so none does less work), and its peak memory above what the process
// held when the workload began.

import BenchmarkSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif

struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum Workload: String, CaseIterable {
    case insert, fetchByID, fetchAll, folderNotes, tagNotes, faults
    case queryEqual, queryRange, queryFirstPage, queryFolderPage, queryTag, queryCount, queryContains
    case delete, findAndDelete, findOrCreate

    var isQuery: Bool { rawValue.hasPrefix("query") }
}

func subjectType(_ name: String) throws -> any NotesSubject.Type {
    switch name {
    case DocStoreNotes.name: DocStoreNotes.self
    case SQLiteNotes.name: SQLiteNotes.self
    case GRDBNotes.name: GRDBNotes.self
    default: throw BenchmarkFailure("unknown subject \(name)")
    }
}

/// Bytes of memory the process holds now (resident set).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// The most memory the process has held (getrusage maxrss).
func peakResidentBytes() -> Int {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_maxrss * 1024
}

/// The child side: `__workload SUBJECT WORKLOAD DIR SCALE`.
func childWorkload(_ args: [String]) -> Int32 {
    guard args.count == 4, let workload = Workload(rawValue: args[1]), let scale = Double(args[3]) else { return 2 }
    do {
        let type = try subjectType(args[0])
        let data = NotesData(sizes: NotesSizes(scale: scale))
        let subject = try type.init(directory: args[2], create: workload == .insert)
        let before = residentBytes()
        var check = 0
        let seconds: Double
        switch workload {
        case .insert: seconds = try timed { try subject.insertAll(data) }
        case .fetchByID: seconds = try timed { check = try subject.fetchByID(data.fetchIDs) }
        case .fetchAll: seconds = try timed { check = try subject.fetchAllReadingEverything() }
        case .folderNotes: seconds = try timed { check = try subject.folderNotes(data.sizes.folders) }
        case .tagNotes: seconds = try timed { check = try subject.tagNotes(data.sizes.tags) }
        case .delete: seconds = try timed { try subject.delete(data.deleteIDs) }
        case .findAndDelete: seconds = try timed { check = try subject.findAndDelete(data.findDeleteDates) }
        case .findOrCreate: seconds = try timed { check = try subject.findOrCreate(data.notes.prefix(data.sizes.deletes), firstNewID: Int64(data.sizes.notes + 1)) }
        case .queryEqual, .queryRange, .queryFirstPage, .queryFolderPage, .queryTag, .queryCount, .queryContains:
            seconds = try timed { check = try subject.query(workload, data) }
            if let docstore = subject as? DocStoreNotes, let entries = try docstore.entriesRead(workload, data) {
                print("entries=\(entries)", terminator: " ")
            }
        case .faults:
            guard let docstore = subject as? DocStoreNotes else { return 2 }
            let bytes = try docstore.faultBytes(data.sizes.notes)
            try subject.close()
            print("seconds=0 check=0 peak=0 fault=\(bytes)")
            return 0
        }
        let peak = max(0, peakResidentBytes() - before)
        try subject.close()
        print("seconds=\(seconds) check=\(check) peak=\(peak)")
        return 0
    } catch {
        print("error: \(error)")
        return 1
    }
}

/// The child side of the new-process workload: `__open SUBJECT DIR` opens the store, fetches
/// note 1, reads its title and closes it, and prints how long that took inside the process.
func childOpen(_ args: [String]) -> Int32 {
    guard args.count == 2 else { return 2 }
    do {
        var title = ""
        let seconds = try timed {
            let subject = try subjectType(args[0]).init(directory: args[1], create: false)
            title = try subject.fetchOne(1)
            try subject.close()
        }
        print("seconds=\(seconds)")
        return title.isEmpty ? 1 : 0
    } catch {
        print("error: \(error)")
        return 1
    }
}

/// What a workload child reported.
struct ChildReport {
    var seconds: Double
    var check: Int
    var peak: Double
    var fault: Double?
    /// DocStore's query workloads: index entries one query read (explain's analysis).
    var entries: Int?

    init(_ output: String) throws {
        var fields: [String: String] = [:]
        for part in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
            let kv = part.split(separator: "=", maxSplits: 1)
            if kv.count == 2 { fields[String(kv[0])] = String(kv[1]) }
        }
        guard let s = fields["seconds"].flatMap(Double.init), let c = fields["check"].flatMap(Int.init),
              let p = fields["peak"].flatMap(Double.init) else { throw BenchmarkFailure("child said: \(output)") }
        seconds = s
        check = c
        peak = p
        fault = fields["fault"].flatMap(Double.init)
        entries = fields["entries"].flatMap(Int.init)
    }
}
