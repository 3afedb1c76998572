// FuzzTargets: the logic of every libFuzzer target in Fuzz/, kept here so that the unit suite
// replays each corpus and fail case through the same functions without libFuzzer
// (FuzzCorpusReplayTests, like SQLite's fuzzcheck). Each function takes arbitrary bytes and must
// return normally: a typed error from the engine is a correct answer to bad input; a crash, a
// hang, or (for the differential target) a difference from the model is a finding, reported by
// returning a non-nil description that the fuzz main turns into a trap.

import DocStoreEngine
import Foundation

/// Entry points of the fuzz targets.
public enum FuzzTargets {
    static let path = "/db/Fuzz.docstore"

    /// Opens a MemoryFileSystem store from raw files, reads everything, verifies; ignores typed errors.
    static func openReadAll(_ files: [String: [UInt8]], readOnly: Bool) {
        var options = EngineOptions()
        options.fileSystem = MemoryFileSystem(files: files)
        options.readOnly = readOnly
        options.cacheBytes = 64 * 4096
        options.walPreallocationBytes = 4096
        guard let engine = try? Engine.open(at: path, options: options) else { return }
        _ = try? engine.verify()
        _ = try? engine.read { txn in
            for name in try txn.treeNames() { _ = try txn.entries(in: name) }
        }
        _ = try? engine.walReport()
        for p in 0..<min(engine.statistics().pageCount, 64) { _ = try? engine.inspectPage(PageNumber(p)) }
        if !readOnly { try? engine.write { txn in try txn.createTreeIfMissing("fuzz") } }
    }

    /// `open-store`: the input is a page file and a WAL (a 4-byte little-endian length splits
    /// them). Open (read-only, then read-write on a copy), read everything, verify.
    public static func openStore(_ data: [UInt8]) -> String? {
        guard data.count >= 4 else { return nil }
        let split = min(Int(data[0]) | Int(data[1]) << 8 | Int(data[2]) << 16 | Int(data[3]) << 24, data.count - 4)
        let pageFile = Array(data[4..<(4 + split)])
        let wal = Array(data[(4 + split)...])
        let files = [path: pageFile, path + "-wal": wal]
        openReadAll(files, readOnly: true)
        openReadAll(files, readOnly: false)
        return nil
    }

    /// A valid empty store's page file, to pair with fuzzed WALs and pages.
    static let emptyStore: [String: [UInt8]] = {
        let fs = MemoryFileSystem()
        try? fs.createDirectory("/db")
        var options = EngineOptions()
        options.fileSystem = fs
        options.durability = .off
        options.walPreallocationBytes = 0
        if let engine = try? Engine.open(at: path, options: options) {
            try? engine.write { txn in
                try txn.createTree(named: "t")
                for i in 0..<40 { try txn.put(Array(repeating: UInt8(i), count: 90), for: Array("key\(i)".utf8), in: "t") }
            }
            try? engine.close()
        }
        return fs.snapshot()
    }()

