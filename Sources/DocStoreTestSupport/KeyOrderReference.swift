// KeyOrderReference: the order and equality that KeyEncoding must reproduce, written directly
// over the values (Format/key-encoding.md § Order), for KeyEncodingTests and the key-encoding
// fuzz target. Nothing here encodes: it is the independent side of the comparison.

import DocStoreEngine
import Foundation

public enum KeyOrderReference {
    /// The value order of two tuples: component by component, a shorter tuple first on a common
    /// prefix. Negative, zero or positive.
    public static func compare(_ a: [KeyComponent], _ b: [KeyComponent]) -> Int {
        for (x, y) in zip(a, b) {
            let c = compare(x, y)
            if c != 0 { return c }
        }
        return a.count - b.count
    }

    /// The value order of two components: by type (tag order), then by value — the IEEE total
    /// order for doubles and dates (-0.0 before +0.0, every NaN equal and last), UTF-8 bytes for
    /// strings, bytewise for bytes and UUIDs.
    public static func compare(_ x: KeyComponent, _ y: KeyComponent) -> Int {
        if x.tag != y.tag { return Int(x.tag) - Int(y.tag) }
        func cmp<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a > b ? 1 : 0) }
        func cmpDouble(_ a: Double, _ b: Double) -> Int {
            if a.isNaN || b.isNaN { return a.isNaN && b.isNaN ? 0 : (a.isNaN ? 1 : -1) }
            if a == 0 && b == 0 { return cmp(a.sign == .minus ? 0 : 1, b.sign == .minus ? 0 : 1) }
            return cmp(a, b)
        }
        func cmpBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
            a == b ? 0 : (a.lexicographicallyPrecedes(b) ? -1 : 1)
        }
        switch (x, y) {
        case (.null, .null): return 0
        case let (.bool(a), .bool(b)): return cmp(a ? 1 : 0, b ? 1 : 0)
        case let (.int(a), .int(b)): return cmp(a, b)
        case let (.uint(a), .uint(b)): return cmp(a, b)
        case let (.double(a), .double(b)): return cmpDouble(a, b)
        case let (.date(a), .date(b)): return cmpDouble(a.timeIntervalSinceReferenceDate, b.timeIntervalSinceReferenceDate)
        case let (.string(a), .string(b)): return cmpBytes(Array(a.utf8), Array(b.utf8))
        case let (.bytes(a), .bytes(b)): return cmpBytes(a, b)
        case let (.uuid(a), .uuid(b)): return cmpBytes(withUnsafeBytes(of: a.uuid, Array.init), withUnsafeBytes(of: b.uuid, Array.init))
        default: return 0
        }
    }

    /// Whether two tuples are the same values: same kinds, equal in the order above, and doubles
    /// bit for bit (every NaN counts as one: the encoding keeps one canonical NaN).
    public static func same(_ a: [KeyComponent], _ b: [KeyComponent]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { x, y in
            guard x.tag == y.tag, compare(x, y) == 0 else { return false }
            if case .double(let p) = x, case .double(let q) = y { return (p.isNaN && q.isNaN) || p.bitPattern == q.bitPattern }
            return true
        }
    }
}
