// BatchOperations (issue #6's benchmark): batch insert, batch update and batch delete on the
// notes model, each subject in a child process of its own, one transaction per operation,
// durable at commit:
//
//   ObjectBenchmark batch [--notes N] [--repeat K]
//
//   insert  N notes, each with its folder and two tags (1 000 folders and 50 tags made first,
//           untimed), with the indexes createdAt and (folder, createdAt)
//   update  the N/2 oldest notes (createdAt < the median): isRead = true, updatedAt = a date
//   delete  the same N/2 notes with their tag links
//
// DocStore: BatchInsertRequest with a dictionary handler, BatchUpdateRequest and
// BatchDeleteRequest by predicate (which also keep the folders' and tags' inverse links and
// record history). SQLite (C API): prepared statements in one transaction; UPDATE … WHERE and
// DELETE … WHERE on the indexed date. GRDB: Codable records inserted in one write, then
// `updateAll` and `deleteAll` on a filtered request (the tag links go by ON DELETE CASCADE).
// Each child prints `insert=… update=… delete=… check=…`; `check` (notes left, read notes, tag
// links left) must agree between subjects.

import BenchmarkSupport
import CSQLite
import DocStore
import Foundation
import GRDB

func runBatchOperations(_ arguments: [String]) throws -> Int32 {
    var notes = 1_000_000, repeats = 1
    var only: [String] = ["DocStore", "SQLite", "GRDB"]
    var i = 0
    while i < arguments.count {
        let value = i + 1 < arguments.count ? arguments[i + 1] : ""
        switch arguments[i] {
        case "--notes": notes = max(1000, Int(value) ?? notes)
        case "--repeat": repeats = max(1, Int(value) ?? 1)
        case "--only": only = value.split(separator: ",").map(String.init)
        default: throw BenchmarkFailure("unknown argument \(arguments[i]); use --notes N, --repeat K, --only DocStore,SQLite,GRDB")
        }
        i += 2
    }
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("docstore-batch-\(getpid())").path
    defer { try? FileManager.default.removeItem(atPath: root) }
    var runs: [String: [[String: Double]]] = [:]
    var checks: [String: String] = [:]
    for r in 1...repeats {
        for name in only {
            progress("run \(r)/\(repeats): \(name), batch operations on \(notes) notes")
            let dir = root + "/\(name)-\(r)"
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
            // What the file system still has to do after the previous child (deleting its
            // million notes, hundreds of MB, among it) is flushed first, untimed: otherwise the
            // next subject's durable commits wait behind it (DocStore's update measured 1.21 s
            // after SQLite's run, 0.85 s alone).
            sync()
            let (_, output) = try spawnSelf(["__batch", name, dir, String(notes)])
            var fields: [String: Double] = [:]
            for part in output.split(whereSeparator: { $0 == " " || $0 == "\n" }) {
                let kv = part.split(separator: "=", maxSplits: 1)
                guard kv.count == 2 else { continue }
                if kv[0] == "check" { checks[name] = String(kv[1]) } else if let v = Double(kv[1]) { fields[String(kv[0])] = v }
            }
            guard fields["insert"] != nil else { throw BenchmarkFailure("\(name) said: \(output)") }
            runs[name, default: []].append(fields)
            try? FileManager.default.removeItem(atPath: dir)
        }
    }
    if Set(checks.values).count > 1 { throw BenchmarkFailure("the subjects disagree on the result: \(checks)") }
    func seconds(_ name: String, _ op: String) -> Double { median(runs[name, default: []].compactMap { $0[op] }) }
    let ops: [(key: String, label: String, count: Int)] = [
        ("insert", "batch insert \(notes) notes (folder + 2 tags each, 2 indexes)", notes),
        ("update", "batch update \(notes / 2) notes (2 attributes, by an indexed date)", notes / 2),
        ("delete", "batch delete \(notes / 2) notes with their tag links", notes / 2),
    ]
    print("| operation, one durable transaction | " + only.joined(separator: " | ") + only.dropFirst().map { " | DocStore ÷ \($0), time" }.joined() + " |")
    print("| --- |" + String(repeating: " ---: |", count: only.count * 2 - 1))
    for op in ops {
        var cells = only.map { name -> String in
            let s = seconds(name, op.key)
            return String(format: "%.2f s (%@)", s, format(Double(op.count) / s, .rate))
        }
        if only.first == "DocStore" {
            for other in only.dropFirst() { cells.append(String(format: "%.2f", seconds("DocStore", op.key) / seconds(other, op.key))) }
        }
        print("| \(op.label) | " + cells.joined(separator: " | ") + " |")
    }
    print("")
    print("check (notes left, read notes, tag links left): \(checks.values.first ?? "?"); medians of \(repeats) run\(repeats == 1 ? "" : "s"); load average \(loadAverage())")
    return 0
}

