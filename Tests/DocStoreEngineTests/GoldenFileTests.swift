// GoldenFileTests: pins the on-disk format (Format/) to the code. The golden files in
// Format/golden/ are decoded field by field with the engine's own decoders and checked against the
// values Format/page-file.md and Format/wal.md state; the golden store is opened (from copies in a
// MemoryFileSystem: the committed files are never modified) and its contents checked, the torn WAL
// must recover exactly its intact record, and the damaged page must be reported as corrupt.
//
// Regenerating: run
//     DOCSTORE_REGENERATE_GOLDEN=1 swift test --filter GoldenFileTests
// to rewrite Format/golden/* (the binary files and their annotated dumps) and the hex examples in
// Format/*.md (the blocks after `<!-- golden-example: name -->`) from what the engine writes today.
// Generation is deterministic: running it twice changes nothing. A format change updates spec,
// golden files and this test in one commit (Format/FORMAT.md § Golden files). Without the variable,
// `goldenFilesAreWhatTheEngineWrites` and `specExamplesAreWhatTheEngineWrites` fail when the engine
// no longer writes the committed bytes. How each file and example is built: Golden.swift; the
// annotated dumps: Golden+Annotations.swift. The files are found through #filePath, so the
// switch rewrites the source tree the test was built from.

import Foundation
import Testing

@testable import DocStoreEngine

/// Where the committed files live, found from this source file's path.
private let repositoryRoot = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
private let formatDirectory = repositoryRoot.appendingPathComponent("Format")
private let goldenDirectory = formatDirectory.appendingPathComponent("golden")
private let regenerating = ProcessInfo.processInfo.environment["DOCSTORE_REGENERATE_GOLDEN"] == "1"

/// Runs the regeneration once, before any test reads a committed file (tests run in parallel).
private let regeneration: String? = {
    guard regenerating else { return nil }
    do {
        let files = try Golden.makeFiles()
        for (name, bytes) in files.byName {
            try Data(bytes).write(to: goldenDirectory.appendingPathComponent(name))
        }
        for (name, text) in try Golden.annotatedDumps(files) {
            try Data(text.utf8).write(to: goldenDirectory.appendingPathComponent(name))
        }
        var documents: [String: String] = [:]
        for example in try Golden.specExamples(files) {
            let url = formatDirectory.appendingPathComponent(example.document)
            let text = try documents[example.document] ?? String(contentsOf: url, encoding: .utf8)
            documents[example.document] = try replaceExample(example.name, with: example.text, in: text)
        }
        for (name, text) in documents {
            try Data(text.utf8).write(to: formatDirectory.appendingPathComponent(name))
        }
        return nil
    } catch {
        return "regeneration failed: \(error)"
    }
}()

private struct ExampleMissing: Error, CustomStringConvertible {
    var name: String
    var description: String { "no `<!-- golden-example: \(name) -->` marker followed by a ```text block" }
}

/// The range of the text between a marker's "```text\n" and its closing "```".
private func exampleRange(_ name: String, in text: String) throws -> Range<String.Index> {
    guard let marker = text.range(of: "<!-- golden-example: \(name) -->"),
          let open = text.range(of: "```text\n", range: marker.upperBound..<text.endIndex),
          text[marker.upperBound..<open.lowerBound].allSatisfy(\.isWhitespace),
          let close = text.range(of: "```", range: open.upperBound..<text.endIndex) else {
        throw ExampleMissing(name: name)
    }
    return open.upperBound..<close.lowerBound
}

private func replaceExample(_ name: String, with body: String, in text: String) throws -> String {
    var t = text
    t.replaceSubrange(try exampleRange(name, in: text), with: body + "\n")
    return t
}

private func committed(_ name: String) throws -> [UInt8] {
    if let failure = regeneration { throw GoldenFailure(message: failure) }
    return Array(try Data(contentsOf: goldenDirectory.appendingPathComponent(name)))
}

private struct GoldenFailure: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}

