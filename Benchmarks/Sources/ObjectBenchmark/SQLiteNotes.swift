// Raw SQLite under test, through its C API with prepared statements — the strongest bar. The
// schema a careful developer would write (foreign keys indexed, the N–M link table WITHOUT ROWID
// with an index for the other direction); WAL mode with synchronous=FULL, so a commit is durable
// as DocStore's save is; 256 MiB of page cache as in the engine benchmark.

import CSQLite
import Foundation

final class SQLiteNotes: NotesSubject {
    static let name = "SQLite"
    let db: OpaquePointer

    init(directory: String, create: Bool) throws {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0)
        guard sqlite3_open_v2(directory + "/notes.sqlite", &handle, flags, nil) == SQLITE_OK, let db = handle else {
            sqlite3_close(handle)
            throw BenchmarkFailure("SQLite: cannot open \(directory)/notes.sqlite")
        }
        self.db = db
        try exec("PRAGMA journal_mode=WAL")
        try exec("PRAGMA synchronous=FULL")
        try exec("PRAGMA cache_size=-262144")
        if create {
            try exec("""
                CREATE TABLE folder(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE tag(id INTEGER PRIMARY KEY, name TEXT NOT NULL);
                CREATE TABLE note(id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL,
                                  createdAt REAL NOT NULL, updatedAt REAL NOT NULL, isRead INTEGER NOT NULL,
                                  folderId INTEGER REFERENCES folder(id));
                CREATE INDEX note_folder_created ON note(folderId, createdAt);
                CREATE INDEX note_created ON note(createdAt);
                CREATE TABLE noteTag(noteId INTEGER NOT NULL, tagId INTEGER NOT NULL, PRIMARY KEY(noteId, tagId)) WITHOUT ROWID;
                CREATE INDEX noteTag_tag ON noteTag(tagId, noteId);
                """)
        }
    }

    func exec(_ sql: String) throws {
        var error: UnsafeMutablePointer<CChar>?
        guard sqlite3_exec(db, sql, nil, nil, &error) == SQLITE_OK else {
            let message = error.map { String(cString: $0) } ?? "?"
            sqlite3_free(error)
            throw BenchmarkFailure("SQLite: \(message) in \(sql.prefix(60))")
        }
    }

    func prepare(_ sql: String) throws -> OpaquePointer {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw BenchmarkFailure("SQLite: \(String(cString: sqlite3_errmsg(db))) preparing \(sql)")
        }
        return statement
    }

    func step(_ s: OpaquePointer) throws {
        guard sqlite3_step(s) == SQLITE_DONE else { throw BenchmarkFailure("SQLite: \(String(cString: sqlite3_errmsg(db)))") }
        sqlite3_reset(s)
    }

    func text(_ s: OpaquePointer, _ column: Int32) -> String {
        guard let p = sqlite3_column_text(s, column) else { return "" }
        return String(cString: p)
    }

    /// A note row read into a value, as an app's model struct would be filled.
    struct Row {
        var id: Int64; var title: String; var body: String; var createdAt: Date; var updatedAt: Date; var isRead: Bool; var folder: Int64
    }

    func row(_ s: OpaquePointer) -> Row {
        Row(id: sqlite3_column_int64(s, 0), title: text(s, 1), body: text(s, 2),
            createdAt: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(s, 3)),
            updatedAt: Date(timeIntervalSinceReferenceDate: sqlite3_column_double(s, 4)),
            isRead: sqlite3_column_int(s, 5) != 0, folder: sqlite3_column_int64(s, 6))
    }

    static let columns = "note.id, note.title, note.body, note.createdAt, note.updatedAt, note.isRead, note.folderId"

    func insertAll(_ data: NotesData) throws {
        try exec("BEGIN")
        try insertFoldersAndTags(data)
        try insertNotes(data)
        try exec("COMMIT")
    }

    /// Every folder and tag, inside the caller's transaction.
    func insertFoldersAndTags(_ data: NotesData) throws {
        let folder = try prepare("INSERT INTO folder(id, name) VALUES(?, ?)")
        let tag = try prepare("INSERT INTO tag(id, name) VALUES(?, ?)")
        defer { for s in [folder, tag] { sqlite3_finalize(s) } }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        for (i, name) in data.folderNames.enumerated() {
            sqlite3_bind_int64(folder, 1, Int64(i + 1)); sqlite3_bind_text(folder, 2, name, -1, transient); try step(folder)
        }
        for (i, name) in data.tagNames.enumerated() {
            sqlite3_bind_int64(tag, 1, Int64(i + 1)); sqlite3_bind_text(tag, 2, name, -1, transient); try step(tag)
        }
    }

    /// Binds a note's columns to an `INSERT INTO note(id, title, body, createdAt, updatedAt,
    /// isRead, folderId)`.
    static func bind(_ n: NoteData, id: Int64, to note: OpaquePointer) {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        sqlite3_bind_int64(note, 1, id)
        sqlite3_bind_text(note, 2, n.title, -1, transient)
        sqlite3_bind_text(note, 3, n.body, -1, transient)
        sqlite3_bind_double(note, 4, n.createdAt.timeIntervalSinceReferenceDate)
        sqlite3_bind_double(note, 5, n.updatedAt.timeIntervalSinceReferenceDate)
        sqlite3_bind_int(note, 6, n.isRead ? 1 : 0)
        sqlite3_bind_int64(note, 7, Int64(n.folder))
    }

    /// Every note with its tag links, inside the caller's transaction.
    func insertNotes(_ data: NotesData) throws {
        let note = try prepare("INSERT INTO note(id, title, body, createdAt, updatedAt, isRead, folderId) VALUES(?, ?, ?, ?, ?, ?, ?)")
        let link = try prepare("INSERT INTO noteTag(noteId, tagId) VALUES(?, ?)")
        defer { for s in [note, link] { sqlite3_finalize(s) } }
        for (i, n) in data.notes.enumerated() {
            let id = Int64(i + 1)
            Self.bind(n, id: id, to: note)
            try step(note)
            for t in n.tags {
                sqlite3_bind_int64(link, 1, id); sqlite3_bind_int64(link, 2, Int64(t)); try step(link)
            }
        }
    }

    func fetchByID(_ ids: [Int]) throws -> Int {
        let s = try prepare("SELECT \(Self.columns) FROM note WHERE id = ?")
        defer { sqlite3_finalize(s) }
        var total = 0
        for id in ids {
            sqlite3_bind_int64(s, 1, Int64(id))
            if sqlite3_step(s) == SQLITE_ROW { total += row(s).title.count }
            sqlite3_reset(s)
        }
        return total
    }

    func fetchAllReadingEverything() throws -> Int {
        let s = try prepare("SELECT \(Self.columns) FROM note")
        defer { sqlite3_finalize(s) }
        var count = 0
        while sqlite3_step(s) == SQLITE_ROW {
            let r = row(s)
            if !r.title.isEmpty && !r.body.isEmpty && r.createdAt < r.updatedAt { count += 1 }
        }
        return count
    }

    func notes(_ sql: String, _ ids: ClosedRange<Int>) throws -> Int {
        let s = try prepare(sql)
        defer { sqlite3_finalize(s) }
        var seen = 0
        for id in ids {
            sqlite3_bind_int64(s, 1, Int64(id))
            while sqlite3_step(s) == SQLITE_ROW { if !row(s).title.isEmpty { seen += 1 } }
            sqlite3_reset(s)
        }
        return seen
    }

    func folderNotes(_ folders: Int) throws -> Int {
        try notes("SELECT \(Self.columns) FROM note WHERE folderId = ?", 1...folders)
    }

    func tagNotes(_ tags: Int) throws -> Int {
        try notes("SELECT \(Self.columns) FROM noteTag JOIN note ON note.id = noteTag.noteId WHERE noteTag.tagId = ?", 1...tags)
    }

    func delete(_ ids: [Int]) throws {
        try exec("BEGIN")
        let links = try prepare("DELETE FROM noteTag WHERE noteId = ?")
        let note = try prepare("DELETE FROM note WHERE id = ?")
        defer { sqlite3_finalize(links); sqlite3_finalize(note) }
        for id in ids {
            sqlite3_bind_int64(links, 1, Int64(id)); try step(links)
            sqlite3_bind_int64(note, 1, Int64(id)); try step(note)
        }
        try exec("COMMIT")
    }

    func findAndDelete(_ dates: [Date]) throws -> Int {
        try exec("BEGIN")
        let find = try prepare("SELECT id FROM note WHERE createdAt = ? LIMIT 1")
        let links = try prepare("DELETE FROM noteTag WHERE noteId = ?")
        let note = try prepare("DELETE FROM note WHERE id = ?")
        defer { sqlite3_finalize(find); sqlite3_finalize(links); sqlite3_finalize(note) }
        var deleted = 0
        for date in dates {
            sqlite3_bind_double(find, 1, date.timeIntervalSinceReferenceDate)
            guard sqlite3_step(find) == SQLITE_ROW else { sqlite3_reset(find); continue }
            let id = sqlite3_column_int64(find, 0)
            sqlite3_reset(find)
            sqlite3_bind_int64(links, 1, id); try step(links)
            sqlite3_bind_int64(note, 1, id); try step(note)
            deleted += 1
        }
        try exec("COMMIT")
        return deleted
    }

    func findOrCreate(_ notes: ArraySlice<NoteData>, firstNewID: Int64) throws -> Int {
        try exec("BEGIN")
        let find = try prepare("SELECT id FROM note WHERE createdAt = ? LIMIT 1")
        let insert = try prepare("INSERT INTO note(id, title, body, createdAt, updatedAt, isRead, folderId) VALUES(?, ?, ?, ?, ?, ?, ?)")
        defer { sqlite3_finalize(find); sqlite3_finalize(insert) }
        var inserted = 0
        for n in notes {
            for _ in 0..<2 {
                sqlite3_bind_double(find, 1, n.createdAt.timeIntervalSinceReferenceDate)
                let found = sqlite3_step(find) == SQLITE_ROW
                sqlite3_reset(find)
                if found { continue }
                Self.bind(n, id: firstNewID + Int64(inserted), to: insert)
                try step(insert)
                inserted += 1
            }
        }
        try exec("COMMIT")
        return inserted
    }

    func query(_ workload: Workload, _ data: NotesData) throws -> Int {
        let sql = switch workload {
        case .queryEqual: "SELECT \(Self.columns) FROM note WHERE createdAt = ?"
        case .queryRange: "SELECT \(Self.columns) FROM note WHERE createdAt >= ? AND createdAt < ? ORDER BY createdAt"
        case .queryFirstPage: "SELECT \(Self.columns) FROM note ORDER BY createdAt DESC LIMIT 20"
        case .queryFolderPage: "SELECT \(Self.columns) FROM note WHERE folderId = ? ORDER BY createdAt DESC LIMIT 20"
        case .queryTag: "SELECT \(Self.columns) FROM tag JOIN noteTag ON noteTag.tagId = tag.id JOIN note ON note.id = noteTag.noteId WHERE tag.name = ?"
        case .queryCount: "SELECT count(*) FROM note WHERE isRead = 0 AND createdAt > ?"
        default: "SELECT \(Self.columns) FROM note WHERE title LIKE '%milk%'"
        }
        let s = try prepare(sql)
        defer { sqlite3_finalize(s) }
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        var total = 0
        for i in 0..<DocStoreNotes.repetitions(workload, data) {
            let d = data.queryDates[i % data.queryDates.count].timeIntervalSinceReferenceDate
            switch workload {
            case .queryEqual, .queryCount: sqlite3_bind_double(s, 1, d)
            case .queryRange: sqlite3_bind_double(s, 1, d); sqlite3_bind_double(s, 2, d + 100 * 60)
            case .queryFolderPage: sqlite3_bind_int64(s, 1, Int64(1 + i % data.folderNames.count))
            case .queryTag: sqlite3_bind_text(s, 1, data.tagNames[i % data.tagNames.count], -1, transient)
            default: break
            }
            while sqlite3_step(s) == SQLITE_ROW {
                if workload == .queryCount { total += Int(sqlite3_column_int64(s, 0)) } else if !row(s).title.isEmpty { total += 1 }
            }
            sqlite3_reset(s)
        }
        return total
    }

    func fetchOne(_ id: Int) throws -> String {
        let s = try prepare("SELECT \(Self.columns) FROM note WHERE id = ?")
        defer { sqlite3_finalize(s) }
        sqlite3_bind_int64(s, 1, Int64(id))
        return sqlite3_step(s) == SQLITE_ROW ? row(s).title : ""
    }

    func close() throws { sqlite3_close(db) }
}
