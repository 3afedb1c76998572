// JSONValue's own parse (the catalog's reader): random documents written by JSONEncoder read
// back equal, escapes and surrogate pairs decode as Foundation decodes them, and every kind of
// malformed text — including nesting past the limit and invalid UTF-8 — is refused with the
// offset of the fault, never a crash.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreCore

@Suite struct JSONParsingTests {
    /// A random value; doubles have a fraction or an exponent (JSONEncoder writes an integral
    /// double below 2^53 without either, which reads back as an integer).
    static func randomValue(_ rng: inout SplitMix64, depth: Int) -> JSONValue {
        let pick = Int.random(in: 0..<(depth > 4 ? 5 : 7), using: &rng)
        switch pick {
        case 0: return .null
        case 1: return .bool(Bool.random(using: &rng))
        case 2:
            let v: Int64 = Bool.random(using: &rng) ? .random(in: -1000...1000, using: &rng) : .random(in: .min ... .max, using: &rng)
            return .int(v)
        case 3:
            var d = Double.random(in: -1e6...1e6, using: &rng) * pow(10, Double(Int.random(in: -200...200, using: &rng)))
            // JSONEncoder writes an integral double in [2^52, 2^53) in plain digits too.
            if d == d.rounded() { d = abs(d) < 0x1p52 ? d + 0.5 : d * 4 }
            return .double(d)
        case 4: return .string(randomString(&rng))
        case 5: return .array((0..<Int.random(in: 0..<5, using: &rng)).map { _ in randomValue(&rng, depth: depth + 1) })
        default:
            var members: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0..<5, using: &rng) { members[randomString(&rng)] = randomValue(&rng, depth: depth + 1) }
            return .object(members)
        }
    }

    static func randomString(_ rng: inout SplitMix64) -> String {
        let pieces = ["a", "Z", "é", "日本", "😀", "\"", "\\", "/", "\n", "\t", "\u{0}", "\u{1F}", "\u{7F}", " ", "\u{FFFF}", "\u{10FFFF}"]
        return (0..<Int.random(in: 0..<8, using: &rng)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &rng)] }.joined()
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func whatJSONEncoderWritesReadsBackEqual(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        for i in 0..<300 {
            let value = Self.randomValue(&rng, depth: 0)
            let bytes = Array(try JSONEncoder().encode(value))
            let parsed = try JSONValue.parse(bytes)
            #expect(parsed == value, "seed \(seed), document \(i): \(String(decoding: bytes, as: UTF8.self))")
            // JSONDecoder reads an integral number written with an exponent (1.6e+18) as an integer;
            // this parse keeps it a double, as it was written.
        }
    }

    @Test func escapesWhitespaceAndNumbersReadAsFoundationReadsThem() throws {
        let text = #" { "a" : [ 1 , -0 , 2.5e3 , -1E-2 , 9223372036854775807 , 9223372036854775808 , true , false , null ] ,"#
            + #" "s" : "\u00e9\ud83d\ude00\/\b\f\n\r\t\"\\x" } "# + "\n"
        let parsed = try JSONValue.parse(Array(text.utf8))
        #expect(parsed["a"] == .array([.int(1), .int(0), .double(2500), .double(-0.01), .int(.max), .double(9223372036854775808),
                                       .bool(true), .bool(false), .null]))
        #expect(parsed["s"]?.stringValue == "é😀/\u{8}\u{C}\n\r\t\"\\x")
        let foundation = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        #expect(foundation["s"] as? String == parsed["s"]?.stringValue)
        #expect(parsed["a"]?.arrayValue?[2].intValue == 2500)
        #expect(parsed["a"]?.arrayValue?[3].intValue == nil)
        #expect(parsed["missing"] == nil)
        #expect(try JSONValue.parse(Array(#"{"k": 1, "k": 2}"#.utf8))["k"] == .int(2))
    }

    @Test func malformedTextIsRefusedWithWhereItWentWrong() throws {
        let bad: [(String, [UInt8])] = [
            ("empty", []), ("blank", Array("  ".utf8)), ("trailing", Array("1 2".utf8)), ("comma", Array("[1,]".utf8)),
            ("colon", Array(#"{"a" 1}"#.utf8)), ("name", Array("{a:1}".utf8)), ("unclosed object", Array(#"{"a":1"#.utf8)),
            ("unclosed array", Array("[1".utf8)), ("unclosed string", Array(#""abc"#.utf8)), ("leading zero", Array("01".utf8)),
            ("bare fraction", Array("1.".utf8)), ("bare exponent", Array("1e".utf8)), ("bare minus", Array("-".utf8)),
            ("plus", Array("+1".utf8)), ("huge", Array("1e400".utf8)), ("word", Array("tru".utf8)), ("NaN", Array("NaN".utf8)),
            ("escape", Array(#""\x""#.utf8)), ("short unicode", Array(#""\u12""#.utf8)), ("lone high", Array(#""\ud83d""#.utf8)),
            ("lone low", Array(#""\ude00""#.utf8)), ("high then other", Array(#""\ud83d\u0041""#.utf8)),
            ("control", [0x22, 0x01, 0x22]), ("invalid UTF-8", [0x22, 0xFF, 0x22]), ("truncated UTF-8", [0x22, 0xE6, 0x97, 0x22]),
            ("too deep", Array(String(repeating: "[", count: JSONValue.maximumDepth + 1).utf8)
                + Array(String(repeating: "]", count: JSONValue.maximumDepth + 1).utf8)),
        ]
        for (name, bytes) in bad {
            #expect(throws: JSONValue.ParseError.self, "\(name) was accepted") { try JSONValue.parse(bytes) }
        }
        do {
            _ = try JSONValue.parse(Array("[1, 2, x]".utf8))
            Issue.record("accepted")
        } catch {
            #expect(error.offset == 7)
            #expect("\(error)".contains("byte 7"))
        }
        let deepest = String(repeating: "[", count: JSONValue.maximumDepth) + String(repeating: "]", count: JSONValue.maximumDepth)
        #expect(throws: Never.self) { try JSONValue.parse(Array(deepest.utf8)) }
    }
}
