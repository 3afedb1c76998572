// KeyEncoding: decode(encode(x)) == x, and the byte order of encoded tuples equals the value order
// of the tuples, for fixed-seed random tuples full of edge values; malformed keys throw with an
// offset and never trap.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

/// The reference order and equality (DocStoreTestSupport.KeyOrderReference).
func referenceCompare(_ a: [KeyComponent], _ b: [KeyComponent]) -> Int { KeyOrderReference.compare(a, b) }
func referenceCompare(_ x: KeyComponent, _ y: KeyComponent) -> Int { KeyOrderReference.compare(x, y) }
func sameComponents(_ a: [KeyComponent], _ b: [KeyComponent]) -> Bool { KeyOrderReference.same(a, b) }

func randomComponent(_ rng: inout SplitMix64) -> KeyComponent {
    let doubles: [Double] = [0, -0.0, 1, -1, .infinity, -.infinity, .nan, -.nan, .leastNonzeroMagnitude,
                             -.leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude, 1e-300, 3.5]
    let strings = ["", "a", "ab", "a\u{0}", "a\u{0}b", "\u{0}", "b", "é", "e\u{301}", "日本", "😀", "aa", "Z"]
    switch rng.next() % 9 {
    case 0: return .null
    case 1: return .bool(rng.next() & 1 == 0)
    case 2:
        let edge: [Int64] = [.min, .max, 0, -1, 1, Int64.min + 1]
        return .int(rng.next() % 3 == 0 ? edge[Int(rng.next() % 6)] : Int64(bitPattern: rng.next()) >> (rng.next() % 60))
    case 3: return .uint(rng.next() % 3 == 0 ? [0, 1, .max][Int(rng.next() % 3)] : rng.next() >> (rng.next() % 60))
    case 4: return .double(rng.next() % 2 == 0 ? doubles[Int(rng.next() % UInt64(doubles.count))] : Double(Int64(bitPattern: rng.next()) >> 20) / 1000)
    case 5: return .date(Date(timeIntervalSinceReferenceDate: Double(Int64(bitPattern: rng.next()) >> 30)))
    case 6: return .string(strings[Int(rng.next() % UInt64(strings.count))] + (rng.next() % 2 == 0 ? "" : strings[Int(rng.next() % UInt64(strings.count))]))
    case 7: return .bytes((0..<Int(rng.next() % 5)).map { _ in [0, 1, 0xFF, 0x7F][Int(rng.next() % 4)] })
    default: return .uuid(UUID(uuid: withUnsafeBytes(of: (rng.next(), rng.next())) { raw in
        (raw[0], raw[1], raw[2], raw[3], raw[4], raw[5], raw[6], raw[7], raw[8], raw[9], raw[10], raw[11], raw[12], raw[13], raw[14], raw[15]) }))
    }
}

@Suite struct KeyEncodingTests {
    @Test func roundTripPreservesEveryComponentKind() throws {
        let all: [KeyComponent] = [.null, .bool(true), .bool(false), .int(.min), .int(-5), .int(.max), .uint(0), .uint(.max),
                                   .double(-0.0), .double(.nan), .double(-.infinity), .date(Date(timeIntervalSinceReferenceDate: 12.5)),
                                   .string("a\u{0}b"), .string(""), .bytes([0, 0xFF, 0]), .bytes([]), .uuid(UUID())]
        for c in all {
            let decoded = try KeyEncoding.decode(KeyEncoding.encode([c]))
            #expect(sameComponents(decoded, [c]), "\(c)")
        }
        #expect(sameComponents(try KeyEncoding.decode(KeyEncoding.encode(all)), all))
    }

