// SQLite under test, through its C API with prepared statements (the strongest SQLite bar; no
// wrapper library): `bench.sqlite` (+ `-wal`, `-shm`) with one table
//     kv(k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID
// — WITHOUT ROWID makes the primary key the table's B-tree key, one B-tree per table as in the
// other two engines (a rowid table would add a second B-tree for the key's index).
//
// Settings, each chosen to give SQLite its best fair footing against DocStore:
//   journal_mode=WAL      SQLite's fastest durable mode and the closest to DocStore's design (a
//                         log appended at commit, folded into the database at checkpoints).
//   synchronous=NORMAL    in .bulk mode: in WAL mode commits are not synced, the WAL is synced
//                         at checkpoints — the same promise as DocStore's `.normal`; `settle()`
//                         is `PRAGMA wal_checkpoint(TRUNCATE)`, which syncs the WAL, copies it
//                         into the database, syncs that and empties the WAL.
//   synchronous=FULL      in .durable mode: the WAL is synced at every commit — the same promise
//                         as DocStore's `.full` and LMDB's default.
//   cache_size=-262144    256 MiB of page cache, DocStore's default budget (SQLite's own default,
//                         2 MiB, would re-read most pages from the OS cache through read calls).
//   page size 4096, wal_autocheckpoint 1000 pages, locking_mode NORMAL, mmap off: SQLite's
//                         defaults (the automatic checkpoints count in SQLite's commit times as
//                         DocStore's count in its).
// Each thread uses its own connection (SQLITE_OPEN_NOMUTEX: no per-call locking inside a
// connection); concurrent writers serialize on SQLite's write lock, waiting in its busy handler.

import CSQLite
import BenchmarkSupport
import Foundation

final class SQLiteSubject: Subject {
    static let name = "SQLite"
    static func databasePath(in directory: String) -> String { directory + "/bench.sqlite" }

    let path: String
    let mode: Mode
    let db: OpaquePointer

