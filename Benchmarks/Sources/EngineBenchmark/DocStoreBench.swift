// DocStoreEngine under the benchmark: one tree "kv"; bulk work in `.normal` durability (synced at
// checkpoint), single commits in `.full` (each commit synced, concurrent ones grouped).

import DocStoreEngine
import Foundation

final class DocStoreBench: BenchStore, @unchecked Sendable {
    // @unchecked: Engine is Sendable; the other properties are immutable after init.
    static let name = "DocStore"
    let directory: String
    let engine: Engine

    init(directory: String, durable: Bool) throws {
        self.directory = directory
        var options = EngineOptions()
        options.durability = durable ? .full : .normal
        options.cacheBytes = 1 << 30
        engine = try Engine.open(at: directory + "/bench.docstore", options: options)
        try engine.write { try $0.createTreeIfMissing("kv") }
    }

    func bulkLoad(_ w: Workload) throws {
        try engine.write { txn in
            for k in w.keys { try txn.put(w.value, for: k, in: "kv") }
        }
    }

    func durableCommits(_ keys: ArraySlice<[UInt8]>, value: [UInt8]) throws -> [Double] {
        var latencies: [Double] = []
        for k in keys {
            let t = DispatchTime.now().uptimeNanoseconds
            try engine.write { try $0.put(value, for: k, in: "kv") }
            latencies.append(Double(DispatchTime.now().uptimeNanoseconds - t) / 1e9)
        }
        return latencies
    }

    func pointReads(_ w: Workload) throws -> Int {
        try engine.read { txn in
            var found = 0
            for i in w.readOrder where try txn.get(w.keys[i], in: "kv") != nil { found += 1 }
            return found
        }
    }

    func scan() throws -> Int {
        try engine.read { txn in
            var cursor = try txn.cursor(in: "kv")
            var n = 0
            var e = try cursor.first()
            while e != nil { n += 1; e = try cursor.next() }
            return n
        }
    }

    func deletes(_ w: Workload) throws {
        try engine.write { txn in
            for i in w.deleteOrder { try txn.delete(w.keys[i], in: "kv") }
        }
    }

    func settle() throws { try engine.checkpoint() }

    func diskBytes() -> UInt64 { directorySize(directory) }

    func concurrentCommits(threads: Int, perThread: Int, value: [UInt8]) throws {
        let engine = self.engine
        onThreads(threads) { t in
            for i in 0..<perThread {
                var key = [UInt8](repeating: 0xEE, count: 16)
                key[0] = UInt8(t); key[1] = UInt8(i & 0xFF); key[2] = UInt8(i >> 8)
                _ = try? engine.write { try $0.put(value, for: key, in: "kv") }
            }
        }
    }

    func close() throws { try engine.close() }

    static func openAndReadOne(directory: String, key: [UInt8]) throws -> Bool {
        var options = EngineOptions()
        options.readOnly = true
        let engine = try Engine.open(at: directory + "/bench.docstore", options: options)
        return try engine.read { try $0.get(key, in: "kv") } != nil
    }
}
