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

    /// `wal-record`: the WAL decoder alone (`WALReader.read(bytes:)`, as recovery and `docstore
    /// inspect --wal` use it). The input is a mode byte, then a log. Checksums cannot be guessed,
    /// so the mode asks for fix-ups that let the fuzzer's bytes reach the decoders behind them
    /// (Format/wal.md): bit 0 writes the header's magic, version and checksum; bit 1 gives every
    /// record the header's generation and the next LSN; bit 2 fixes every record's checksum. The
    /// report must then describe the bytes consistently.
    public static func walRecord(_ data: [UInt8]) -> String? {
        guard let mode = data.first else { return nil }
        var wal = Array(data.dropFirst())
        let headerSize = WALFormat.headerSize, recordHeaderSize = WALFormat.recordHeaderSize
        if wal.count >= headerSize {
            wal.withUnsafeMutableBytes { raw in
                // The header as the writer encodes it, with the fuzzed generation and start LSN.
                if mode & 1 != 0 {
                    let header = WALFormat.Header(generation: raw.u64(16), startLSN: LSN(raw.u64(24))).encode()
                    header.withUnsafeBytes { raw.copyMemory(from: $0) }
                }
                // Record header: crc u32 | storedLength u32 | lsn u64 | generation u64 | … (Format/wal.md).
                var offset = headerSize
                var lsn = raw.u64(24)
                while offset + recordHeaderSize <= raw.count {
                    let end = offset + recordHeaderSize + Int(raw.u32(offset + 4))
                    guard end <= raw.count else { break }
                    if mode & 2 != 0 {
                        raw.setU64(offset + 8, lsn)
                        raw.setU64(offset + 16, raw.u64(16))
                        lsn &+= 1
                    }
                    if mode & 4 != 0 {
                        raw.setU32(offset, CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(offset + 4)..<end])))
                    }
                    offset = end
                }
            }
        }
        let report: WALReadReport
        do throws(EngineError) {
            report = try WALReader.read(bytes: wal, expectedGeneration: nil, expectedStart: nil, file: "fuzz-wal")
        } catch {
            return error.code == .versionTooNew || error.code == .versionTooOld ? nil : "a WAL threw \(error.code), not a report: \(error)"
        }
        // The report describes the bytes: records lie end to end from the header, in LSN order,
        // and the valid end and the preallocated tail fit in the file.
        var expectedOffset = UInt64(headerSize)
        for (i, record) in report.records.enumerated() {
            if record.offset != expectedOffset { return "record \(i) at offset \(record.offset), expected \(expectedOffset)" }
            if let start = report.startLSN, record.lsn.rawValue != start.rawValue &+ UInt64(i) { return "record \(i) has \(record.lsn)" }
            expectedOffset += UInt64(record.size)
        }
        if !report.records.isEmpty, report.validEnd != expectedOffset { return "valid end \(report.validEnd), records end at \(expectedOffset)" }
        if report.validEnd + report.preallocatedBytes > report.fileSize { return "valid end \(report.validEnd) + \(report.preallocatedBytes) preallocated > \(report.fileSize)" }
        return nil
    }

    /// `page-decode`: the page decoders alone (`PageSummary(decoding:)`, as `docstore inspect`
    /// and the integrity walk read pages). The input is a mode byte, then one 4096-byte page
    /// (padded with zeros). Bit 0 fixes the checksum and bit 1 the page's own number, so the cell
    /// decoders behind them are reached (Format/page-file.md § Page header); bit 2 decodes it as
    /// meta page 0 instead of page 2.
    public static func pageDecode(_ data: [UInt8]) -> String? {
        guard let mode = data.first else { return nil }
        var page = Array(data.dropFirst().prefix(4096))
        page += [UInt8](repeating: 0, count: 4096 - page.count)
        let number: UInt64 = mode & 4 != 0 ? 0 : 2
        page.withUnsafeMutableBytes { raw in
            // Page header: crc u32 | type | flags | count | page number u64 | … (Format/page-file.md).
            if mode & 2 != 0, number != 0 { raw.setU64(8, number) }
            if mode & 1 != 0 {
                let end = number == 0 ? MetaPage.size : raw.count   // a meta page's checksum covers its record
                raw.setU32(0, CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[4..<end])))
            }
        }
        let summary = PageSummary(decoding: page, number: PageNumber(number), file: "fuzz-page")
        // A node page that passed validation yields one key per cell (key order is the
        // integrity walk's check, across pages, not the page decoder's).
        if summary.problem == nil, summary.type == .leaf || summary.type == .branch, summary.keys.count != summary.count {
            return "a valid \(summary.type.map(String.init(describing:)) ?? "?") page of \(summary.count) cells gave \(summary.keys.count) keys"
        }
        if summary.isMeta, summary.problem == nil, summary.meta == nil { return "a valid meta page decoded to nothing" }
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
                            if try !sameBytes(txn.get(k, in: "t"), pending[k]) { throw FuzzFinding("read-your-write of \(k) differs") }
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
                    if state.count != committed.count || state.contains(where: { !sameBytes(committed[$0.key], $0.value) }) {
                        return "store holds \(state.count) entries, model \(committed.count), or values differ"
                    }
                }
            }
            let report = try engine.verify()
            if !report.isClean { return "integrity: \(report.problems.prefix(3))" }
            let final = try engine.read { try $0.entries(in: "t") }
            if final.count != committed.count || final.contains(where: { !sameBytes(committed[$0.key], $0.value) }) {
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

/// Whether two values are the same bytes, compared with one `memcmp`: `==` on `[UInt8]` is a
/// loop of one-byte compares, each traced by the fuzzer's coverage instrumentation, and was a
/// third of the operations target's time on its 5000-byte values.
func sameBytes(_ a: [UInt8]?, _ b: [UInt8]?) -> Bool {
    guard let a, let b else { return a == nil && b == nil }
    guard a.count == b.count else { return false }
    return a.withUnsafeBytes { x in b.withUnsafeBytes { y in
        guard let p = x.baseAddress, let q = y.baseAddress else { return true }   // both empty
        return memcmp(p, q, x.count) == 0
    } }
}

extension FuzzTargets {
    /// `key-encoding`: the input is decoded as a key (must throw or succeed, never trap); when it
    /// decodes, re-encoding must give exactly the same bytes back (the encoding is canonical, so
    /// equal values can never hide behind different keys). The same bytes then make two tuples
    /// (`KeyTupleReader`): decode(encode(x)) must be x, and the byte order of the two encodings
    /// must be the value order (`KeyOrderReference`).
    public static func keyEncoding(_ data: [UInt8]) -> String? {
        if let components = try? KeyEncoding.decode(data) {
            let again = KeyEncoding.encode(components)
            if again != data { return "decode/encode does not round-trip: \(data) -> \(components) -> \(again)" }
        }
        var reader = KeyTupleReader(data)
        let a = reader.tuple(), b = reader.tuple()
        let ea = KeyEncoding.encode(a), eb = KeyEncoding.encode(b)
        for (tuple, encoded) in [(a, ea), (b, eb)] {
            guard let decoded = try? KeyEncoding.decode(encoded) else { return "\(tuple) encodes to \(encoded), which does not decode" }
            if !KeyOrderReference.same(decoded, tuple) { return "\(tuple) decodes back as \(decoded)" }
        }
        let bytes = ea == eb ? 0 : (ea.lexicographicallyPrecedes(eb) ? -1 : 1)
        let values = KeyOrderReference.compare(a, b).signum()
        if bytes != values { return "\(a) vs \(b): the encodings order \(bytes), the values \(values)" }
        return nil
    }
}

/// Reads tuples of key components from fuzz bytes: a count, then per component a kind byte and
/// its payload (any 8 bytes as an integer, a double's or a date's bit pattern; a length and
/// bytes for strings, which are decoded as UTF-8 with repairs, and byte strings; 16 bytes for a
/// UUID). Missing bytes read as zero.
struct KeyTupleReader {
    let data: [UInt8]
    var i = 0
    init(_ data: [UInt8]) { self.data = data }

    mutating func byte() -> UInt8 {
        defer { i += 1 }
        return i < data.count ? data[i] : 0
    }

    mutating func u64() -> UInt64 { (0..<8).reduce(0) { v, _ in v << 8 | UInt64(byte()) } }

    mutating func run() -> [UInt8] { (0..<Int(byte() % 12)).map { _ in byte() } }

    mutating func tuple() -> [KeyComponent] { (0..<Int(byte() % 5)).map { _ in component() } }

    mutating func component() -> KeyComponent {
        switch byte() % 9 {
        case 0: .null
        case 1: .bool(byte() & 1 == 1)
        case 2: .int(Int64(bitPattern: u64()))
        case 3: .uint(u64())
        case 4: .double(Double(bitPattern: u64()))
        case 5: .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: u64())))
        case 6: .string(String(decoding: run(), as: UTF8.self))
        case 7: .bytes(run())
        default: .uuid(UUID(uuid: (byte(), byte(), byte(), byte(), byte(), byte(), byte(), byte(),
                                   byte(), byte(), byte(), byte(), byte(), byte(), byte(), byte())))
        }
    }
}

struct FuzzFinding: Error, CustomStringConvertible {
    let description: String
    init(_ d: String) { description = d }
}
