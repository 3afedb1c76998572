// KeyEncoding: an order-preserving encoding of typed values and tuples into byte keys
// (Format/key-encoding.md). The memcmp order of encoded keys (shorter first on a common prefix)
// equals the order of the values, so one byte order serves primary keys, secondary and compound
// indexes and sorting.
//
// Invariants:
// - Every component starts with a one-byte tag; tags ascend in the order of the type table, so
//   values of different types order by type, and a tuple is the concatenation of its components.
// - Fixed-width payloads are big-endian with the sign bit flipped (integers) or the IEEE bits
//   transformed (doubles) so that unsigned byte order is numeric order.
// - Strings and byte strings escape 0x00 as 00 FF and end with 00 01, so a prefix sorts before
//   its extensions and embedded zeros keep their order; the terminator also ends the component,
//   so the next component of a tuple cannot be confused with the string's bytes.
// - `decode` validates everything and never traps: a malformed key throws KeyDecodingError with
//   the offset.

import Foundation

/// A typed value that can be part of an ordered key.
public enum KeyComponent: Hashable, Sendable {
    /// Sorts before every other value.
    case null
    case bool(Bool)
    /// A signed integer. Signed and unsigned integers are different types: they order by tag,
    /// not by value (encode both sides of a comparison with the same case).
    case int(Int64)
    /// An unsigned integer.
    case uint(UInt64)
    /// A double in the IEEE total order: -inf < negatives < -0.0 < +0.0 < positives < +inf < NaN.
    /// Every NaN is stored as one canonical NaN, which sorts after +inf.
    case double(Double)
    /// A date, ordered by its time interval since the reference date (encoded like a double).
    case date(Date)
    /// A string, ordered by its UTF-8 bytes (which is Unicode scalar order). May contain NUL.
    case string(String)
    /// Raw bytes, ordered bytewise. May contain zero bytes.
    case bytes([UInt8])
    /// A UUID, ordered by its 16 bytes.
    case uuid(UUID)

    /// Equal when the encodings are equal: all NaNs are one value, -0.0 and +0.0 are two, and
    /// strings compare by their UTF-8 bytes (no Unicode normalization) — the key's semantics,
    /// not Swift's `==` on the payloads (which would make NaN unequal to itself).
    public static func == (a: KeyComponent, b: KeyComponent) -> Bool {
        KeyEncoding.encode([a]) == KeyEncoding.encode([b])
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(KeyEncoding.encode([self]))
    }

    /// The type tag written before the payload (Format/key-encoding.md § Tags).
    public var tag: UInt8 {
        switch self {
        case .null: 0x05
        case .bool: 0x10
        case .int: 0x20
        case .uint: 0x28
        case .double: 0x30
        case .date: 0x38
        case .string: 0x40
        case .bytes: 0x48
        case .uuid: 0x50
        }
    }
}

/// Why a key could not be decoded, and where.
public struct KeyDecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The byte offset in the key where decoding failed.
    public var offset: Int
    public var reason: String
    public var description: String { "invalid key at byte \(offset): \(reason)" }
}

/// The order-preserving key encoding.
///
/// ```swift
/// let key = KeyEncoding.encode([.int(42), .string("Inbox")])
/// let back = try KeyEncoding.decode(key)   // [.int(42), .string("Inbox")]
/// ```
public enum KeyEncoding {
    static let canonicalNaN = UInt64(0x7FF8_0000_0000_0000)

