// ObjectFuzzTargets: fuzz logic for the object layer's readers of untrusted bytes — a stored
// catalog, a dump, a damaged store file — kept here (like PredicateFuzzTarget) so that the unit
// suite replays each corpus without libFuzzer. Each takes arbitrary bytes and returns nil, or a
// finding: a typed error is a correct answer to bad input; a trap, a hang, or a broken promise
// below is not.
//
//   OF1 schema-decode: bytes as a catalog give a schema or a typed error; a schema that
//       validates opens an (in-memory) store.
//   OF2 dump-load: bytes as a dump give a store or a typed error, never a partial file; a store
//       they give passes the full check, and dumps to text that loads again to as many objects.
//   OF3 recover: bytes as a page file and a WAL (a 4-byte little-endian length splits them)
//       give a rebuilt store or a typed error; a store it gives passes the full check.
//
// OF2 and OF3 go through real files (the APIs take URLs and file handles), in a new directory
// for each input.

import DocStoreCore
import DocStoreEngine
import DocStoreTestSupport
import Foundation

extension FuzzTargets {
    /// OF1.
    public static func schemaDecode(_ data: [UInt8]) -> String? {
        guard data.count <= 64 << 10, let schema = try? Store.schema(fromCatalog: data) else { return nil }
        guard (try? schema.validate()) != nil else { return nil }
        do { _ = try Store.inMemory(schema: schema) } catch {
            return "a catalog whose schema validates does not open: \(error)"
        }
        return nil
    }

    /// A new directory for one input of OF2 or OF3 (inputs may run side by side in one process:
    /// the unit suite runs targets in parallel), removed by the caller.
    static func scratch() -> URL {
        let dir = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("docstore-fuzz-\(getpid())-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// The problems of the store at `url` (the engine's check, and the object graph's when it has
    /// a catalog), or a description of why it does not open.
    static func problems(of url: URL) -> [String] {
        do {
            guard let schema = try Store.schema(at: url) else {
                var options = EngineOptions()
                options.readOnly = true
                let engine = try Engine.open(at: url.path, options: options)
                defer { try? engine.close() }
                return try engine.verify().problems.map { "\($0)" }
            }
            let store = try Store(url: url, schema: schema, readOnly: true)
            defer { try? store.close() }
            return try store.verify()
        } catch {
            return ["it does not open: \(error)"]
        }
    }

    /// OF2.
    public static func dumpLoad(_ data: [UInt8]) -> String? {
        guard data.count <= 256 << 10 else { return nil }
        let dir = scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let input = dir.appendingPathComponent("in.jsonl"), url = dir.appendingPathComponent("Loaded.docstore")
        guard (try? Data(data).write(to: input)) != nil, let handle = try? FileHandle(forReadingFrom: input) else { return nil }
        defer { try? handle.close() }
        let count: Int
        do { count = try Store.load(from: handle, to: url) } catch {
            let left = (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? []
            return left == ["in.jsonl"] ? nil : "a refused dump left files behind: \(left.sorted())"
        }
        let problems = problems(of: url)
        guard problems.isEmpty else { return "a loaded dump does not check: \(problems.prefix(3))" }
        // Dumped again, it loads again to as many objects.
        let again = dir.appendingPathComponent("again.jsonl"), copy = dir.appendingPathComponent("Copy.docstore")
        do {
            guard let schema = try Store.schema(at: url) else { return "a loaded dump has no catalog" }
            let store = try Store(url: url, schema: schema, readOnly: true)
            defer { try? store.close() }
            guard FileManager.default.createFile(atPath: again.path, contents: nil) else { return nil }
            let out = try FileHandle(forWritingTo: again)
            _ = try store.dump(to: out)
            try out.close()
            let reread = try FileHandle(forReadingFrom: again)
            defer { try? reread.close() }
            let reloaded = try Store.load(from: reread, to: copy)
            return reloaded == count ? nil : "a loaded dump of \(count) objects dumps and loads again to \(reloaded)"
        } catch {
            return "a loaded dump does not dump and load again: \(error)"
        }
    }

    /// OF3.
    public static func recover(_ data: [UInt8]) -> String? {
        guard data.count >= 4, data.count <= 1 << 20 else { return nil }
        let split = min(Int(data[0]) | Int(data[1]) << 8 | Int(data[2]) << 16 | Int(data[3]) << 24, data.count - 4)
        let dir = scratch()
        defer { try? FileManager.default.removeItem(at: dir) }
        let source = dir.appendingPathComponent("Damaged.docstore"), url = dir.appendingPathComponent("Rescued.docstore")
        guard (try? Data(data[4..<(4 + split)]).write(to: source)) != nil,
              (try? Data(data[(4 + split)...]).write(to: URL(fileURLWithPath: source.path + "-wal"))) != nil else { return nil }
        guard (try? Store.recover(from: source, to: url)) != nil else {
            return FileManager.default.fileExists(atPath: url.path) ? "a refused recovery left a store behind" : nil
        }
        let problems = problems(of: url)
        return problems.isEmpty ? nil : "a recovered store does not check: \(problems.prefix(3))"
    }
}
