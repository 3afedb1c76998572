// Replays every file of Fuzz/Corpus/<target>/ and Fuzz/FailCases/<target>-* through the fuzz
// targets' logic (DocStoreTestSupport.FuzzTargets) without libFuzzer, so a fixed finding stays
// fixed and the corpus stays valid input (SQLite's fuzzcheck).

import DocStoreTestSupport
import Foundation
import Testing

@Suite struct FuzzCorpusReplayTests {
    static func inputs(_ target: String) -> [URL] { FuzzCorpus.inputs(target) }

    @Test(arguments: ["FuzzOpenStore", "FuzzWALRecord", "FuzzPageDecode", "FuzzOperations", "FuzzKeyEncoding"])
    func everyCorpusFileRunsClean(target: String) throws {
        let files = Self.inputs(target)
        #expect(!files.isEmpty, "no corpus for \(target)")
        for file in files {
            let bytes = try [UInt8](Data(contentsOf: file))
            let finding: String?
            switch target {
            case "FuzzOpenStore": finding = FuzzTargets.openStore(bytes)
            case "FuzzWALRecord": finding = FuzzTargets.walRecord(bytes)
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
}