/// The child side: `__batch SUBJECT DIR NOTES`.
func childBatch(_ args: [String]) -> Int32 {
    guard args.count == 3, let notes = Int(args[2]) else { return 2 }
    do {
        var sizes = NotesSizes(scale: 1)
        sizes.notes = notes
        sizes.folders = 1000
        sizes.fetchByID = 0
        sizes.deletes = 0
        let data = NotesData(sizes: sizes)
        let cutoff = data.notes[notes / 2].createdAt
        let updatedAt = Date(timeIntervalSinceReferenceDate: 900_000_000)
        let subject: any BatchSubject = switch args[0] {
        case "DocStore": try DocStoreBatch(directory: args[1])
        case "SQLite": try SQLiteBatch(directory: args[1])
        case "GRDB": try GRDBBatch(directory: args[1])
        default: throw BenchmarkFailure("unknown subject \(args[0])")
        }
        try subject.setUp(data)
        let insert = try timed { try subject.insert(data) }
        let update = try timed { try subject.update(before: cutoff, updatedAt: updatedAt) }
        let delete = try timed { try subject.delete(before: cutoff) }
        let check = try subject.check()
        print("insert=\(insert) update=\(update) delete=\(delete) check=\(check)")
        return 0
    } catch {
        print("error: \(error)")
        return 1
    }
}

/// What each subject does, the way its users would write a batch.
protocol BatchSubject {
    /// Makes the folders and tags (untimed).
    func setUp(_ data: NotesData) throws
    func insert(_ data: NotesData) throws
    func update(before cutoff: Date, updatedAt: Date) throws
    func delete(before cutoff: Date) throws
    /// "notes,read,links" after the three operations.
    func check() throws -> String
}

final class DocStoreBatch: BatchSubject {
    let store: Store
    var folderIDs: [ObjectID] = []
    var tagIDs: [ObjectID] = []

    init(directory: String) throws {
        store = try Store(url: URL(fileURLWithPath: directory + "/notes.docstore"), models: [Folder.self, Note.self, Tag.self])
    }

    func setUp(_ data: NotesData) throws {
        let context = Context(store: store)
        for name in data.folderNames { let f = Folder(); f.name = name; try context.insert(f); folderIDs.append(f.objectID!) }
        for name in data.tagNames { let t = Tag(); t.name = name; try context.insert(t); tagIDs.append(t.objectID!) }
        try context.save()
    }

    func insert(_ data: NotesData) throws {
        var i = 0
        let request = BatchInsertRequest(entityName: "Note") { row in
            guard i < data.notes.count else { return true }
            let n = data.notes[i]
            i += 1
            row["title"] = n.title
            row["body"] = n.body
            row["createdAt"] = n.createdAt
            row["updatedAt"] = n.updatedAt
            row["isRead"] = n.isRead
            row["folder"] = self.folderIDs[n.folder - 1]
            row["tags"] = [self.tagIDs[n.tags[0] - 1], self.tagIDs[n.tags[1] - 1]]
            return false
        }
        _ = try store.execute(request)
    }