    /// `wal-record`: the input is the WAL of a valid store (its header's generation and start LSN
    /// are rewritten to match, so records are really decoded).
    public static func walRecord(_ data: [UInt8]) -> String? {
        var files = emptyStore
        var wal = data
        if let meta = files[path], meta.count >= 8192, wal.count >= 32 {
            // Generation and start LSN as the newest meta expects (slot with the higher generation).
            let g0 = meta[24..<32].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            let g1 = meta[(4096 + 24)..<(4096 + 32)].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }
            let base = g1 > g0 ? 4096 : 0
            wal.replaceSubrange(16..<24, with: meta[(base + 40)..<(base + 48)])
            let lsn = meta[(base + 32)..<(base + 40)].withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } &+ 1
            withUnsafeBytes(of: lsn.littleEndian) { wal.replaceSubrange(24..<32, with: $0) }
            var header = Array(wal[0..<32])
            let crc = CRC32C.checksum(Array(header[4...]))
            withUnsafeBytes(of: crc.littleEndian) { header.replaceSubrange(0..<4, with: $0) }
            wal.replaceSubrange(0..<32, with: header)
        }
        files[path + "-wal"] = wal
        openReadAll(files, readOnly: true)
        return nil
    }

    /// `page-decode`: the input replaces page 2 of a valid store (its checksum fixed up when the
    /// input asks, so the decoders behind the checksum are reached too).
    public static func pageDecode(_ data: [UInt8]) -> String? {
        guard !data.isEmpty else { return nil }
        var files = emptyStore
        guard var pageFile = files[path], pageFile.count >= 3 * 4096 else { return nil }
        var page = Array(data.dropFirst().prefix(4096))
        page += [UInt8](repeating: 0, count: 4096 - page.count)
        if data[0] & 1 == 1 {
            let crc = CRC32C.checksum(Array(page[4...]))
            withUnsafeBytes(of: crc.littleEndian) { page.replaceSubrange(0..<4, with: $0) }
        }
        pageFile.replaceSubrange(8192..<12288, with: page)
        files[path] = pageFile
        openReadAll(files, readOnly: true)
        return nil
    }

    /// `operations` (differential): the input drives engine operations against an ordered-map
    /// model. Any difference is returned as a finding.
    public static func operations(_ data: [UInt8]) -> String? {
        let fs = MemoryFileSystem()
        try? fs.createDirectory("/db")
        var options = EngineOptions()
        options.fileSystem = fs
        options.durability = .off
        options.checkpointWALBytes = 32 << 10
        options.walPreallocationBytes = 4096
        options.blobThreshold = 3000
        guard var engine = try? Engine.open(at: path, options: options) else { return "cannot create a store" }
        var committed: [[UInt8]: [UInt8]] = [:]
        var i = 0
        func byte() -> UInt8 {
            defer { i += 1 }
            return i < data.count ? data[i] : 0
        }
        func key() -> [UInt8] { let n = Int(byte() % 6); return (0..<n).map { _ in byte() % 8 } }
        do {
            try engine.write { try $0.createTree(named: "t") }
            while i < data.count {
                let op = byte() % 8
                switch op {
                case 0, 1, 2, 3:
                    // A transaction of up to 8 puts and deletes, committed or rolled back.
                    var pending = committed
                    let count = Int(byte() % 8) + 1
                    let abort = byte() % 5 == 0
                    try engine.write { txn in
                        for _ in 0..<count {
                            let k = key()
                            if byte() % 3 == 0 {
                                let existed = try txn.delete(k, in: "t")
                                if existed != (pending[k] != nil) { throw FuzzFinding("delete of \(k) said \(existed)") }
                                pending[k] = nil
                            } else {
                                let sizes = [0, 5, 40, 900, 5000]
                                let v = [UInt8](repeating: byte(), count: sizes[Int(byte() % 5)])
                                try txn.put(v, for: k, in: "t")
                                pending[k] = v
                            }
                            if try txn.get(k, in: "t") != pending[k] { throw FuzzFinding("read-your-write of \(k) differs") }
                        }
                        if abort { txn.rollback() }
                    }
                    if !abort { committed = pending }
                case 4:
                    try engine.checkpoint()
                case 5:
                    try engine.close()
                    engine = try Engine.open(at: path, options: options)
                case 6:
                    // Range scan from a key, compared with the model.
                    let from = key()
                    let got = try engine.read { try $0.entries(in: "t", from: from).map(\.key) }
                    let want = committed.keys.filter { !$0.lexicographicallyPrecedes(from) }.sorted { $0.lexicographicallyPrecedes($1) }
                    if got != want { return "scan from \(from) gave \(got.count) keys, model \(want.count)" }
                default:
                    let state = try engine.read { try $0.entries(in: "t") }
                    if state.count != committed.count || state.contains(where: { committed[$0.key] != $0.value }) {
                        return "store holds \(state.count) entries, model \(committed.count), or values differ"
                    }
                }
            }
            let report = try engine.verify()
            if !report.isClean { return "integrity: \(report.problems.prefix(3))" }
            let final = try engine.read { try $0.entries(in: "t") }
            if final.count != committed.count || final.contains(where: { committed[$0.key] != $0.value }) {
                return "final state differs from the model"
            }
        } catch let finding as FuzzFinding {
            return finding.description
        } catch {
            return "unexpected error on valid operations: \(error)"
        }
        return nil
    }
}

extension FuzzTargets {
    /// `key-encoding`: the input is decoded as a key (must throw or succeed, never trap); when it
    /// decodes, re-encoding must give exactly the same bytes back (the encoding is canonical, so
    /// equal values can never hide behind different keys).
    public static func keyEncoding(_ data: [UInt8]) -> String? {
        guard let components = try? KeyEncoding.decode(data) else { return nil }
        let again = KeyEncoding.encode(components)
        if again != data { return "decode/encode does not round-trip: \(data) -> \(components) -> \(again)" }
        return nil
    }
}

struct FuzzFinding: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
