// Corrupt input (I10): flipping bytes of the page file or the WAL is detected — as a typed error
// that names the page or record, or by recovery dropping the damaged WAL record and everything
// after it — and is never returned as data, never a crash, never a hang.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

@Suite struct CorruptionTests {
    static let path = "/db/Corrupt.docstore"

    /// A small store: a checkpointed part (inline, overflow and compressed values over several
    /// pages) and three transactions that live only in the WAL. Returns the files and the
    /// expected contents after 0...4 transactions.
    static func makeStore() throws -> (files: [String: [UInt8]], models: [EngineModel], walRecords: [WALRecordInfo]) {
        let fs = MemoryFileSystem()
        try fs.createDirectory("/db")
        var options = EngineOptions()
        options.fileSystem = fs
        options.walPreallocationBytes = 0  // every WAL byte is flipped below: keep it short
        let engine = try Engine.open(at: path, options: options)
        var rng = SplitMix64(seed: 11)
        var models = [try EngineModel.read(engine)]
        try engine.write { txn in
            try txn.createTree(named: "t")
            for i in 0..<400 {
                let size = i % 25 == 0 ? 6000 : 60
                try txn.put(rng.bytes(size), for: Array("key\(i)".utf8), in: "t")
            }
            try txn.put([UInt8](repeating: 9, count: 9000), for: Array("zeros".utf8), in: "t")
        }
        models.append(try EngineModel.read(engine))
        try engine.checkpoint()
        for t in 0..<3 {
            try engine.write { txn in
                try txn.put(rng.bytes(80), for: Array("wal\(t)".utf8), in: "t")
                try txn.delete(Array("key\(t)".utf8), in: "t")
            }
            models.append(try EngineModel.read(engine))
        }
        let files = fs.snapshot()
        let wal = try WALReader.read(
            file: try MemoryFileSystem(files: files).openFile(path + "-wal", create: false, readOnly: true),
            expectedGeneration: nil, expectedStart: nil)
        // Drop the engine without closing: closing would checkpoint and empty the WAL.
        return (files, models, wal.records)
    }

    /// Opens damaged files, reads everything and verifies. Returns the state if every read
    /// succeeded, nil if some step threw (each throw is typed by the API: EngineError).
    static func openAndReadAll(_ files: [String: [UInt8]]) -> (state: EngineModel?, errors: [EngineError]) {
        var options = EngineOptions()
        options.fileSystem = MemoryFileSystem(files: files)
        options.readOnly = true
        var errors: [EngineError] = []
        do {
            let engine = try Engine.open(at: path, options: options)
            let state = try EngineModel.read(engine)
            let report = try engine.verify()
            if !report.isClean { errors.append(EngineError(.corrupt, report.problems.map(\.description).joined(separator: "; "))) }
            return (errors.isEmpty ? state : nil, errors)
        } catch let e as EngineError {
            errors.append(e)
        } catch {
            Issue.record("an untyped error escaped: \(error)")
        }
        return (nil, errors)
    }

    @Test func flippedPageFileBytesAreDetectedNeverReturnedAsData() throws {
        let (files, models, _) = try Self.makeStore()
        let pageFile = try #require(files[Self.path])
        let pageSize = 4096
        let pages = pageFile.count / pageSize
        var offsets: [Int] = []
        // Every byte of both meta records and of every page header, plus 20 000 random bytes
        // (issue #8).
        for slot in 0..<2 { offsets += (slot * pageSize)..<(slot * pageSize + MetaPage.size) }
        for p in 2..<pages { offsets += (p * pageSize)..<(p * pageSize + PageHeader.size) }
        var rng = SplitMix64(seed: 404)
        for _ in 0..<20_000 { offsets.append(Int(rng.next() % UInt64(pageFile.count))) }
        var detected = 0, harmless = 0
        for offset in offsets {
            var damaged = files
            damaged[Self.path]?[offset] ^= UInt8(1 << (offset % 8))
            let (state, errors) = Self.openAndReadAll(damaged)
            if let state {
                // Damage that changes nothing readable (an older meta slot, unused bytes past the
                // meta record, a free page) must leave the data exactly as committed.
                #expect(state == models[4], "flip at offset \(offset) (page \(offset / pageSize)) returned wrong data")
                harmless += 1
            } else {
                detected += 1
                let named = errors.contains { $0.page != nil || $0.code == .notADocStore || $0.message.contains("page") }
                #expect(named, "flip at offset \(offset): error does not name a page: \(errors)")
            }
        }
        print("page-file flips: \(offsets.count) tried, \(detected) detected as typed errors, \(harmless) harmless (data intact), 0 crashes")
        #expect(detected > offsets.count / 2)
    }

