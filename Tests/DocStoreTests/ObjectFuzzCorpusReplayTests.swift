// Replays every file of Fuzz/Corpus/<target>/ and Fuzz/FailCases/<target>-* for the object
// layer's fuzz targets (DocStoreQueryTestSupport's FuzzTargets: schema-decode, dump-load,
// recover, graph-operations) without libFuzzer, so a fixed finding stays fixed and the corpus stays valid input;
// and runs each on seeded random variations of its corpus (a flipped byte, a cut tail).

import DocStoreQueryTestSupport
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct ObjectFuzzCorpusReplayTests {
    static func inputs(_ target: String) -> [URL] { FuzzCorpus.inputs(target) }

    static func run(_ target: String, _ bytes: [UInt8]) -> String? {
        switch target {
        case "FuzzSchemaDecode": FuzzTargets.schemaDecode(bytes)
        case "FuzzDumpLoad": FuzzTargets.dumpLoad(bytes)
        case "FuzzGraphOperations": FuzzTargets.graphOperations(bytes)
        default: FuzzTargets.recover(bytes)
        }
    }

    @Test(arguments: ["FuzzSchemaDecode", "FuzzDumpLoad", "FuzzRecover", "FuzzGraphOperations"])
    func everyCorpusFileRunsClean(target: String) throws {
        let files = Self.inputs(target)
        #expect(!files.isEmpty, "no corpus for \(target)")
        for file in files {
            let finding = Self.run(target, try [UInt8](Data(contentsOf: file)))
            #expect(finding == nil, "\(target) \(file.lastPathComponent): \(finding ?? "")")
        }
    }

    /// Seeded variations of each corpus file: 20 single-byte flips and a cut (the seed and round
    /// are printed with any finding).
    @Test(arguments: ["FuzzSchemaDecode", "FuzzDumpLoad", "FuzzRecover", "FuzzGraphOperations"])
    func variationsOfTheCorpusRunClean(target: String) throws {
        var rng = SplitMix64(seed: 47)
        for file in Self.inputs(target) {
            let original = try [UInt8](Data(contentsOf: file))
            guard original.count > 8 else { continue }
            for round in 0..<21 {
                var bytes = original
                if round == 20 {
                    bytes = Array(bytes.prefix(Int(rng.next() % UInt64(bytes.count))))
                } else {
                    // Past the 4-byte length of a recover input, so the split stays the same.
                    let at = 4 + Int(rng.next() % UInt64(bytes.count - 4))
                    bytes[at] ^= UInt8(truncatingIfNeeded: 1 + rng.next() % 255)
                }
                let finding = Self.run(target, bytes)
                #expect(finding == nil, "seed 47 \(target) \(file.lastPathComponent) round \(round): \(finding ?? "")")
            }
        }
    }
}
