// SQLite under the benchmark, through its C API with prepared statements: a WITHOUT ROWID table
// kv(k BLOB PRIMARY KEY, v BLOB) in WAL mode; bulk work with synchronous=NORMAL (synced at
// checkpoint, like DocStore's `.normal`), single commits with synchronous=FULL. Values are copied
// out on reads, as DocStore's API returns a copy.

import CSQLite
import Foundation

let sqliteTransient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

final class SQLiteBench: BenchStore, @unchecked Sendable {
    // @unchecked: `db` is used by one thread at a time; concurrent commits open their own connections.
    static let name = "SQLite"
    let directory: String
    let path: String
    let durable: Bool
    var db: OpaquePointer

    static func open(_ path: String, durable: Bool) throws -> OpaquePointer {
        var db: OpaquePointer?
        guard sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, nil) == SQLITE_OK, let db else {
            throw BenchError("sqlite open failed")
        }
        try exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=\(durable ? "FULL" : "NORMAL"); PRAGMA cache_size=-1000000;")
        sqlite3_busy_timeout(db, 60_000)
        return db
    }

    static func exec(_ db: OpaquePointer, _ sql: String) throws {
        var err: UnsafeMutablePointer<CChar>?
        if sqlite3_exec(db, sql, nil, nil, &err) != SQLITE_OK {
            let message = err.map { String(cString: $0) } ?? "?"
            sqlite3_free(err)
            throw BenchError("sqlite: \(message) in \(sql)")
        }
    }

    static func prepare(_ db: OpaquePointer, _ sql: String) throws -> OpaquePointer {
        var stmt: OpaquePointer?
        guard sqlite3_prepare_v2(db, sql, -1, &stmt, nil) == SQLITE_OK, let stmt else {
            throw BenchError("sqlite prepare: \(String(cString: sqlite3_errmsg(db)))")
        }
        return stmt
    }

    init(directory: String, durable: Bool) throws {
        self.directory = directory
        self.path = directory + "/bench.sqlite"
        self.durable = durable
        db = try Self.open(path, durable: durable)
        try Self.exec(db, "CREATE TABLE IF NOT EXISTS kv(k BLOB PRIMARY KEY, v BLOB) WITHOUT ROWID")
    }

    static func insert(_ stmt: OpaquePointer, _ key: [UInt8], _ value: [UInt8]) throws {
        try key.withUnsafeBytes { k in
            try value.withUnsafeBytes { v in
                sqlite3_bind_blob(stmt, 1, k.baseAddress, Int32(k.count), nil)
                sqlite3_bind_blob(stmt, 2, v.baseAddress, Int32(v.count), nil)
                let rc = sqlite3_step(stmt)
                sqlite3_reset(stmt)
                if rc != SQLITE_DONE { throw BenchError("sqlite insert rc \(rc)") }
            }
        }
    }

    func bulkLoad(_ w: Workload) throws {
        let stmt = try Self.prepare(db, "INSERT INTO kv(k, v) VALUES (?, ?)")
        defer { sqlite3_finalize(stmt) }
        try Self.exec(db, "BEGIN")
        for k in w.keys { try Self.insert(stmt, k, w.value) }
        try Self.exec(db, "COMMIT")
    }

    func durableCommits(_ keys: ArraySlice<[UInt8]>, value: [UInt8]) throws -> [Double] {
        let stmt = try Self.prepare(db, "INSERT OR REPLACE INTO kv(k, v) VALUES (?, ?)")
        defer { sqlite3_finalize(stmt) }
        var latencies: [Double] = []
        for k in keys {
            let t = DispatchTime.now().uptimeNanoseconds
            try Self.insert(stmt, k, value)
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9)
        }
        return latencies
    }

    func pointReads(_ w: Workload) throws -> Int {
        let stmt = try Self.prepare(db, "SELECT v FROM kv WHERE k = ?")
        defer { sqlite3_finalize(stmt) }
        try Self.exec(db, "BEGIN")
        var found = 0
        for i in w.readOrder {
            w.keys[i].withUnsafeBytes { k in
                sqlite3_bind_blob(stmt, 1, k.baseAddress, Int32(k.count), nil)
                if sqlite3_step(stmt) == SQLITE_ROW {
                    let n = Int(sqlite3_column_bytes(stmt, 0))
                    let copy = [UInt8](UnsafeRawBufferPointer(start: sqlite3_column_blob(stmt, 0), count: n))
                    if !copy.isEmpty { found += 1 }
                }
                sqlite3_reset(stmt)
            }
        }
        try Self.exec(db, "COMMIT")
        return found
    }

    func scan() throws -> Int {
        let stmt = try Self.prepare(db, "SELECT k, v FROM kv ORDER BY k")
        defer { sqlite3_finalize(stmt) }
        var n = 0
        while sqlite3_step(stmt) == SQLITE_ROW {
            let key = [UInt8](UnsafeRawBufferPointer(start: sqlite3_column_blob(stmt, 0), count: Int(sqlite3_column_bytes(stmt, 0))))
            let value = [UInt8](UnsafeRawBufferPointer(start: sqlite3_column_blob(stmt, 1), count: Int(sqlite3_column_bytes(stmt, 1))))
            if key.count + value.count > 0 { n += 1 }
        }
        return n
    }

    func deletes(_ w: Workload) throws {
        let stmt = try Self.prepare(db, "DELETE FROM kv WHERE k = ?")
        defer { sqlite3_finalize(stmt) }
        try Self.exec(db, "BEGIN")
        for i in w.deleteOrder {
            w.keys[i].withUnsafeBytes { k in
                sqlite3_bind_blob(stmt, 1, k.baseAddress, Int32(k.count), nil)
                _ = sqlite3_step(stmt)
                sqlite3_reset(stmt)
            }
        }
        try Self.exec(db, "COMMIT")
    }

    func settle() throws { try Self.exec(db, "PRAGMA wal_checkpoint(TRUNCATE)") }

    func diskBytes() -> UInt64 { directorySize(directory) }

    func concurrentCommits(threads: Int, perThread: Int, value: [UInt8]) throws {
        let path = self.path, durable = self.durable
        onThreads(threads) { t in
            guard let db = try? SQLiteBench.open(path, durable: durable),
                  let stmt = try? SQLiteBench.prepare(db, "INSERT OR REPLACE INTO kv(k, v) VALUES (?, ?)") else { return }
            for i in 0..<perThread {
                var key = [UInt8](repeating: 0xEE, count: 16)
                key[0] = UInt8(t); key[1] = UInt8(i & 0xFF); key[2] = UInt8(i >> 8)
                try? SQLiteBench.insert(stmt, key, value)
            }
            sqlite3_finalize(stmt)
            sqlite3_close(db)
        }
    }

    func close() throws { sqlite3_close(db) }

    static func openAndReadOne(directory: String, key: [UInt8]) throws -> Bool {
        let db = try open(directory + "/bench.sqlite", durable: true)
        defer { sqlite3_close(db) }
        let stmt = try prepare(db, "SELECT v FROM kv WHERE k = ?")
        defer { sqlite3_finalize(stmt) }
        return key.withUnsafeBytes { k in
            sqlite3_bind_blob(stmt, 1, k.baseAddress, Int32(k.count), nil)
            return sqlite3_step(stmt) == SQLITE_ROW
        }
    }
}
