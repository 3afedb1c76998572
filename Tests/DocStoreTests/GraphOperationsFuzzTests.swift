// The graph-operations differential target (DocStoreQueryTestSupport's
// FuzzTargets.graphOperations) on fixed-seed random inputs, so the unit suite exercises it
// without libFuzzer; a finding names the seed and the input's number. Its corpus and fail cases
// are replayed by ObjectFuzzCorpusReplayTests.

import DocStoreQueryTestSupport
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct GraphOperationsFuzzTests {
    @Test(arguments: [5, 6, 7, 8] as [UInt64])
    func randomOperationsMatchTheModel(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for input in 0..<40 {
            let count = Int(rng.next() % 1500) + 1
            let bytes = (0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let finding = FuzzTargets.graphOperations(bytes, checkEvery: 1, maxSteps: 300)
            #expect(finding == nil, "seed \(seed), input \(input) (\(count) bytes): \(finding ?? "")")
            if finding != nil { break }
        }
    }

    /// The target's model says when a save is refused: a finding here would mean the refusal
    /// paths (a unique folder name, the deny rule) were never reached, and GO2 went untested.
    @Test func theRandomInputsReachRefusedSaves() {
        var refused = 0
        var rng = SplitMix64(seed: 5)
        for _ in 0..<40 {
            let bytes = (0..<1000).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            refused += FuzzTargets.graphOperationsRefusedSaves(bytes)
        }
        #expect(refused > 10, "only \(refused) refused saves in 40 random inputs")
    }
}
