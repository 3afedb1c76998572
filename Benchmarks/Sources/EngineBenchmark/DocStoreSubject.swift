// DocStoreEngine under test: one tree "kv" in `bench.docstore` (+ `-wal`), with the engine's
// default options (4 KiB pages, 256 MiB page cache, checkpoint every 16 MiB of WAL) except
// durability:
//   .bulk    → `.normal`: commits are synced at checkpoints only; `settle()` is `checkpoint()`,
//              which syncs the pages and a new meta page. (A transaction larger than the
//              checkpoint threshold — the bulk load, the deletes — commits by checkpoint anyway.)
//   .durable → `.full` (the default): each commit returns once its WAL record is synced;
//              concurrent committers share syncs (group commit).

import DocStoreEngine
import BenchmarkSupport
import Foundation

final class DocStoreSubject: Subject {
    static let name = "DocStore"
    static let tree = "kv"
    static func pageFile(in directory: String) -> String { directory + "/bench.docstore" }

    let engine: Engine

    init(directory: String, mode: Mode, create: Bool) throws {
        var options = EngineOptions()
        options.durability = mode == .bulk ? .normal : .full
        options.createIfMissing = create
        engine = try Engine.open(at: Self.pageFile(in: directory), options: options)
        if create { try engine.write { try $0.createTreeIfMissing(Self.tree) } }
    }

    func bulkLoad(_ w: Workload) throws {
        try engine.write { txn in
            for i in w.keys.indices { try txn.put(w.values[i], for: w.keys[i], in: Self.tree) }
        }
    }

    func settle() throws { try engine.checkpoint() }

    func pointReads(_ w: Workload) throws -> Int {
        try engine.read { txn in
            var bytes = 0
            for i in w.readOrder {
                guard let v = try txn.get(w.keys[i], in: Self.tree) else { throw BenchError("DocStore: a loaded key is missing") }
                bytes += v.count
            }
            return bytes
        }
    }

    func scan() throws -> (rows: Int, bytes: Int) {
        try engine.read { txn in
            var cursor = try txn.cursor(in: Self.tree)
            var rows = 0, bytes = 0
            var entry = try cursor.first()
            while let (k, v) = entry {
                rows += 1
                bytes += k.count + v.count
                entry = try cursor.next()
            }
            return (rows, bytes)
        }
    }

    func deletes(_ w: Workload) throws -> Int {
        try engine.write { txn in
            var removed = 0
            for i in w.deleteOrder where try txn.delete(w.keys[i], in: Self.tree) { removed += 1 }
            return removed
        }
    }

    func commitOne(key: [UInt8], value: [UInt8]) throws {
        try engine.write { try $0.put(value, for: key, in: Self.tree) }
    }

    func concurrentCommits(_ keys: [[[UInt8]]], value: [UInt8]) throws -> Double {
        let engine = self.engine  // Engine is Sendable: one shared instance, as an app would share it
        return try onThreads(keys.count) { t in
            for k in keys[t] { try engine.write { try $0.put(value, for: k, in: Self.tree) } }
        }
    }

    /// The page file plus the WAL (and blob files, of which this workload makes none).
    func fileBytes() -> UInt64 {
        let p = engine.paths
        var total = fileSize(p.pageFile) + fileSize(p.wal)
        if let blobs = try? FileManager.default.contentsOfDirectory(atPath: p.blobDirectory) {
            for b in blobs { total += fileSize(p.blobDirectory + "/" + b) }
        }
        return total
    }

    func readOne(_ key: [UInt8]) throws -> Int? {
        try engine.read { try $0.get(key, in: Self.tree)?.count }
    }

    func close() throws { try engine.close() }
}
