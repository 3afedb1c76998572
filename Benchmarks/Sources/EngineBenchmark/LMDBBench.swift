// LMDB under the benchmark, through its C API: one unnamed database; bulk work with MDB_NOSYNC
// and an explicit mdb_env_sync when settling (like DocStore's `.normal`), single commits with
// LMDB's default full sync. Values are copied out on reads, as DocStore's API returns a copy.

import CLMDB
import Foundation

final class LMDBBench: BenchStore, @unchecked Sendable {
    // @unchecked: the environment handle is thread-safe in LMDB; each thread uses its own txns.
    static let name = "LMDB"
    let directory: String
    let env: OpaquePointer
    var dbi: MDB_dbi = 0

    static func check(_ rc: Int32, _ what: String) throws {
        if rc != 0 { throw BenchError("LMDB \(what): \(String(cString: mdb_strerror(rc)))") }
    }

    init(directory: String, durable: Bool) throws {
        self.directory = directory
        var e: OpaquePointer?
        try Self.check(mdb_env_create(&e), "env_create")
        guard let e else { throw BenchError("LMDB env_create returned nil") }
        env = e
        try Self.check(mdb_env_set_mapsize(env, 16 << 30), "set_mapsize")
        try Self.check(mdb_env_open(env, directory, durable ? 0 : UInt32(MDB_NOSYNC), 0o644), "env_open")
        try write { txn in
            var d: MDB_dbi = 0
            try Self.check(mdb_dbi_open(txn, nil, 0, &d), "dbi_open")
            self.dbi = d
        }
    }

    func write(_ body: (OpaquePointer) throws -> Void) throws {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, 0, &txn), "txn_begin")
        guard let txn else { throw BenchError("no txn") }
        do { try body(txn) } catch { mdb_txn_abort(txn); throw error }
        try Self.check(mdb_txn_commit(txn), "txn_commit")
    }

    func read<R>(_ body: (OpaquePointer) throws -> R) throws -> R {
        var txn: OpaquePointer?
        try Self.check(mdb_txn_begin(env, nil, UInt32(MDB_RDONLY), &txn), "txn_begin")
        guard let txn else { throw BenchError("no txn") }
        defer { mdb_txn_abort(txn) }
        return try body(txn)
    }

    func put(_ txn: OpaquePointer, _ key: [UInt8], _ value: [UInt8]) throws {
        try key.withUnsafeBytes { k in
            try value.withUnsafeBytes { v in
                var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                var vv = MDB_val(mv_size: v.count, mv_data: UnsafeMutableRawPointer(mutating: v.baseAddress))
                try Self.check(mdb_put(txn, dbi, &kv, &vv, 0), "put")
            }
        }
    }

    func bulkLoad(_ w: Workload) throws {
        try write { txn in for k in w.keys { try put(txn, k, w.value) } }
    }

    func durableCommits(_ keys: ArraySlice<[UInt8]>, value: [UInt8]) throws -> [Double] {
        var latencies: [Double] = []
        for k in keys {
            let t = DispatchTime.now().uptimeNanoseconds
            try write { txn in try put(txn, k, value) }
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9)
        }
        return latencies
    }

    func pointReads(_ w: Workload) throws -> Int {
        try read { txn in
            var found = 0
            for i in w.readOrder {
                w.keys[i].withUnsafeBytes { k in
                    var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                    var vv = MDB_val()
                    if mdb_get(txn, dbi, &kv, &vv) == 0 {
                        let copy = [UInt8](UnsafeRawBufferPointer(start: vv.mv_data, count: vv.mv_size))
                        if !copy.isEmpty { found += 1 }
                    }
                }
            }
            return found
        }
    }

    func scan() throws -> Int {
        try read { txn in
            var cursor: OpaquePointer?
            try Self.check(mdb_cursor_open(txn, dbi, &cursor), "cursor_open")
            defer { mdb_cursor_close(cursor) }
            var k = MDB_val(), v = MDB_val()
            var n = 0
            var op = MDB_FIRST
            while mdb_cursor_get(cursor, &k, &v, op) == 0 {
                let key = [UInt8](UnsafeRawBufferPointer(start: k.mv_data, count: k.mv_size))
                let value = [UInt8](UnsafeRawBufferPointer(start: v.mv_data, count: v.mv_size))
                if key.count + value.count > 0 { n += 1 }
                op = MDB_NEXT
            }
            return n
        }
    }

    func deletes(_ w: Workload) throws {
        try write { txn in
            for i in w.deleteOrder {
                try w.keys[i].withUnsafeBytes { k in
                    var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                    try Self.check(mdb_del(txn, dbi, &kv, nil), "del")
                }
            }
        }
    }

    func settle() throws { try Self.check(mdb_env_sync(env, 1), "env_sync") }

    func diskBytes() -> UInt64 {
        ((try? FileManager.default.attributesOfItem(atPath: directory + "/data.mdb"))?[.size] as? NSNumber)?.uint64Value ?? 0
    }

    func concurrentCommits(threads: Int, perThread: Int, value: [UInt8]) throws {
        onThreads(threads) { t in
            for i in 0..<perThread {
                var key = [UInt8](repeating: 0xEE, count: 16)
                key[0] = UInt8(t); key[1] = UInt8(i & 0xFF); key[2] = UInt8(i >> 8)
                try? self.write { txn in try self.put(txn, key, value) }
            }
        }
    }

    func close() throws { mdb_env_close(env) }

    static func openAndReadOne(directory: String, key: [UInt8]) throws -> Bool {
        let store = try LMDBBench(directory: directory, durable: true)
        let found = try store.read { txn in
            key.withUnsafeBytes { k in
                var kv = MDB_val(mv_size: k.count, mv_data: UnsafeMutableRawPointer(mutating: k.baseAddress))
                var vv = MDB_val()
                return mdb_get(txn, store.dbi, &kv, &vv) == 0
            }
        }
        try store.close()
        return found
    }
}