    @Test func byteOrderEqualsValueOrderForRandomTuples() throws {
        let seed: UInt64 = 1234
        var rng = SplitMix64(seed: seed)
        let tuples: [[KeyComponent]] = (0..<20_000).map { _ in (0..<Int(rng.next() % 4 + 1)).map { _ in randomComponent(&rng) } }
        let encoded = tuples.map(KeyEncoding.encode)
        for (t, e) in zip(tuples, encoded) {
            let back = try KeyEncoding.decode(e)
            #expect(sameComponents(back, t), "seed \(seed): \(t) decoded as \(back)")
        }
        // Compare neighbours in the byte order: the reference order must agree everywhere.
        let order = encoded.indices.sorted { encoded[$0].lexicographicallyPrecedes(encoded[$1]) }
        var disagreements = 0
        for (i, j) in zip(order, order.dropFirst()) {
            let byBytes = encoded[i] == encoded[j] ? 0 : -1
            let byValue = referenceCompare(tuples[i], tuples[j])
            if (byBytes == 0) != (byValue == 0) || (byBytes < 0 && byValue > 0) {
                disagreements += 1
                if disagreements < 5 { Issue.record("seed \(seed): \(tuples[i]) vs \(tuples[j]): bytes \(byBytes), values \(byValue)") }
            }
        }
        #expect(disagreements == 0)
        // And a random sample of pairs, not only neighbours.
        for _ in 0..<20_000 {
            let i = Int(rng.next() % UInt64(tuples.count)), j = Int(rng.next() % UInt64(tuples.count))
            let b = encoded[i] == encoded[j] ? 0 : (encoded[i].lexicographicallyPrecedes(encoded[j]) ? -1 : 1)
            let v = referenceCompare(tuples[i], tuples[j])
            #expect(b == (v == 0 ? 0 : (v < 0 ? -1 : 1)), "seed \(seed): \(tuples[i]) vs \(tuples[j])")
        }
    }