/// Copies of the golden files in a fresh memory file system, under /g.
private func memoryStore(_ files: [String: String]) throws -> (MemoryFileSystem, String) {
    var contents: [String: [UInt8]] = [:]
    for (golden, asName) in files { contents["/g/" + asName] = try committed(golden) }
    return (MemoryFileSystem(files: contents), "/g/tiny.docstore")
}

private func decodeMeta(_ file: [UInt8], slot: Int) throws(EngineError) -> MetaPage {
    let page = Array(file[(slot * 4096)..<((slot + 1) * 4096)])
    return try withRawBytes(page) { (raw) throws(EngineError) in try MetaPage.decode(raw, slot: slot, file: "tiny.docstore") }
}

private func openOptions(_ fs: MemoryFileSystem) -> EngineOptions {
    EngineOptions(pageSize: 4096, durability: .full, fileSystem: fs)
}

@Suite struct GoldenFileTests {
    // MARK: - The committed files are what the engine writes

    @Test func goldenFilesAreWhatTheEngineWrites() throws {
        let files = try Golden.makeFiles()
        for (name, bytes) in files.byName {
            let onDisk = try committed(name)
            #expect(onDisk == bytes, "Format/golden/\(name) differs from what the engine writes: a format change? Update the spec, then regenerate with DOCSTORE_REGENERATE_GOLDEN=1")
        }
        for (name, text) in try Golden.annotatedDumps(files) {
            let onDisk = String(decoding: try committed(name), as: UTF8.self)
            #expect(onDisk == text, "Format/golden/\(name) is stale: regenerate with DOCSTORE_REGENERATE_GOLDEN=1")
        }
    }

    @Test func specExamplesAreWhatTheEngineWrites() throws {
        if let failure = regeneration { throw GoldenFailure(message: failure) }
        let files = try Golden.makeFiles()
        for example in try Golden.specExamples(files) {
            let text = try String(contentsOf: formatDirectory.appendingPathComponent(example.document), encoding: .utf8)
            let quoted = String(text[try exampleRange(example.name, in: text)])
            #expect(quoted == example.text + "\n", "Format/\(example.document) example '\(example.name)' is stale; the engine now writes:\n\(example.text)")
        }
    }

    // MARK: - Field by field (values as Format/page-file.md and Format/wal.md state them)

    @Test func tinyMetaPagesHoldTheSpecifiedFields() throws {
        let f = try committed("tiny.docstore")
        #expect(f.count == 4 * 4096)
        let slot0 = try decodeMeta(f, slot: 0)
        let slot1 = try decodeMeta(f, slot: 1)
        // Slot 0: the checkpoint at LSN 1 (generation 2).
        #expect(Golden.u32(f, 0) == 0xe124_96e0)
        #expect(Array(f[4..<12]) == Golden.utf8("DOCSTORE"))
        #expect(slot0.formatMajor == 2 && slot0.formatMinor == 0)
        #expect(slot0.pageSize == 4096)
        #expect(Golden.u32(f, 20) == 0)
        #expect(slot0.generation == Generation(2))
        #expect(slot0.checkpointLSN == LSN(1))
        #expect(slot0.walGeneration == 2)
        #expect(slot0.pageCount == 4)
        #expect(slot0.catalogRoot == PageNumber(3))
        #expect(slot0.freeListHead == .none)
        #expect(slot0.freeListCount == 0)
        #expect(slot0.storeID == Golden.storeID)
        #expect(Array(f[80..<96]) == [0xD0, 0xC5, 0x70, 0x4E, 0x60, 0x1D, 0x40, 0x00, 0x80, 0x00, 0, 0, 0, 0, 0, 0x01])
        #expect(f[96..<4096].allSatisfy { $0 == 0 })
        // Slot 1: the empty store written at creation (generation 1).
        #expect(Golden.u32(f, 4096) == 0x9e00_bf99)
        #expect(slot1.generation == Generation(1))
        #expect(slot1.checkpointLSN == LSN(0))
        #expect(slot1.walGeneration == 1)
        #expect(slot1.pageCount == 2)
        #expect(slot1.catalogRoot == .none)
        #expect(slot1.freeListHead == .none && slot1.freeListCount == 0)
        #expect(slot1.storeID == Golden.storeID && slot1.pageSize == 4096)
        #expect(Golden.u32(f, 4096 + 20) == 0)
        #expect(f[(4096 + 96)..<8192].allSatisfy { $0 == 0 })
        // I3: the reader picks the valid slot with the higher generation.
        let fs = MemoryFileSystem(files: ["/t": f])
        let chosen = try Recovery.chooseMeta(file: try fs.openFile("/t", create: false, readOnly: true))
        #expect(chosen == slot0)
    }