    func update(before cutoff: Date, updatedAt: Date) throws {
        let request = BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "createdAt < %@", cutoff),
                                         propertiesToUpdate: ["isRead": true, "updatedAt": updatedAt])
        _ = try store.execute(request)
    }

    func delete(before cutoff: Date) throws {
        _ = try store.execute(BatchDeleteRequest(entityName: "Note", predicate: try QueryPredicate(format: "createdAt < %@", cutoff)))
    }

    func check() throws -> String {
        let c = Context(store: store)
        let notes = try c.count(for: FetchRequest<Note>())
        let read = try c.count(for: FetchRequest<Note>(predicate: try QueryPredicate(format: "isRead == YES")))
        var links = 0
        for t in try c.fetch(FetchRequest<Tag>()) { links += t.notes.count }
        try store.close()
        return "\(notes),\(read),\(links)"
    }
}

final class SQLiteBatch: BatchSubject {
    let base: SQLiteNotes

    init(directory: String) throws { base = try SQLiteNotes(directory: directory, create: true) }

    func setUp(_ data: NotesData) throws {
        try base.exec("BEGIN")
        try base.insertFoldersAndTags(data)
        try base.exec("COMMIT")
    }

    func insert(_ data: NotesData) throws {
        try base.exec("BEGIN")
        try base.insertNotes(data)
        try base.exec("COMMIT")
    }

    func update(before cutoff: Date, updatedAt: Date) throws {
        let s = try base.prepare("UPDATE note SET isRead = 1, updatedAt = ? WHERE createdAt < ?")
        defer { sqlite3_finalize(s) }
        sqlite3_bind_double(s, 1, updatedAt.timeIntervalSinceReferenceDate)
        sqlite3_bind_double(s, 2, cutoff.timeIntervalSinceReferenceDate)
        try base.step(s)
    }

    func delete(before cutoff: Date) throws {
        try base.exec("BEGIN")
        let links = try base.prepare("DELETE FROM noteTag WHERE noteId IN (SELECT id FROM note WHERE createdAt < ?)")
        let notes = try base.prepare("DELETE FROM note WHERE createdAt < ?")
        defer { sqlite3_finalize(links); sqlite3_finalize(notes) }
        for s in [links, notes] {
            sqlite3_bind_double(s, 1, cutoff.timeIntervalSinceReferenceDate)
            try base.step(s)
        }
        try base.exec("COMMIT")
    }

    func check() throws -> String {
        func count(_ sql: String) throws -> Int {
            let s = try base.prepare(sql)
            defer { sqlite3_finalize(s) }
            return sqlite3_step(s) == SQLITE_ROW ? Int(sqlite3_column_int64(s, 0)) : -1
        }
        let result = "\(try count("SELECT count(*) FROM note")),\(try count("SELECT count(*) FROM note WHERE isRead = 1")),\(try count("SELECT count(*) FROM noteTag"))"
        try base.close()
        return result
    }
}

final class GRDBBatch: BatchSubject {
    let base: GRDBNotes

    init(directory: String) throws { base = try GRDBNotes(directory: directory, create: true) }

    func setUp(_ data: NotesData) throws {
        try base.pool.write { db in try GRDBNotes.insertFoldersAndTags(data, db) }
    }

    func insert(_ data: NotesData) throws {
        try base.pool.write { db in try GRDBNotes.insertNotes(data, db) }
    }

    func update(before cutoff: Date, updatedAt: Date) throws {
        _ = try base.pool.write { db in
            try NoteRecord.filter(Column("createdAt") < cutoff).updateAll(db, Column("isRead").set(to: true), Column("updatedAt").set(to: updatedAt))
        }
    }

    func delete(before cutoff: Date) throws {
        _ = try base.pool.write { db in try NoteRecord.filter(Column("createdAt") < cutoff).deleteAll(db) }
    }

    func check() throws -> String {
        let result = try base.pool.read { db in
            "\(try NoteRecord.fetchCount(db)),\(try NoteRecord.filter(Column("isRead") == true).fetchCount(db)),\(try NoteTagRecord.fetchCount(db))"
        }
        try base.close()
        return result
    }
}
