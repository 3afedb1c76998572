// Replays every file of Fuzz/Corpus/<target>/ and Fuzz/FailCases/<target>-* through the fuzz
// targets' logic (DocStoreTestSupport.FuzzTargets) without libFuzzer, so a fixed finding stays
// fixed and the corpus stays valid input (SQLite's fuzzcheck).

import DocStoreEngine
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct FuzzCorpusReplayTests {
    static func inputs(_ target: String) -> [URL] { FuzzCorpus.inputs(target) }

    @Test(arguments: ["FuzzOpenStore", "FuzzWALRecord", "FuzzPageDecode", "FuzzOperations", "FuzzKeyEncoding",
                      "FuzzSyncRequest", "FuzzSyncResponse"])
    func everyCorpusFileRunsClean(target: String) throws {
        let files = Self.inputs(target)
        #expect(!files.isEmpty, "no corpus for \(target)")
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            let finding: String?
            switch target {
            case "FuzzOpenStore": finding = FuzzTargets.openStore(bytes)
            case "FuzzWALRecord": finding = FuzzTargets.walRecord(bytes)
            case "FuzzSyncRequest": finding = SyncWireFuzzTargets.request(bytes)
            case "FuzzSyncResponse": finding = SyncWireFuzzTargets.response(bytes)
            case "FuzzPageDecode": finding = FuzzTargets.pageDecode(bytes)
            case "FuzzKeyEncoding": finding = FuzzTargets.keyEncoding(bytes)
            default: finding = FuzzTargets.operations(bytes)
            }
            #expect(finding == nil, "\(target) \(file.lastPathComponent): \(finding ?? "")")
        }
    }

    @Test func operationsTargetAgreesWithTheModelOnRandomInputs() {
        var rng = SplitMix64(seed: 31)
        for round in 0..<60 {
            let input = rng.bytes(Int(rng.next() % 600))
            let finding = FuzzTargets.operations(input)
            #expect(finding == nil, "seed 31 round \(round): \(finding ?? "")")
        }
    }

    /// A WAL with one small record and one LZ4-compressed record (a 20 000-byte value that
    /// compresses), as a fuzz seed: the mode byte 7 asks for every fix-up.
    static func walWithCompressedRecord() throws -> [UInt8] {
        let fs = MemoryFileSystem()
        try fs.createDirectory("/db")
        var options = EngineOptions()
        options.fileSystem = fs
        options.walPreallocationBytes = 0
        let engine = try Engine.open(at: "/db/s.docstore", options: options)
        try engine.write { txn in try txn.createTree(named: "t") }
        try engine.write { txn in try txn.put(Array(repeating: 7, count: 20_000), for: Array("big".utf8), in: "t") }
        let wal = try #require(fs.snapshot()["/db/s.docstore-wal"])
        try engine.close()
        return wal
    }

    @Test func walRecordTargetReachesCompressedRecordsAndRefusesImpossibleLengths() throws {
        let wal = try Self.walWithCompressedRecord()
        let report = try WALReader.read(bytes: wal, expectedGeneration: nil, expectedStart: nil, file: "w")
        #expect(report.records.count == 2 && report.records[1].compressed, "\(report.records)")
        #expect(FuzzTargets.walRecord([7] + wal) == nil)

        // A compressed record claiming 1.8 GB: refused as damage before anything is allocated
        // (rawLength is bytes 24..<28 of the record header). The fuzz target fixes the checksum
        // (mode 4) and must not find anything; the reader, given the same fixed bytes, stops
        // the log there and says why.
        let second = Int(report.records[1].offset), end = second + report.records[1].size
        var damaged = wal
        damaged.withUnsafeMutableBytes { raw in
            raw.setU32(second + 24, 0x7000_0000)
            raw.setU32(second, CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[(second + 4)..<end])))
        }
        #expect(FuzzTargets.walRecord([4] + damaged) == nil)
        let cut = try WALReader.read(bytes: damaged, expectedGeneration: nil, expectedStart: nil, file: "w")
        #expect(cut.records.count == 1)
        #expect(cut.stopReason?.contains("more than LZ4 can expand it to") == true, "\(cut.stopReason ?? "no stop")")
    }

    @Test func decoderAndKeyTargetsRunCleanOnRandomInputs() throws {
        var rng = SplitMix64(seed: 32)
        let wal = try Self.walWithCompressedRecord()
        for round in 0..<400 {
            // Random bytes, and the real log with a few bytes changed, under every mode.
            var mutated = wal
            for _ in 0..<(1 + rng.next() % 4) { mutated[Int(rng.next() % UInt64(mutated.count))] = UInt8(truncatingIfNeeded: rng.next()) }
            let mode = UInt8(truncatingIfNeeded: rng.next())
            for input in [[mode] + rng.bytes(Int(rng.next() % 300)), [mode] + mutated] {
                let finding = FuzzTargets.walRecord(input)
                #expect(finding == nil, "seed 32 round \(round): \(finding ?? "")")
            }
            let page = FuzzTargets.pageDecode([mode] + rng.bytes(Int(rng.next() % 4200)))
            #expect(page == nil, "seed 32 round \(round): \(page ?? "")")
            let key = FuzzTargets.keyEncoding(rng.bytes(Int(rng.next() % 120)))
            #expect(key == nil, "seed 32 round \(round): \(key ?? "")")
        }
    }
}