    @Test func tinyLeafPagesHoldTheSpecifiedFields() throws {
        let f = try committed("tiny.docstore")
        // Page 2: the leaf of "notes".
        let notes = Golden.page(f, 2)
        try notes.validate(file: "tiny", expecting: .leaf)
        try notes.validateLeafCells(file: "tiny")
        #expect(notes.bytes.u32(PageHeader.checksum) == 0xeb52_d0aa)
        #expect(notes.type == .leaf && notes.bytes.u8(PageHeader.flags) == 0)
        #expect(notes.count == 3)
        #expect(notes.bytes.u64(PageHeader.pageNumber) == 2)
        #expect(notes.lower == 38 && notes.upper == 4073)
        #expect(notes.link == .none)
        #expect((0..<3).map(notes.slot) == [4089, 4082, 4073])
        let expected: [(String, String)] = [("k1", "one"), ("k2", "two"), ("k3", "three")]
        for (i, (k, v)) in expected.enumerated() {
            #expect(notes.leafHead(notes.slot(i)).storage == 0 && notes.leafStorage(i) == .inline)
            #expect(notes.leafKeyLength(i) == 2)
            #expect(notes.leafValueLength(i) == v.utf8.count)
            #expect(Array(notes.leafKey(i)) == Golden.utf8(k))
            #expect(Array(notes.leafPayload(i)) == Golden.utf8(v))
        }
        // head 2 × 4 + 0 (inline), "k1", valueLength 3, "one".
        #expect(Array(f[(2 * 4096 + 4089)..<(3 * 4096)]) == [0x08] + Golden.utf8("k1") + [0x03] + Golden.utf8("one"))
        #expect(f[(2 * 4096 + 38)..<(2 * 4096 + 4073)].allSatisfy { $0 == 0 })

        // Page 3: the catalog leaf, one cell "notes" → TreeInfo(root 2, count 3).
        let catalog = Golden.page(f, 3)
        try catalog.validate(file: "tiny", expecting: .leaf)
        try catalog.validateLeafCells(file: "tiny")
        #expect(catalog.bytes.u32(PageHeader.checksum) == 0xb950_11e3)
        #expect(catalog.type == .leaf && catalog.count == 1)
        #expect(catalog.bytes.u64(PageHeader.pageNumber) == 3)
        #expect(catalog.lower == 34 && catalog.upper == 4073 && catalog.slot(0) == 4073)
        #expect(catalog.link == .none)
        #expect(catalog.leafStorage(0) == .inline && catalog.leafKeyLength(0) == 5 && catalog.leafValueLength(0) == 16)
        #expect(Array(catalog.leafKey(0)) == Golden.utf8("notes"))
        let info = try TreeInfo.decode(Array(catalog.leafPayload(0)), name: "notes", file: "tiny")
        #expect(info == TreeInfo(root: PageNumber(2), count: 3))
    }

