// Fast paths of the value semantics against what they stand in for: the ASCII substring search
// against Foundation's `contains` (control characters included; NUL, which Foundation skips,
// is left to Foundation), on random strings from a small alphabet (so matches happen),
// seed fixed and printed on failure.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreCore

@Suite struct QueryValueSemanticsTests {
    @Test func asciiContainsAgreesWithFoundation() {
        var rng = SplitMix64(seed: 41)
        let alphabet = Array("abAB a\u{1}\t\u{7F}.")
        func text(_ n: Int) -> String { String((0..<n).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }) }
        for i in 0..<5_000 {
            let haystack = text(Int(rng.next() % 12)), needle = text(Int(rng.next() % 4))
            let expected = needle.isEmpty || haystack.range(of: needle) != nil
            #expect(QueryValueSemantics.asciiContains(haystack, needle) == expected,
                    "seed 41 case \(i): \(String(reflecting: haystack)) contains \(String(reflecting: needle))")
        }
        // Anything beyond ASCII is left to Foundation (Unicode equivalence).
        #expect(QueryValueSemantics.asciiContains("café", "e") == nil)
        // Foundation's search skips NUL (" aaA" contains "A\0"): such strings are left to it.
        #expect(QueryValueSemantics.asciiContains(" aaA", "A\0") == nil)
        #expect(QueryValueSemantics.asciiContains("cafe", "é") == nil)
        #expect(QueryValueSemantics.stringMatch(.contains, "Cafe\u{301} au lait", "afé", [], regex: { _ in nil }))
    }
}
