// QueryValueSemantics: how two query values compare — equality, order, and the string
// operators — under the rules Q3–Q5 of QueryPredicate.swift. Pure functions of values; the
// evaluator and the sort both use them, so a fetch filters and orders by the same rules.
//
//   numbers   Bool, integers, Double, Float and Decimal compare by value (integers exactly,
//             the rest as Double); NaN equals nothing and orders nowhere; -0 == 0.
//   strings   Swift's String equality (canonical equivalence) unless [n]; [c] and [d] fold case
//             and diacritics first (Foundation's folding, no locale); order is by Unicode scalars.
//   others    dates, UUIDs (bytes), URLs (absolute strings), Data (bytes), references (keys)
//             compare with their own kind only; nil equals only nil and orders nowhere.

import Foundation

enum QueryValueSemantics {
    /// Whether a equals b.
    static func equal(_ a: StoredValue, _ b: StoredValue, _ options: QueryStringOptions = []) -> Bool {
        switch (a, b) {
        case (.null, .null): return true
        case (.null, _), (_, .null): return false
        case (.string(let x), .string(let y)): return stringsEqual(x, y, options)
        case (.url(let x), .url(let y)): return x.absoluteString == y.absoluteString
        case (.string(let x), .url(let y)), (.url(let y), .string(let x)): return stringsEqual(x, y.absoluteString, options)
        case (.date(let x), .date(let y)): return x == y
        case (.uuid(let x), .uuid(let y)): return x == y
        case (.data(let x), .data(let y)), (.document(let x), .document(let y)): return x == y
        case (.reference(let x), .reference(let y)): return x == y
        default:
            guard let order = numericOrder(a, b) else { return false }
            return order == 0
        }
    }

    /// The order of a and b (-1, 0, 1), or nil when they do not order (nil, NaN, other kinds).
    static func order(_ a: StoredValue, _ b: StoredValue, _ options: QueryStringOptions = []) -> Int? {
        switch (a, b) {
        case (.string(let x), .string(let y)): return stringOrder(x, y, options)
        case (.url(let x), .url(let y)): return stringOrder(x.absoluteString, y.absoluteString, options)
        case (.date(let x), .date(let y)): return x < y ? -1 : x == y ? 0 : 1
        case (.uuid(let x), .uuid(let y)): return bytesOrder(withUnsafeBytes(of: x.uuid) { Array($0) }, withUnsafeBytes(of: y.uuid) { Array($0) })
        case (.data(let x), .data(let y)): return bytesOrder(Array(x), Array(y))
        case (.reference(let x), .reference(let y)): return x < y ? -1 : x == y ? 0 : 1
        default: return numericOrder(a, b)
        }
    }

    /// Numeric comparison across number kinds; nil unless both are numbers (and not NaN).
    static func numericOrder(_ a: StoredValue, _ b: StoredValue) -> Int? {
        if case .int(let x) = a, case .int(let y) = b { return x < y ? -1 : x == y ? 0 : 1 }
        guard let x = number(a), let y = number(b), !x.isNaN, !y.isNaN else { return nil }
        return x < y ? -1 : x == y ? 0 : 1
    }

    /// A number kind as a Double (Bool as 0 or 1); nil for other kinds.
    static func number(_ v: StoredValue) -> Double? {
        switch v {
        case .bool(let b): b ? 1 : 0
        case .int(let i): Double(i)
        case .double(let d): d
        case .float(let f): Double(f)
        case .decimal(let d): NSDecimalNumber(decimal: d).doubleValue
        default: nil
        }
    }

    // MARK: - Strings