    /// The worked example of Format/key-encoding.md.
    @Test func specWorkedExampleBytes() throws {
        let key = KeyEncoding.encode([.int(1), .string("a\u{0}b"), .double(-1.5)])
        #expect(key == [0x20, 0x80, 0, 0, 0, 0, 0, 0, 0x01,
                        0x40, 0x61, 0x00, 0xFF, 0x62, 0x00, 0x01,
                        0x30, 0x40, 0x07, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF])
        #expect(try KeyEncoding.decode(key) == [.int(1), .string("a\u{0}b"), .double(-1.5)])
    }

    @Test func equalityAndHashingFollowTheEncoding() {
        #expect(KeyComponent.double(.nan) == .double(-.nan))
        #expect(Set<KeyComponent>([.double(.nan), .double(.nan)]).count == 1)
        #expect(KeyComponent.double(0.0) != .double(-0.0))
        #expect(KeyComponent.string("\u{e9}") != .string("e\u{301}"))
        #expect(KeyComponent.int(1) != .uint(1))
    }

    @Test func negativeZeroSortsJustBeforePositiveZero() {
        let n = KeyEncoding.encode([.double(-0.0)]), p = KeyEncoding.encode([.double(0.0)])
        let tiny = KeyEncoding.encode([.double(-.leastNonzeroMagnitude)])
        #expect(n.lexicographicallyPrecedes(p))
        #expect(tiny.lexicographicallyPrecedes(n))
    }

    @Test func nanSortsAfterInfinityAndIsCanonical() {
        let inf = KeyEncoding.encode([.double(.infinity)])
        #expect(inf.lexicographicallyPrecedes(KeyEncoding.encode([.double(.nan)])))
        #expect(KeyEncoding.encode([.double(.nan)]) == KeyEncoding.encode([.double(-.nan)]))
        #expect(KeyEncoding.encode([.double(.nan)]) == KeyEncoding.encode([.double(.signalingNaN)]))
    }

    @Test func prefixSortsBeforeExtensionAndEmbeddedZeroKeepsOrder() {
        let keys = ["a", "a\u{0}", "a\u{0}\u{0}", "a\u{1}", "ab", "b"].map { KeyEncoding.encode([.string($0)]) }
        for (x, y) in zip(keys, keys.dropFirst()) { #expect(x.lexicographicallyPrecedes(y)) }
        // In a tuple the string ends before the next component: ("a", 2) < ("ab", 1).
        #expect(KeyEncoding.encode([.string("a"), .int(2)]).lexicographicallyPrecedes(KeyEncoding.encode([.string("ab"), .int(1)])))
    }

    @Test func truncatedIntegerThrowsWithOffset() {
        let key = Array(KeyEncoding.encode([.string("x"), .int(7)]).dropLast(3))
        #expect(throws: KeyDecodingError(offset: 4, reason: "a 8-byte value is cut short (5 bytes left)")) { try KeyEncoding.decode(key) }
    }

    @Test func unknownTagThrows() {
        #expect(throws: KeyDecodingError.self) { try KeyEncoding.decode([0x99]) }
        do { _ = try KeyEncoding.decode([0x05, 0x99]) } catch { #expect(error.offset == 1) }
    }

    @Test func missingTerminatorAndBadEscapeThrow() {
        #expect(throws: KeyDecodingError.self) { try KeyEncoding.decode([0x40, 0x61]) }
        #expect(throws: KeyDecodingError.self) { try KeyEncoding.decode([0x40, 0x61, 0x00]) }
        #expect(throws: KeyDecodingError.self) { try KeyEncoding.decode([0x40, 0x61, 0x00, 0x07]) }
    }

    @Test func invalidUTF8Throws() throws {
        #expect(throws: KeyDecodingError.self) { try KeyEncoding.decode([0x40, 0xC3, 0x28, 0x00, 0x01]) }
        #expect(try KeyEncoding.decode([0x48, 0xC3, 0x28, 0x00, 0x01]) == [.bytes([0xC3, 0x28])])
    }

    @Test func prefixEndBoundsAllExtensions() throws {
        let prefix = KeyEncoding.encode([.int(5)])
        let end = try #require(KeyEncoding.prefixEnd(prefix))
        for tail: KeyComponent in [.null, .string("zzz"), .uuid(UUID()), .bytes([0xFF, 0xFF])] {
            let k = prefix + KeyEncoding.encode([tail])
            #expect(k.lexicographicallyPrecedes(end))
            #expect(!k.lexicographicallyPrecedes(prefix))
        }
        #expect(KeyEncoding.prefixEnd([0x01, 0xFF]) == [0x02])
        #expect(KeyEncoding.prefixEnd([0xFF, 0xFF]) == nil)
    }

    @Test func everyTruncationAndMutationThrowsOrDecodesNeverTraps() {
        let samples = [KeyEncoding.encode([.string("héllo\u{0}"), .int(-3), .double(.nan)]),
                       KeyEncoding.encode([.uuid(UUID()), .bytes([0, 0, 1]), .bool(true), .date(Date())])]
        var decoded = 0, rejected = 0
        for key in samples {
            for n in 0...key.count {
                if (try? KeyEncoding.decode(Array(key.prefix(n)))) != nil { decoded += 1 } else { rejected += 1 }
            }
            for i in key.indices {
                for b: UInt8 in [0x00, 0x01, 0xFF, 0x40, key[i] ^ 0x80] {
                    var m = key
                    m[i] = b
                    if (try? KeyEncoding.decode(m)) != nil { decoded += 1 } else { rejected += 1 }
                }
            }
        }
        #expect(rejected > 0 && decoded > 0)
    }

    @Test func prefixLengthCountsComponentsAndIgnoresWhatFollows() throws {
        let head: [KeyComponent] = [.string("a\u{0}b"), .null, .int(-3)]
        let encoded = KeyEncoding.encode(head)
        let entry = encoded + [0, 0, 0, 0, 0, 0, 0, 9]   // a primary key after the components
        #expect(try KeyEncoding.prefixLength(entry, components: 3) == encoded.count)
        #expect(try KeyEncoding.prefixLength(entry, components: 1) == KeyEncoding.encode([head[0]]).count)
        #expect(try KeyEncoding.prefixLength(entry, components: 0) == 0)
        // Fewer components than asked for is an error with an offset, not a short answer.
        #expect(throws: KeyDecodingError.self) { try KeyEncoding.prefixLength(encoded, components: 4) }
    }

    /// The in-place length (components skipped, not decoded) is the length of the first n
    /// components' encoding, for every type and count, and what is cut short or unknown is
    /// refused instead of trapping.
    @Test func prefixLengthInPlaceIsTheEncodedPrefixsLength() throws {
        let all: [KeyComponent] = [.null, .bool(true), .int(-9), .uint(7), .double(-0.5), .date(Date(timeIntervalSinceReferenceDate: 3)),
                                   .string("a\u{0}é"), .bytes([0, 0xFF, 1]), .uuid(UUID()), .string("")]
        let entry = KeyEncoding.encode(all) + [0, 0, 0, 0, 0, 0, 0, 42]
        for n in 0...all.count {
            let inPlace = try entry.withUnsafeBytes { raw in try KeyEncoding.prefixLength(raw, components: n) }
            #expect(inPlace == KeyEncoding.encode(Array(all.prefix(n))).count, "\(n) components")
        }
        let encoded = KeyEncoding.encode(all)
        var refused = 0
        for cut in 0..<encoded.count {
            let short = Array(encoded.prefix(cut))
            if (try? short.withUnsafeBytes { raw in try KeyEncoding.prefixLength(raw, components: all.count) }) == nil { refused += 1 }
        }
        #expect(refused == encoded.count, "every cut key is refused")
        #expect(throws: KeyDecodingError.self) { try [UInt8]([0x77, 1]).withUnsafeBytes { raw in try KeyEncoding.prefixLength(raw, components: 1) } }
    }
}
