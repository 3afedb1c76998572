// KeyRadixSort against the standard library's stable sort, over fixed-seed inputs shaped as a
// save's keys are (a few entity IDs above sequence numbers) and as arbitrary 64-bit keys, with
// repeated keys (their payloads must keep their order), at sizes on both sides of the threshold.

import DocStoreTestSupport
import Testing

@testable import DocStoreCore

@Suite struct KeyRadixSortTests {
    @Test(arguments: [1, 2, 3] as [UInt64])
    func sortsAsTheStandardStableSortDoes(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for size in [0, 1, 7, KeyRadixSort.threshold - 1, KeyRadixSort.threshold, 1000, 40_000] {
            for shape in 0..<3 {
                var pairs: [(key: UInt64, payload: Int)] = (0..<size).map { i in
                    let key: UInt64 = switch shape {
                    case 0: PrimaryKey.make(entity: UInt32(rng.next() % 3 + 1), sequence: rng.next() % 200_000 + 1)
                    case 1: rng.next()
                    default: rng.next() % 50   // many repeats
                    }
                    return (key, i)
                }
                var expected = pairs
                expected.sort { ($0.key, $0.payload) < ($1.key, $1.payload) }   // stable: payloads are input positions
                KeyRadixSort.sort(&pairs)
                #expect(pairs.map(\.key) == expected.map(\.key) && pairs.map(\.payload) == expected.map(\.payload),
                        "seed \(seed), size \(size), shape \(shape)")
            }
        }
    }
}