    /// The order-preserving image of a double's bits.
    @inline(__always) static func orderedBits(_ d: Double) -> UInt64 {
        let bits = d.isNaN ? canonicalNaN : d.bitPattern
        return bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63)
    }

    @inline(__always) static func double(fromOrdered o: UInt64) -> Double {
        Double(bitPattern: o & (1 << 63) != 0 ? o & ~(1 << 63) : ~o)
    }

    @inline(__always) static func appendBigEndian(_ v: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: v.bigEndian) { out.append(contentsOf: $0) }
    }

    static func appendEscaped<C: Collection>(_ bytes: C, to out: inout [UInt8]) where C.Element == UInt8 {
        for b in bytes {
            out.append(b)
            if b == 0 { out.append(0xFF) }
        }
        out.append(0x00)
        out.append(0x01)
    }

    /// Appends one component to `out`.
    public static func append(_ c: KeyComponent, to out: inout [UInt8]) {
        out.append(c.tag)
        switch c {
        case .null:
            break
        case .bool(let b):
            out.append(b ? 1 : 0)
        case .int(let i):
            appendBigEndian(UInt64(bitPattern: i) ^ (1 << 63), to: &out)
        case .uint(let u):
            appendBigEndian(u, to: &out)
        case .double(let d):
            appendBigEndian(orderedBits(d), to: &out)
        case .date(let d):
            appendBigEndian(orderedBits(d.timeIntervalSinceReferenceDate), to: &out)
        case .string(let s):
            out.reserveCapacity(out.count + s.utf8.count + 2)
            appendEscaped(s.utf8, to: &out)
        case .bytes(let b):
            out.reserveCapacity(out.count + b.count + 2)
            appendEscaped(b, to: &out)
        case .uuid(let u):
            withUnsafeBytes(of: u.uuid) { out.append(contentsOf: $0) }
        }
    }

    /// Encodes a tuple of components as one key.
    public static func encode(_ components: [KeyComponent]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(components.count * 10)
        for c in components { append(c, to: &out) }
        return out
    }

    /// Decodes a whole key.
    public static func decode(_ bytes: [UInt8]) throws(KeyDecodingError) -> [KeyComponent] {
        let result: Result<[KeyComponent], KeyDecodingError> = bytes.withUnsafeBytes { raw in
            do throws(KeyDecodingError) { return .success(try decode(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Decodes a whole key from raw bytes.
    public static func decode(_ bytes: UnsafeRawBufferPointer) throws(KeyDecodingError) -> [KeyComponent] {
        try decode(bytes, atMost: Int.max).components
    }

    /// The length in bytes of a key's first `count` components (bytes may follow them that are
    /// not components, such as the primary key ending an index entry).
    public static func prefixLength(_ bytes: [UInt8], components count: Int) throws(KeyDecodingError) -> Int {
        let result: Result<Int, KeyDecodingError> = bytes.withUnsafeBytes { raw in
            do throws(KeyDecodingError) { return .success(try prefixLength(raw, components: count)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// The length in bytes of the first `count` components of a key in place, found by skipping
    /// them (nothing is decoded or copied): what a walk in index order compares to tell ties.
    /// Checks the structure only (tags, widths, terminators), not the values.
    public static func prefixLength(_ bytes: UnsafeRawBufferPointer, components count: Int) throws(KeyDecodingError) -> Int {
        var i = 0, seen = 0
        let n = bytes.count
        while seen < count {
            guard i < n else { throw KeyDecodingError(offset: i, reason: "the key has \(seen) components, not \(count)") }
            let start = i
            let width: Int
            switch bytes[i] {
            case 0x05: width = 0
            case 0x10: width = 1
            case 0x20, 0x28, 0x30, 0x38: width = 8
            case 0x50: width = 16
            case 0x40, 0x48:
                i += 1
                while true {
                    guard i + 1 < n else { throw KeyDecodingError(offset: start, reason: "a string or byte string has no terminator") }
                    if bytes[i] == 0 {
                        if bytes[i + 1] == 0x01 { i += 2; break }
                        guard bytes[i + 1] == 0xFF else {
                            throw KeyDecodingError(offset: i, reason: "a zero byte is followed by 0x\(String(bytes[i + 1], radix: 16)), not 0xff or 0x01")
                        }
                        i += 2
                    } else {
                        i += 1
                    }
                }
                seen += 1
                continue
            default:
                throw KeyDecodingError(offset: start, reason: "unknown type tag 0x\(String(bytes[i], radix: 16))")
            }
            guard n - i - 1 >= width else { throw KeyDecodingError(offset: start, reason: "a \(width)-byte value is cut short (\(n - i - 1) bytes left)") }
            i += 1 + width
            seen += 1
        }
        return i
    }

    /// Decodes up to `limit` components from the start of raw bytes; returns them and the
    /// number of bytes they take.
    static func decode(_ bytes: UnsafeRawBufferPointer, atMost limit: Int) throws(KeyDecodingError) -> (components: [KeyComponent], length: Int) {
        var out: [KeyComponent] = []
        var i = 0
        let n = bytes.count
        func fixed(_ width: Int, at start: Int) throws(KeyDecodingError) -> UInt64 {
            guard n - i >= width else {
                throw KeyDecodingError(offset: start, reason: "a \(width)-byte value is cut short (\(n - i) bytes left)")
            }
            var v: UInt64 = 0
            for k in 0..<width { v = v << 8 | UInt64(bytes[i + k]) }
            i += width
            return v
        }
        func escaped(at start: Int) throws(KeyDecodingError) -> [UInt8] {
            var result: [UInt8] = []
            while true {
                guard i < n else { throw KeyDecodingError(offset: start, reason: "a string or byte string has no terminator") }
                let b = bytes[i]
                if b != 0 {
                    result.append(b)
                    i += 1
                    continue
                }
                guard i + 1 < n else { throw KeyDecodingError(offset: i, reason: "a zero byte ends the key without an escape") }
                switch bytes[i + 1] {
                case 0xFF: result.append(0)
                case 0x01: i += 2; return result
                default: throw KeyDecodingError(offset: i, reason: "a zero byte is followed by 0x\(String(bytes[i + 1], radix: 16)), not 0xff or 0x01")
                }
                i += 2
            }
        }
        while i < n && out.count < limit {
            let start = i
            let tag = bytes[i]
            i += 1
            switch tag {
            case 0x05:
                out.append(.null)
            case 0x10:
                let v = try fixed(1, at: start)
                guard v <= 1 else { throw KeyDecodingError(offset: start + 1, reason: "a boolean byte is \(v), not 0 or 1") }
                out.append(.bool(v == 1))
            case 0x20:
                out.append(.int(Int64(bitPattern: try fixed(8, at: start) ^ (1 << 63))))
            case 0x28:
                out.append(.uint(try fixed(8, at: start)))
            case 0x30, 0x38:
                let o = try fixed(8, at: start)
                let d = double(fromOrdered: o)
                if d.isNaN && d.bitPattern != canonicalNaN {
                    throw KeyDecodingError(offset: start + 1, reason: "a NaN that is not the canonical one")
                }
                out.append(tag == 0x30 ? .double(d) : .date(Date(timeIntervalSinceReferenceDate: d)))
            case 0x40:
                let raw = try escaped(at: start)
                guard let s = String(validating: raw, as: UTF8.self) else {
                    throw KeyDecodingError(offset: start + 1, reason: "a string is not valid UTF-8")
                }
                out.append(.string(s))
            case 0x48:
                out.append(.bytes(try escaped(at: start)))
            case 0x50:
                guard n - i >= 16 else { throw KeyDecodingError(offset: start, reason: "a UUID is cut short (\(n - i) bytes left)") }
                var u: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
                withUnsafeMutableBytes(of: &u) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[i..<(i + 16)])) }
                i += 16
                out.append(.uuid(UUID(uuid: u)))
            default:
                throw KeyDecodingError(offset: start, reason: "unknown type tag 0x\(String(tag, radix: 16))")
            }
        }
        return (out, i)
    }

    /// The smallest key greater than every key that starts with `prefix` — the exclusive upper
    /// bound of a prefix scan; nil when there is none (the prefix is all 0xFF).
    public static func prefixEnd(_ prefix: [UInt8]) -> [UInt8]? {
        var end = prefix
        while let last = end.last {
            if last < 0xFF {
                end[end.count - 1] = last + 1
                return end
            }
            end.removeLast()
        }
        return nil
    }
}
