// RadixSort against a stable comparison sort, over fixed-seed inputs shaped as a save's keys are
// (a few entity IDs above sequence numbers, the low word alone), as a bulk write's two-word key
// prefixes (links: a source key, then a target key), as arbitrary words and with many repeated
// keys (whose entries must keep their order), at several sizes.

import DocStoreTestSupport
import Testing

@testable import DocStoreEngine

@Suite struct RadixSortTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func sortsAsAStableComparisonSortDoes(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        func primaryKey() -> UInt64 { UInt64(rng.next() % 3 + 1) << 48 | (rng.next() % 200_000 + 1) }
        for size in [0, 1, 2, 7, RadixSort.threshold - 1, RadixSort.threshold, 300, 40_000] {
            for shape in 0..<4 {
                var entries: [RadixSort.Entry] = (0..<size).map { i in
                    let (high, low): (UInt64, UInt64) = switch shape {
                    case 0: (0, primaryKey())
                    case 1: (primaryKey(), primaryKey())
                    case 2: (rng.next(), rng.next())
                    default: (rng.next() % 5, rng.next() % 7)   // many repeats
                    }
                    return (high, low, UInt64(i))
                }
                var expected = entries
                expected.sort { ($0.high, $0.low, $0.payload) < ($1.high, $1.low, $1.payload) }   // stable: payloads are input positions
                RadixSort.sort(&entries)
                #expect(entries.map(\.high) == expected.map(\.high) && entries.map(\.low) == expected.map(\.low)
                        && entries.map(\.payload) == expected.map(\.payload), "seed \(seed), size \(size), shape \(shape)")
            }
        }
    }
}
