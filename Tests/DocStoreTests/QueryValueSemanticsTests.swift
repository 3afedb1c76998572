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

    /// DIV and MOD follow Swift's integer `/` and `%` (truncation toward zero, the dividend's
    /// sign), with nil where Swift would trap (by zero, Int64.min DIV -1).
    @Test func integerDivisionAndRemainderFollowSwift() {
        for (a, b) in [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 5), (6, 3)] as [(Int64, Int64)] {
            #expect(QueryEvaluator.arithmetic(.integerDivide, .int(a), .int(b)) == .int(a / b), "\(a) DIV \(b)")
            #expect(QueryEvaluator.arithmetic(.remainder, .int(a), .int(b)) == .int(a % b), "\(a) MOD \(b)")
        }
        #expect(QueryEvaluator.arithmetic(.integerDivide, .int(1), .int(0)) == .null)
        #expect(QueryEvaluator.arithmetic(.remainder, .int(1), .int(0)) == .null)
        #expect(QueryEvaluator.arithmetic(.integerDivide, .int(.min), .int(-1)) != .int(.min))
        #expect(QueryEvaluator.arithmetic(.integerDivide, .double(7.5), .int(2)) == .double(3))
        #expect(QueryEvaluator.arithmetic(.remainder, .double(-7.5), .int(2)) == .double(-1.5))
        #expect(QueryEvaluator.arithmetic(.divide, .int(7), .int(2)) == .double(3.5))
    }
}