    @Test func flippedWALBytesDropTheDamagedRecordAndWhatFollows() throws {
        let (files, models, records) = try Self.makeStore()
        let wal = try #require(files[Self.path + "-wal"])
        #expect(records.count == 3)
        var checked = 0
        for offset in 0..<wal.count {
            var damaged = files
            damaged[Self.path + "-wal"]?[offset] ^= 0x20
            let (state, errors) = Self.openAndReadAll(damaged)
            guard let state else {
                Issue.record("a damaged WAL made the store unreadable at offset \(offset): \(errors)")
                continue
            }
            // Records wholly before the damaged byte survive; the damaged one and later ones go.
            let intact = records.filter { $0.offset + UInt64($0.size) <= UInt64(offset) }.count
            let expected = offset < WALFormat.headerSize ? 1 : 1 + intact
            #expect(state == models[expected], "WAL flip at offset \(offset): expected the state after \(expected) transactions")
            checked += 1
        }
        print("WAL flips: \(checked) of \(wal.count) bytes checked")
    }

    /// The torn-WAL sweep: from every byte offset of the last three records to the end, the
    /// WAL is cut there, zero-filled or filled with garbage (a crash while appending, or an
    /// appended region that never got its data — the case the OSDI'14 study found most stores
    /// overlook). Opening — read-only, and read-write with its recovery writes, then again —
    /// gives exactly the state after the last record wholly before the offset.
    @Test func aTornWALTailRecoversExactlyTheLastIntactCommit() throws {
        let (files, models, records) = try Self.makeStore()
        let wal = try #require(files[Self.path + "-wal"])
        try #require(records.count == 3)
        var rng = SplitMix64(seed: 23)
        var opened = 0
        for offset in Int(records[0].offset)..<wal.count {
            let intact = records.filter { Int($0.offset) + $0.size <= offset }.count
            let expected = models[1 + intact]
            for mode in ["cut", "zeros", "garbage"] {
                let tail: [UInt8] = switch mode {
                case "cut": []
                case "zeros": [UInt8](repeating: 0, count: wal.count - offset)
                default: rng.bytes(wal.count - offset)
                }
                var damaged = files
                damaged[Self.path + "-wal"] = Array(wal[..<offset]) + tail
                let (state, errors) = Self.openAndReadAll(damaged)
                #expect(errors.isEmpty && state == expected, "seed 23, \(mode) from WAL offset \(offset): expected the state after \(1 + intact) transactions; \(errors)")
                // Read-write: recovery cuts the tail; the next open sees the same state.
                let fs = MemoryFileSystem(files: damaged)
                var options = EngineOptions()
                options.fileSystem = fs
                options.walPreallocationBytes = 0
                let engine = try Engine.open(at: Self.path, options: options)
                #expect(try EngineModel.read(engine) == expected, "seed 23, \(mode) from WAL offset \(offset), read-write")
                try engine.close()
                let (again, _) = Self.openAndReadAll(fs.snapshot())
                #expect(again == expected, "seed 23, \(mode) from WAL offset \(offset), reopened")
                opened += 3
            }
        }
        print("torn-WAL sweep: \(wal.count - Int(records[0].offset)) offsets × 3 tails, \(opened) opens")
    }

    @Test func damagedPageErrorNamesThePageAndOffset() throws {
        let (files, _, _) = try Self.makeStore()
        let pageFile = try #require(files[Self.path])
        // Damage the body of a leaf page that opening the store does not need to read.
        var engine: Engine?
        var victim = 0
        for p in 2..<(pageFile.count / 4096) where pageFile[p * 4096 + PageHeader.type] == PageType.leaf.rawValue {
            var damaged = files
            damaged[Self.path]?[p * 4096 + 1000] ^= 0xFF
            var options = EngineOptions()
            options.fileSystem = MemoryFileSystem(files: damaged)
            options.readOnly = true
            if let opened = try? Engine.open(at: Self.path, options: options) {
                engine = opened
                victim = p
                break
            }
        }
        let store = try #require(engine)
        let report = try store.verify()
        let problem = try #require(report.problems.first { $0.page == PageNumber(UInt64(victim)) })
        #expect(problem.message.contains("checksum mismatch"))
        do {
            _ = try store.pager.readFromFile(PageNumber(UInt64(victim)))
            Issue.record("a damaged page was read")
        } catch {
            #expect(error.code == .corrupt)
            #expect(error.page == PageNumber(UInt64(victim)))
            #expect(error.offset == UInt64(victim) * 4096)
            #expect(error.file == Self.path)
        }
        // Reading the entries through the API hits the same typed error, never wrong data.
        #expect(throws: EngineError.self) { _ = try EngineModel.read(store) }
    }

    @Test func damagedNewestMetaWithALaterWALIsRefusedNotSilentlyRolledBack() throws {
        let (files, _, _) = try Self.makeStore()
        var damaged = files
        // The checkpoint wrote generation 2 into slot 0; damage its generation field.
        damaged[Self.path]?[24] ^= 0x01
        var options = EngineOptions()
        options.fileSystem = MemoryFileSystem(files: damaged)
        do {
            _ = try Engine.open(at: Self.path, options: options)
            Issue.record("opened an older checkpoint, losing the newer one silently")
        } catch {
            #expect(error.code == .corrupt)
            #expect(error.page == PageNumber(0))
        }
    }
}