    /// The string as the options compare it: folded for [c] and [d].
    static func folded(_ s: String, _ options: QueryStringOptions) -> String {
        guard options.contains(.caseInsensitive) || options.contains(.diacriticInsensitive) else { return s }
        // ASCII has no diacritics and folds case by one bit: no need for Foundation's folding.
        if s.utf8.allSatisfy({ $0 < 0x80 }) {
            guard options.contains(.caseInsensitive), s.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return s }
            return String(decoding: s.utf8.map(ASCIIBytes.fold), as: UTF8.self)
        }
        var fold: String.CompareOptions = []
        if options.contains(.caseInsensitive) { fold.insert(.caseInsensitive) }
        if options.contains(.diacriticInsensitive) { fold.insert(.diacriticInsensitive) }
        return fold.isEmpty ? s : s.folding(options: fold, locale: nil)
    }

    static func stringsEqual(_ x: String, _ y: String, _ options: QueryStringOptions) -> Bool {
        let (a, b) = (folded(x, options), folded(y, options))
        return options.contains(.normalized) ? a.unicodeScalars.elementsEqual(b.unicodeScalars) : a == b
    }

    static func stringOrder(_ x: String, _ y: String, _ options: QueryStringOptions) -> Int {
        if options.isSuperset(of: .localizedStandard) && !options.contains(.diacriticInsensitive) {
            switch x.localizedStandardCompare(y) {
            case .orderedAscending: return -1
            case .orderedSame: return 0
            case .orderedDescending: return 1
            }
        }
        if options.contains(.localized) || options.contains(.numeric) {
            var compare: String.CompareOptions = []
            if options.contains(.caseInsensitive) { compare.insert(.caseInsensitive) }
            if options.contains(.diacriticInsensitive) { compare.insert(.diacriticInsensitive) }
            if options.contains(.numeric) { compare.insert(.numeric) }
            switch x.compare(y, options: compare, range: nil, locale: options.contains(.localized) ? Locale.current : nil) {
            case .orderedAscending: return -1
            case .orderedSame: return 0
            case .orderedDescending: return 1
            }
        }
        let (a, b) = (folded(x, options), folded(y, options))
        if options.contains(.normalized) {
            return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) ? -1 : a.unicodeScalars.elementsEqual(b.unicodeScalars) ? 0 : 1
        }
        return a < b ? -1 : a == b ? 0 : 1
    }

    /// BEGINSWITH, ENDSWITH, CONTAINS (substring), LIKE and MATCHES on strings.
    static func stringMatch(_ op: QueryOperator, _ x: String, _ pattern: String, _ options: QueryStringOptions,
                            regex: (String) -> NSRegularExpression?) -> Bool {
        if op == .matches {
            guard let r = regex(pattern) else { return false }
            let s = options.contains(.diacriticInsensitive) ? folded(x, [.diacriticInsensitive]) : x
            return r.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) != nil
        }
        let (a, b) = (folded(x, options), folded(pattern, options))
        if options.contains(.normalized) {
            let (s, p) = (Array(a.unicodeScalars), Array(b.unicodeScalars))
            switch op {
            case .beginsWith: return s.starts(with: p)
            case .endsWith: return s.reversed().starts(with: p.reversed())
            case .contains, .in: return p.isEmpty || s.indices.contains { s[$0...].starts(with: p) }
            case .like: return wildcardMatch(s, p, any: "*", one: "?")
            default: return false
            }
        }
        switch op {
        case .beginsWith: return a.hasPrefix(b)
        case .endsWith: return a.hasSuffix(b)
        case .contains, .in: return b.isEmpty || (asciiContains(a, b) ?? a.contains(b))
        case .like: return wildcardMatch(Array(a), Array(b), any: "*", one: "?")
        default: return false
        }
    }

    /// Whether ASCII `text` contains ASCII `needle`, by bytes; nil unless both are ASCII (then
    /// Foundation's search decides, with Unicode equivalence). Byte equality is string equality
    /// for ASCII, and Foundation's `contains` on Linux goes through NSString for every call.
    static func asciiContains(_ text: String, _ needle: String) -> Bool? {
        var text = text, needle = needle
        return text.withUTF8 { t in
            needle.withUTF8 { n -> Bool? in
                guard t.allSatisfy({ $0 > 0 && $0 < 0x80 }), n.allSatisfy({ $0 > 0 && $0 < 0x80 }) else { return nil }
                guard let first = n.first else { return true }
                guard n.count <= t.count else { return false }
                var i = 0
                while i <= t.count - n.count {
                    if t[i] == first {
                        var j = 1
                        while j < n.count && t[i + j] == n[j] { j += 1 }
                        if j == n.count { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }

    /// LIKE: `*` matches any run of elements, `?` exactly one.
    static func wildcardMatch<C: Equatable>(_ s: [C], _ p: [C], any: C, one: C) -> Bool {
        // Iterative matching with backtracking to the last `*` (linear in practice).
        var si = 0, pi = 0
        var star = -1, mark = 0
        while si < s.count {
            if pi < p.count, p[pi] == one || (p[pi] != any && p[pi] == s[si]) {
                si += 1
                pi += 1
            } else if pi < p.count, p[pi] == any {
                star = pi
                mark = si
                pi += 1
            } else if star >= 0 {
                pi = star + 1
                mark += 1
                si = mark
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == any { pi += 1 }
        return pi == p.count
    }

    private static func bytesOrder(_ x: [UInt8], _ y: [UInt8]) -> Int {
        x.lexicographicallyPrecedes(y) ? -1 : x == y ? 0 : 1
    }
}
