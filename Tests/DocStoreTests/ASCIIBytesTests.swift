// ASCIIBytes (the word-at-a-time string loops of a scan's byte test) against the byte-at-a-time
// definitions they replace, on random text with a fixed seed: texts of every length from 0 to 40
// and at every alignment, made of a small alphabet (letters of both cases, digits, a space, and
// now and then a 0 byte or a byte ≥ 0x80) so that candidates, near misses and matches at every
// position of a word are common; constants of 0 to 5 bytes, letters and others.

import DocStoreTestSupport
import Testing

@testable import DocStoreCore

@Suite struct ASCIIBytesTests {
    static func fold(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b | 0x20 : b }

    static func plainByBytes(_ t: [UInt8]) -> Bool { t.allSatisfy { $0 > 0 && $0 < 0x80 } }

    static func containsByBytes(_ t: [UInt8], _ constant: [UInt8], fold: Bool) -> Bool {
        guard !constant.isEmpty else { return true }
        guard constant.count <= t.count else { return false }
        for i in 0...(t.count - constant.count) {
            if (0..<constant.count).allSatisfy({ (fold ? Self.fold(t[i + $0]) : t[i + $0]) == constant[$0] }) { return true }
        }
        return false
    }

    @Test func wordLoopsAnswerAsTheByteLoops() {
        let seed: UInt64 = 0xA5C1
        var rng = SplitMix64(seed: seed)
        let alphabet = Array("mMiIlLkK aZz09-".utf8)
        func byte() -> UInt8 {
            switch rng.next() % 40 {
            case 0: return 0
            case 1: return 0x80 | UInt8(truncatingIfNeeded: rng.next() & 0x7F)
            default: return alphabet[Int(rng.next() % UInt64(alphabet.count))]
            }
        }
        var checked = 0, found = 0
        for length in 0...40 {
            for offset in 0..<8 {
                for _ in 0..<30 {
                    let text = (0..<length).map { _ in byte() }
                    var constant = (0..<Int(rng.next() % 6)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }
                    // Half the time, a piece of the text itself, so that matches are common.
                    if length > 0, rng.next() % 2 == 0 {
                        let start = Int(rng.next() % UInt64(length))
                        let end = min(length, start + 1 + Int(rng.next() % 5))
                        constant = Array(text[start..<end])
                    }
                    let padded = [UInt8](repeating: 0x41, count: offset) + text + [0x6D, 0x6D]
                    padded.withUnsafeBytes { all in
                        let t = UnsafeRawBufferPointer(rebasing: all[offset..<(offset + length)])
                        #expect(ASCIIBytes.isPlain(t) == Self.plainByBytes(text), "seed \(seed): isPlain of \(text)")
                        for fold in [false, true] {
                            let c = fold ? constant.map(Self.fold) : constant
                            let expected = Self.containsByBytes(text, c, fold: fold)
                            if expected { found += 1 }
                            #expect(ASCIIBytes.contains(t, c, fold: fold) == expected,
                                    "seed \(seed): \(text) contains \(c), fold \(fold): expected \(expected)")
                            checked += 1
                        }
                    }
                }
            }
        }
        #expect(found > checked / 4, "too few matches to test anything: \(found) of \(checked)")
    }
}
