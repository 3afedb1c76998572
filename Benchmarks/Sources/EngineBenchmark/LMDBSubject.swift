// LMDB under test, through its C API: the unnamed main database of an environment in the store's
// directory (`data.mdb` + `lock.mdb`), 4 KiB pages, a 64 GiB map (address space only; the file
// grows as pages are written), no MDB_WRITEMAP (LMDB's default and safer mode). Durability:
//   .bulk    → MDB_NOSYNC: commits do not sync; `settle()` is `mdb_env_sync(force: 1)`.
//              (LMDB has no log, so there is nothing to checkpoint.)
//   .durable → LMDB's default flags: each commit syncs the data pages, then the meta page.
// Concurrent writers serialize on LMDB's writer mutex (one write transaction at a time).

import CLMDB
import BenchmarkSupport
import Foundation

final class LMDBSubject: Subject, @unchecked Sendable {
    // @unchecked: an MDB_env may be shared by threads; each thread runs its own transactions, and
    // `dbi` is written only in init.
    static let name = "LMDB"

    let directory: String
    let env: OpaquePointer
    private(set) var dbi: MDB_dbi = 0

    static func check(_ rc: Int32, _ what: String) throws {
        guard rc == MDB_SUCCESS else { throw BenchError("LMDB \(what): \(String(cString: mdb_strerror(rc)))") }
    }

    init(directory: String, mode: Mode, create: Bool) throws {
        self.directory = directory
        var e: OpaquePointer?
        try Self.check(mdb_env_create(&e), "mdb_env_create")
        guard let e else { throw BenchError("LMDB: mdb_env_create gave no environment") }
        env = e
        do {
            try Self.check(mdb_env_set_mapsize(env, 64 << 30), "mdb_env_set_mapsize")
            let flags = mode == .bulk ? UInt32(MDB_NOSYNC) : 0
            try Self.check(mdb_env_open(env, directory, flags, 0o644), "mdb_env_open")
            // The main database always exists: its handle is opened in a read-only transaction
            // (writes nothing) and committed, which keeps the handle for the environment.
            var txn: OpaquePointer?
            try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
            var d: MDB_dbi = 0
            let rc = mdb_dbi_open(txn, nil, 0, &d)
            if rc != MDB_SUCCESS { mdb_txn_abort(txn); try Self.check(rc, "mdb_dbi_open") }
            try Self.check(mdb_txn_commit(txn), "mdb_txn_commit")
            dbi = d
        } catch {
            mdb_env_close(env)
            throw error
        }
    }

    /// Runs `body` in a write transaction and commits it.
    func write<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn), "mdb_txn_begin")
        guard let txn else { throw BenchError("LMDB: no transaction") }
        let result: R
        do { result = try body(txn) } catch { mdb_txn_abort(txn); throw error }
        try Self.check(mdb_txn_commit(txn), "mdb_txn_commit")
        return result
    }

    /// Runs `body` in a read-only transaction.
    func read<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "mdb_txn_begin")
        guard let txn else { throw BenchError("LMDB: no transaction") }
        defer { mdb_txn_abort(txn) }
        return try body(txn)
    }

    @inline(__always) func put(_ txn: OpaquePointer, _ key: [UInt8], _ value: [UInt8]) throws {
        let rc = key.withUnsafeBytes { k in
            value.withUnsafeBytes { v in
                var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                var vv = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                return mdb_put(txn, dbi, &kv, &vv, 0)
            }
        }
        try Self.check(rc, "mdb_put")
    }

    /// The value under `key`, copied out of the map; nil if absent.
    @inline(__always) func get(_ txn: OpaquePointer, _ key: [UInt8]) throws -> [UInt8]? {
        var vv = MDB_val()
        let rc = key.withUnsafeBytes { k in
            var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
            return mdb_get(txn, dbi, &kv, &vv)
        }
        if rc == MDB_NOTFOUND { return nil }
        try Self.check(rc, "mdb_get")
        return [UInt8](UnsafeRawBufferPointer(start: vv.mv_data, count: vv.mv_size))
    }

    func bulkLoad(_ w: Workload) throws {
        try write { txn in
            for i in w.keys.indices { try put(txn, w.keys[i], w.values[i]) }
        }
    }

    func settle() throws { try Self.check(mdb_env_sync(env, 1), "mdb_env_sync") }

    func pointReads(_ w: Workload) throws -> Int {
        try read { txn in
            var bytes = 0
            for i in w.readOrder {
                guard let v = try get(txn, w.keys[i]) else { throw BenchError("LMDB: a loaded key is missing") }
                bytes += v.count
            }
            return bytes
        }
    }

    func scan() throws -> (rows: Int, bytes: Int) {
        try read { txn in
            var cursor: OpaquePointer?
            try Self.check(mdb_cursor_open(txn, dbi, &cursor), "mdb_cursor_open")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val(), v = MDB_val()
            var rows = 0, bytes = 0
            var rc = mdb_cursor_get(cursor, &k, &v, MDB_FIRST)
            while rc == MDB_SUCCESS {
                let key = [UInt8](UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size))
                let value = [UInt8](UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
                rows += 1
                bytes += key.count + value.count
                rc = mdb_cursor_get(cursor, &k, &v, MDB_NEXT)
            }
            if rc != MDB_NOTFOUND { try Self.check(rc, "mdb_cursor_get") }
            return (rows, bytes)
        }
    }

    func deletes(_ w: Workload) throws -> Int {
        try write { txn in
            var removed = 0
            for i in w.deleteOrder {
                let rc = w.keys[i].withUnsafeBytes { k in
                    var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                    return mdb_del(txn, dbi, &kv, nil)
                }
                if rc == MDB_SUCCESS { removed += 1 } else if rc != MDB_NOTFOUND { try Self.check(rc, "mdb_del") }
            }
            return removed
        }
    }

    func commitOne(key: [UInt8], value: [UInt8]) throws {
        try write { txn in try put(txn, key, value) }
    }

    func concurrentCommits(_ keys: [[[UInt8]]], value: [UInt8]) throws -> Double {
        try onThreads(keys.count) { t in
            for k in keys[t] { try self.commitOne(key: k, value: value) }
        }
    }

    /// `data.mdb` (the lock file holds no data).
    func fileBytes() -> UInt64 { fileSize(directory + "/data.mdb") }

    func readOne(_ key: [UInt8]) throws -> Int? {
        try read { txn in try get(txn, key)?.count }
    }

    func close() throws { mdb_env_close(env) }
}