    /// Opens a connection with the settings above.
    static func connect(_ path: String, mode: Mode, create: Bool) throws -> OpaquePointer {
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0)
        let rc = sqlite3_open_v2(path, &handle, flags, nil)
        guard rc == SQLITE_OK, let db = handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "code \(rc)"
            sqlite3_close(handle)
            throw BenchError("SQLite open \(path): \(message)")
        }
        do {
            sqlite3_busy_timeout(db, 30_000)
            try exec(db, "PRAGMA journal_mode=WAL")
            try exec(db, "PRAGMA synchronous=\(mode == .bulk ? "NORMAL" : "FULL")")
            try exec(db, "PRAGMA cache_size=-262144")
        } catch {
            sqlite3_close(db)
            throw error
        }
        return db
    }

    static func exec(_ db: OpaquePointer, _ sql: String) throws {
        var message: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(db, sql, nil, nil, &message)
        if rc != SQLITE_OK {
            let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(db))
            sqlite3_free(message)
            throw BenchError("SQLite '\(sql)': \(text) (code \(rc))")
        }
    }

    static func prepare(_ db: OpaquePointer, _ sql: String) throws -> OpaquePointer {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK, let stmt else {
            throw BenchError("SQLite prepare '\(sql)': \(String(cString: sqlite3_errmsg(db)))")
        }
        return stmt
    }

    init(directory: String, mode: Mode, create: Bool) throws {
        path = Self.databasePath(in: directory)
        self.mode = mode
        db = try Self.connect(path, mode: mode, create: create)
        if create {
            do {
                try Self.exec(db, "CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB NOT NULL) WITHOUT ROWID")
            } catch {
                sqlite3_close(db)
                throw error
            }
        }
    }

    // MARK: - Statement helpers (the bound bytes live only during the step: SQLITE_STATIC)

    /// Runs an INSERT or DELETE statement with one key (and a value), then resets it.
    @inline(__always) static func step(_ db: OpaquePointer, _ stmt: OpaquePointer, key: [UInt8], value: [UInt8]? = nil) throws {
        let rc = key.withUnsafeBytes { k -> Int32 in
            sqlite3_bind_blob(stmt, 1, k.baseAddress, Int32(k.count), nil)
            guard let value else { return sqlite3_step(stmt) }
            return value.withUnsafeBytes { v in
                sqlite3_bind_blob(stmt, 2, v.baseAddress, Int32(v.count), nil)
                return sqlite3_step(stmt)
            }
        }
        sqlite3_reset(stmt)
        if rc != SQLITE_DONE { throw BenchError("SQLite step: \(String(cString: sqlite3_errmsg(db))) (code \(rc))") }
    }

    /// Runs `SELECT v FROM kv WHERE k = ?`; returns the value copied out, or nil.
    @inline(__always) static func lookup(_ db: OpaquePointer, _ stmt: OpaquePointer, _ key: [UInt8]) throws -> [UInt8]? {
        defer { sqlite3_reset(stmt) }
        let rc = key.withUnsafeBytes { k -> Int32 in
            sqlite3_bind_blob(stmt, 1, k.baseAddress, Int32(k.count), nil)
            return sqlite3_step(stmt)
        }
        if rc == SQLITE_DONE { return nil }
        guard rc == SQLITE_ROW else { throw BenchError("SQLite select: \(String(cString: sqlite3_errmsg(db))) (code \(rc))") }
        let n = Int(sqlite3_column_bytes(stmt, 0))
        return [UInt8](UnsafeRawBufferPointer(start: sqlite3_column_blob(stmt, 0), count: n))
    }

    // MARK: - Workloads

    func bulkLoad(_ w: Workload) throws {
        let insert = try Self.prepare(db, "INSERT INTO kv(k, v) VALUES (?1, ?2)")
        defer { sqlite3_finalize(insert) }
        try Self.exec(db, "BEGIN")
        do {
            for i in w.keys.indices { try Self.step(db, insert, key: w.keys[i], value: w.values[i]) }
        } catch {
            try? Self.exec(db, "ROLLBACK")
            throw error
        }
        try Self.exec(db, "COMMIT")
    }

    func settle() throws {
        let stmt = try Self.prepare(db, "PRAGMA wal_checkpoint(TRUNCATE)")
        defer { sqlite3_finalize(stmt) }
        guard sqlite3_step(stmt) == SQLITE_ROW else { throw BenchError("SQLite checkpoint: \(String(cString: sqlite3_errmsg(db)))") }
        if sqlite3_column_int(stmt, 0) != 0 { throw BenchError("SQLite checkpoint could not complete (busy)") }
    }

    func pointReads(_ w: Workload) throws -> Int {
        let select = try Self.prepare(db, "SELECT v FROM kv WHERE k = ?1")
        defer { sqlite3_finalize(select) }
        try Self.exec(db, "BEGIN")  // one read transaction (one snapshot) for all reads
        defer { try? Self.exec(db, "COMMIT") }
        var bytes = 0
        for i in w.readOrder {
            guard let v = try Self.lookup(db, select, w.keys[i]) else { throw BenchError("SQLite: a loaded key is missing") }
            bytes += v.count
        }
        return bytes
    }

    func scan() throws -> (rows: Int, bytes: Int) {
        // ORDER BY the primary key of a WITHOUT ROWID table walks the table's B-tree: no sort.
        let stmt = try Self.prepare(db, "SELECT k, v FROM kv ORDER BY k")
        defer { sqlite3_finalize(stmt) }
        var rows = 0, bytes = 0
        var rc = sqlite3_step(stmt)
        while rc == SQLITE_ROW {
            let key = [UInt8](UnsafeRawBufferPointer(start: sqlite3_column_blob(stmt, 0), count: Int(sqlite3_column_bytes(stmt, 0))))
            let value = [UInt8](UnsafeRawBufferPointer(start: sqlite3_column_blob(stmt, 1), count: Int(sqlite3_column_bytes(stmt, 1))))
            rows += 1
            bytes += key.count + value.count
            rc = sqlite3_step(stmt)
        }
        guard rc == SQLITE_DONE else { throw BenchError("SQLite scan: \(String(cString: sqlite3_errmsg(db)))") }
        return (rows, bytes)
    }

    func deletes(_ w: Workload) throws -> Int {
        let delete = try Self.prepare(db, "DELETE FROM kv WHERE k = ?1")
        defer { sqlite3_finalize(delete) }
        try Self.exec(db, "BEGIN")
        var removed = 0
        do {
            for i in w.deleteOrder {
                try Self.step(db, delete, key: w.keys[i])
                removed += Int(sqlite3_changes(db))
            }
        } catch {
            try? Self.exec(db, "ROLLBACK")
            throw error
        }
        try Self.exec(db, "COMMIT")
        return removed
    }

    /// One autocommit INSERT: SQLite's own single-statement transaction.
    func commitOne(key: [UInt8], value: [UInt8]) throws {
        let insert = try cachedInsert()
        try Self.step(db, insert, key: key, value: value)
    }

    private var insertStatement: OpaquePointer?
    private func cachedInsert() throws -> OpaquePointer {
        if let insertStatement { return insertStatement }
        let stmt = try Self.prepare(db, "INSERT INTO kv(k, v) VALUES (?1, ?2)")
        insertStatement = stmt
        return stmt
    }

    func concurrentCommits(_ keys: [[[UInt8]]], value: [UInt8]) throws -> Double {
        // Connections are opened before the threads are released (not timed), one per thread.
        let connections = try ConnectionPool(path: path, mode: mode, count: keys.count)
        defer { connections.closeAll() }
        return try onThreads(keys.count) { t in
            let (db, insert) = connections.items[t]
            for k in keys[t] { try SQLiteSubject.step(db, insert, key: k, value: value) }
        }
    }

    /// The database plus its WAL (the -shm index holds no data and is rebuilt on open).
    func fileBytes() -> UInt64 { fileSize(path) + fileSize(path + "-wal") }

    func readOne(_ key: [UInt8]) throws -> Int? {
        let select = try Self.prepare(db, "SELECT v FROM kv WHERE k = ?1")
        defer { sqlite3_finalize(select) }
        return try Self.lookup(db, select, key)?.count
    }

    func close() throws {
        if let insertStatement { sqlite3_finalize(insertStatement) }
        insertStatement = nil
        let rc = sqlite3_close(db)
        if rc != SQLITE_OK { throw BenchError("SQLite close: code \(rc)") }
    }
}

/// One connection and prepared INSERT per thread. `@unchecked Sendable`: thread t uses only
/// items[t], and the pool is closed after every thread finished.
final class ConnectionPool: @unchecked Sendable {
    let items: [(db: OpaquePointer, insert: OpaquePointer)]

    init(path: String, mode: Mode, count: Int) throws {
        var items: [(db: OpaquePointer, insert: OpaquePointer)] = []
        do {
            for _ in 0..<count {
                let db = try SQLiteSubject.connect(path, mode: mode, create: false)
                do {
                    items.append((db, try SQLiteSubject.prepare(db, "INSERT INTO kv(k, v) VALUES (?1, ?2)")))
                } catch {
                    sqlite3_close(db)
                    throw error
                }
            }
        } catch {
            for (db, stmt) in items { sqlite3_finalize(stmt); sqlite3_close(db) }
            throw error
        }
        self.items = items
    }

    func closeAll() {
        for (db, stmt) in items { sqlite3_finalize(stmt); sqlite3_close(db) }
    }
}