    @Test func tinyWALHoldsTheSpecifiedFields() throws {
        let w = try committed("tiny.docstore-wal")
        #expect(w.count == 87)
        // File header.
        let header = try #require(w.withUnsafeBytes { WALFormat.Header.decode($0) })
        #expect(Golden.u32(w, 0) == 0x1277_031a)
        #expect(Array(w[4..<12]) == Golden.utf8("DSWALOG1"))
        #expect(Golden.u16(w, 12) == 2 && Golden.u16(w, 14) == 0)
        #expect(header == WALFormat.Header(generation: 2, startLSN: LSN(2)))
        // Record header at 32.
        #expect(Golden.u32(w, 32) == 0x9675_1fb4)
        #expect(Golden.u32(w, 36) == 23)         // storedLength
        #expect(Golden.u64(w, 40) == 2)          // lsn
        #expect(Golden.u64(w, 48) == 2)          // generation
        #expect(Golden.u32(w, 56) == 23)         // rawLength
        #expect(w[60] == 0 && w[61] == 0 && w[62] == 0 && w[63] == 0)  // flags, reserved
        // Payload: 1 tree "notes"; 2 ops: put(0, "k4", "four"), delete(0, "k2").
        #expect(Array(w[64...]) == [0x01, 0x05] + Golden.utf8("notes") + [0x02, 0x01, 0x00, 0x02] + Golden.utf8("k4")
            + [0x04] + Golden.utf8("four") + [0x02, 0x00, 0x02] + Golden.utf8("k2"))
        let ops = try withRawBytes(Array(w[64...])) { (raw) throws(EngineError) in try WALPayload.decode(raw, lsn: LSN(2)) }
        #expect(ops == Golden.walOnly)
        // The reader's view.
        let fs = MemoryFileSystem(files: ["/w": w])
        let report = try WALReader.read(file: try fs.openFile("/w", create: false, readOnly: true), expectedGeneration: 2, expectedStart: LSN(2))
        #expect(report.generation == 2 && report.startLSN == LSN(2))
        #expect(report.records == [WALRecordInfo(lsn: LSN(2), offset: 32, size: 55, rawLength: 23, compressed: false, operations: Golden.walOnly)])
        #expect(report.validEnd == 87 && report.tailBytes == 0 && report.stopReason == nil)
        // A log of another generation belongs to an older checkpoint: none of its records count.
        let stale = try WALReader.read(file: try fs.openFile("/w", create: false, readOnly: true), expectedGeneration: 3, expectedStart: LSN(2))
        #expect(stale.records.isEmpty)
        #expect(stale.stopReason?.contains("generation 2, the checkpoint expects 3") == true)
    }

    // MARK: - Opening the golden store

    @Test func tinyStoreOpensWithItsCheckpointAndItsWALTransaction() throws {
        let (fs, path) = try memoryStore(["tiny.docstore": "tiny.docstore", "tiny.docstore-wal": "tiny.docstore-wal"])
        let engine = try Engine.open(at: path, options: openOptions(fs))
        #expect(engine.storeID == Golden.storeID)
        #expect(engine.pageSize == 4096)
        #expect(engine.lastCommittedLSN == LSN(2))
        let stats = engine.statistics()
        #expect(stats.checkpointGeneration == Generation(2) && stats.checkpointLSN == LSN(1))
        #expect(stats.walBytes == 87)
        try engine.read { txn in
            #expect(try txn.treeNames() == ["notes"])
            #expect(try txn.count(in: "notes") == 3)
            let entries = try txn.entries(in: "notes").map { String(decoding: $0.key, as: UTF8.self) + "=" + String(decoding: $0.value, as: UTF8.self) }
            #expect(entries == ["k1=one", "k3=three", "k4=four"])
            #expect(try txn.get(Golden.utf8("k2"), in: "notes") == nil)
        }
        // Recovery wrote nothing: the log had no torn tail.
        #expect(fs.contents(of: path + "-wal") == (try committed("tiny.docstore-wal")))
        #expect(fs.contents(of: path) == (try committed("tiny.docstore")))
        #expect(try engine.verify().isClean)
        try engine.close()
    }

    @Test func tinyStoreWithoutItsWALHoldsOnlyTheCheckpoint() throws {
        let (fs, path) = try memoryStore(["tiny.docstore": "tiny.docstore"])
        let engine = try Engine.open(at: path, options: openOptions(fs))
        #expect(engine.lastCommittedLSN == LSN(1))
        let entries = try engine.read { try $0.entries(in: "notes").map { String(decoding: $0.key, as: UTF8.self) } }
        #expect(entries == ["k1", "k2", "k3"])
        // A fresh log of the checkpoint's generation was started.
        let wal = try #require(fs.contents(of: path + "-wal"))
        #expect(wal.withUnsafeBytes { WALFormat.Header.decode($0) } == WALFormat.Header(generation: 2, startLSN: LSN(2)))
        #expect(try engine.verify().isClean)
        try engine.close()
    }

    @Test func tornTailRecoversExactlyTheIntactRecordAndNamesRuleR2() throws {
        let torn = try committed("torn-tail.docstore-wal")
        let tiny = try committed("tiny.docstore-wal")
        #expect(torn.count == 87 + 32 + 9)
        #expect(Array(torn[..<87]) == tiny)
        // Record 2's header is whole and claims 18 payload bytes; 9 are present.
        #expect(Golden.u32(torn, 87 + 4) == 18 && Golden.u64(torn, 87 + 8) == 3 && Golden.u64(torn, 87 + 16) == 2)

        let fs = MemoryFileSystem(files: ["/w": torn])
        let report = try WALReader.read(file: try fs.openFile("/w", create: false, readOnly: true), expectedGeneration: 2, expectedStart: LSN(2))
        #expect(report.records.map(\.lsn) == [LSN(2)])
        #expect(report.records.first?.operations == Golden.walOnly)
        #expect(report.validEnd == 87 && report.fileSize == 128 && report.tailBytes == 41)
        #expect(report.stopReason == "R2: the record at offset 87 claims 18 bytes, 9 remain")

        // Recovery replays LSN 2 only and cuts the tail: the log becomes tiny.docstore-wal again.
        let (mfs, path) = try memoryStore(["tiny.docstore": "tiny.docstore", "torn-tail.docstore-wal": "tiny.docstore-wal"])
        let engine = try Engine.open(at: path, options: openOptions(mfs))
        #expect(engine.lastCommittedLSN == LSN(2))
        let keys = try engine.read { try $0.entries(in: "notes").map { String(decoding: $0.key, as: UTF8.self) } }
        #expect(keys == ["k1", "k3", "k4"])
        #expect(mfs.contents(of: path + "-wal") == tiny)
        #expect(try engine.verify().isClean)
        try engine.close()
    }

    @Test func flippedLeafByteIsCorruptNamingPage2() throws {
        let bad = try committed("bad-crc-page.docstore")
        let tiny = try committed("tiny.docstore")
        let differing = (0..<tiny.count).filter { bad[$0] != tiny[$0] }
        #expect(differing == [Golden.flippedOffset])
        #expect(bad[Golden.flippedOffset] ^ tiny[Golden.flippedOffset] == Golden.flipMask)

        // The page itself: rule P3 (checksum) fails, the error names page 2 and its file offset.
        do throws(EngineError) {
            try Golden.page(bad, 2).validate(file: "bad", expecting: .leaf)
            Issue.record("a page with a flipped byte passed validation")
        } catch {
            #expect(error.code == .corrupt && error.page == PageNumber(2) && error.offset == 8192)
            #expect(error.message.hasPrefix("page checksum mismatch (stored 0xeb52d0aa, computed 0x4e1342d4)"))
        }

        // With tiny.docstore-wal, replaying LSN 2 reads page 2: opening fails.
        let (fs1, path1) = try memoryStore(["bad-crc-page.docstore": "tiny.docstore", "tiny.docstore-wal": "tiny.docstore-wal"])
        do throws(EngineError) {
            _ = try Engine.open(at: path1, options: openOptions(fs1))
            Issue.record("opening a store whose WAL replay reads a corrupt page succeeded")
        } catch {
            #expect(error.code == .corrupt && error.page == PageNumber(2))
        }

        // Without a WAL the store opens (the meta pages and catalog are sound); reading fails.
        let (fs2, path2) = try memoryStore(["bad-crc-page.docstore": "tiny.docstore"])
        let engine = try Engine.open(at: path2, options: openOptions(fs2))
        do {
            _ = try engine.read { try $0.get(Golden.utf8("k1"), in: "notes") }
            Issue.record("reading a corrupt page succeeded")
        } catch let error as EngineError {
            #expect(error.code == .corrupt && error.page == PageNumber(2) && error.file == path2)
        }
        do throws(EngineError) {
            _ = try engine.pager.readFromFile(PageNumber(2))
            Issue.record("reading a corrupt page succeeded")
        } catch {
            #expect(error.code == .corrupt && error.page == PageNumber(2))
        }
        let report = try engine.verify()
        #expect(report.problems.contains { $0.tree == "notes" && $0.page == PageNumber(2) && $0.message.hasPrefix("page checksum mismatch") })
        try engine.close()
    }

    // MARK: - Version rules (Format/FORMAT.md § Version rules, page-file.md rule M3)

    /// Regression: a meta slot of a newer major version (valid checksum) beside a valid slot used
    /// to be skipped, so the reader opened the older checkpoint, discarded the newer WAL and would
    /// later overwrite the newer meta. Fix: Recovery.chooseMeta refuses whenever a slot fails M3.
    /// Format 1.0 slots (7-byte leaf-cell headers, written only by development builds) are refused
    /// the same way, with versionTooOld. Either way nothing is written.
    @Test(arguments: [(0, 3), (1, 3), (0, 1), (1, 1)])
    func otherMajorVersionInEitherSlotIsRefused(slot: Int, major: UInt8) throws {
        var f = try committed("tiny.docstore")
        let base = slot * 4096
        f[base + 12] = major
        let crc = CRC32C.checksum(Array(f[(base + 4)..<(base + 128)]))
        f.withUnsafeMutableBytes { $0.setU32(base, crc) }
        let fs = MemoryFileSystem(files: ["/g/tiny.docstore": f, "/g/tiny.docstore-wal": try committed("tiny.docstore-wal")])
        do throws(EngineError) {
            _ = try Engine.open(at: "/g/tiny.docstore", options: openOptions(fs))
            Issue.record("a store with a major-\(major) meta page opened")
        } catch {
            #expect(error.code == (major > 2 ? .versionTooNew : .versionTooOld))
            #expect(error.page == PageNumber(UInt64(slot)) && error.offset == 12)
            #expect(error.message.contains("\(major).0") && error.message.contains("2.x"))
        }
        #expect(fs.contents(of: "/g/tiny.docstore") == f)
        #expect(fs.contents(of: "/g/tiny.docstore-wal") == (try committed("tiny.docstore-wal")))
    }

    // MARK: - Conventions (Format/FORMAT.md)

    @Test func varintAndChecksumVectorsMatchTheSpec() throws {
        let vectors: [(UInt64, [UInt8])] = [
            (0, [0x00]), (1, [0x01]), (127, [0x7F]), (128, [0x80, 0x01]), (300, [0xAC, 0x02]),
            (16_383, [0xFF, 0x7F]), (16_384, [0x80, 0x80, 0x01]), (1 << 32, [0x80, 0x80, 0x80, 0x80, 0x10]),
            (UInt64.max, [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01]),
        ]
        for (value, encoded) in vectors {
            var b: [UInt8] = []
            b.appendVarint(value)
            #expect(b == encoded, "varint \(value)")
            let decoded = try withRawBytes(encoded) { (raw) throws(EngineError) -> UInt64 in
                var r = ByteReader(raw, what: "vector")
                let v = try r.readVarint()
                guard r.isAtEnd else { throw .corrupt("trailing bytes") }
                return v
            }
            #expect(decoded == value)
        }
        // An 11th byte, or a 10th byte above 1, is not a varint.
        for invalid: [UInt8] in [[0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02], [UInt8](repeating: 0x80, count: 10) + [0x00]] {
            #expect(throws: EngineError.self) {
                try withRawBytes(invalid) { (raw) throws(EngineError) in var r = ByteReader(raw, what: "vector"); _ = try r.readVarint() }
            }
        }
        #expect(CRC32C.checksum(Golden.utf8("123456789")) == 0xE306_9283)
        #expect(CRC32C.checksum([UInt8](repeating: 0, count: 32)) == 0x8A91_36AA)
    }
}
