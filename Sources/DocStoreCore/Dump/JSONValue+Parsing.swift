// JSONValue+Parsing: reads JSON text (RFC 8259) into a JSONValue by hand, without Foundation —
// for the catalog, which every open decodes: in a new process JSONSerialization's Any-typed
// values and the casts out of them were a fifth of opening a store and fetching one object
// (their first-use runtime type lookups, not the parsing itself).
//
// Invariants:
// - Accepts exactly RFC 8259 JSON: one value, surrounded by optional whitespace; strings must be
//   valid UTF-8 with no unescaped control characters; `\u` escapes pair surrogates or fail.
// - A number without a fraction or an exponent that fits in Int64 is `.int`; every other
//   number is `.double` (Swift's correctly rounded parse). Document paths keep JSONDecoder,
//   whose number rules the index keys of documents were written with.
// - Nesting deeper than `maximumDepth` is refused, so no input can exhaust the stack.
// - In an object a repeated key keeps its last value.

extension JSONValue {
    /// How deeply arrays and objects may nest.
    static let maximumDepth = 256

    /// Why a text is not JSON, and where.
    struct ParseError: Error, CustomStringConvertible {
        let offset: Int
        let reason: String
        var description: String { "not JSON at byte \(offset): \(reason)" }
    }

    /// The value the JSON text `bytes` holds.
    static func parse(_ bytes: [UInt8]) throws(ParseError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buffer) throws(ParseError) -> JSONValue in
            var parser = JSONParser(buffer)
            let value = try parser.value(depth: 0)
            parser.skipWhitespace()
            guard parser.at == buffer.count else { throw parser.failure("text after the value") }
            return value
        }
    }

    /// The member named `key` of an object; nil for another kind of value or a missing key.
    subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }

    /// An integer, or a double with an integral value that fits.
    var intValue: Int? {
        switch self {
        case .int(let v): Int(exactly: v)
        case .double(let d): Int(exactly: d)
        default: nil
        }
    }

    /// Any number, as a Double.
    var doubleValue: Double? {
        switch self {
        case .int(let v): Double(v)
        case .double(let d): d
        default: nil
        }
    }
}

/// A recursive-descent reader over one JSON text (JSONValue.parse).
private struct JSONParser {
    let bytes: UnsafeBufferPointer<UInt8>
    var at = 0

    init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

    func failure(_ reason: String) -> JSONValue.ParseError { JSONValue.ParseError(offset: at, reason: reason) }

    mutating func skipWhitespace() {
        while at < bytes.count, bytes[at] == 0x20 || bytes[at] == 0x0A || bytes[at] == 0x0D || bytes[at] == 0x09 { at += 1 }
    }

    mutating func value(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        skipWhitespace()
        guard at < bytes.count else { throw failure("the text ends where a value should be") }
        switch bytes[at] {
        case UInt8(ascii: "{"): return try object(depth: depth + 1)
        case UInt8(ascii: "["): return try array(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected byte 0x\(String(bytes[at], radix: 16))")
        }
    }

    private mutating func literal(_ word: StaticString) throws(JSONValue.ParseError) {
        let n = word.utf8CodeUnitCount
        guard at + n <= bytes.count else { throw failure("expected \(word)") }
        for i in 0..<n where bytes[at + i] != word.utf8Start[i] { throw failure("expected \(word)") }
        at += n
    }

    private mutating func object(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        guard depth <= JSONValue.maximumDepth else { throw failure("nested deeper than \(JSONValue.maximumDepth)") }
        at += 1
        var members: [String: JSONValue] = [:]
        skipWhitespace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "}") { at += 1; return .object(members) }
        while true {
            skipWhitespace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: "\"") else { throw failure("expected a member name") }
            let key = try string()
            skipWhitespace()
            guard at < bytes.count, bytes[at] == UInt8(ascii: ":") else { throw failure("expected \":\"") }
            at += 1
            members[key] = try value(depth: depth)
            skipWhitespace()
            guard at < bytes.count else { throw failure("the object is not closed") }
            if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
            guard bytes[at] == UInt8(ascii: "}") else { throw failure("expected \",\" or \"}\"") }
            at += 1
            return .object(members)
        }
    }

    private mutating func array(depth: Int) throws(JSONValue.ParseError) -> JSONValue {
        guard depth <= JSONValue.maximumDepth else { throw failure("nested deeper than \(JSONValue.maximumDepth)") }
        at += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if at < bytes.count, bytes[at] == UInt8(ascii: "]") { at += 1; return .array(items) }
        while true {
            items.append(try value(depth: depth))
            skipWhitespace()
            guard at < bytes.count else { throw failure("the array is not closed") }
            if bytes[at] == UInt8(ascii: ",") { at += 1; continue }
            guard bytes[at] == UInt8(ascii: "]") else { throw failure("expected \",\" or \"]\"") }
            at += 1
            return .array(items)
        }
    }

    /// A string, from its opening quote (`at`) to past its closing one.
    private mutating func string() throws(JSONValue.ParseError) -> String {
        at += 1
        let start = at
        // The common case: no escapes, so the bytes are the string's.
        while at < bytes.count, bytes[at] != UInt8(ascii: "\""), bytes[at] != UInt8(ascii: "\\"), bytes[at] >= 0x20 { at += 1 }
        guard at < bytes.count else { throw failure("the string is not closed") }
        if bytes[at] == UInt8(ascii: "\"") {
            defer { at += 1 }
            return try utf8(UnsafeBufferPointer(rebasing: bytes[start..<at]))
        }
        var out = Array(bytes[start..<at])
        while true {
            guard at < bytes.count else { throw failure("the string is not closed") }
            let byte = bytes[at]
            switch byte {
            case UInt8(ascii: "\""):
                at += 1
                return try out.withUnsafeBufferPointer { (b) throws(JSONValue.ParseError) -> String in try utf8(b) }
            case UInt8(ascii: "\\"):
                at += 1
                guard at < bytes.count else { throw failure("the string is not closed") }
                let escape = bytes[at]
                at += 1
                switch escape {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"): append(try unicodeEscape(), to: &out)
                default: throw failure("unknown escape \\\(Character(Unicode.Scalar(escape)))")
                }
            case 0..<0x20:
                throw failure("a control character in a string")
            default:
                out.append(byte)
                at += 1
            }
        }
    }

    private func utf8(_ b: UnsafeBufferPointer<UInt8>) throws(JSONValue.ParseError) -> String {
        guard let s = String(validating: b, as: UTF8.self) else { throw failure("a string is not valid UTF-8") }
        return s
    }

    /// The scalar of a `\uXXXX` escape (`at` is past the `u`), pairing a high surrogate with the
    /// low one that must follow it.
    private mutating func unicodeEscape() throws(JSONValue.ParseError) -> Unicode.Scalar {
        let first = try hex4()
        if (0xD800..<0xDC00).contains(first) {
            guard at + 2 <= bytes.count, bytes[at] == UInt8(ascii: "\\"), bytes[at + 1] == UInt8(ascii: "u") else {
                throw failure("a high surrogate without its low one")
            }
            at += 2
            let second = try hex4()
            guard (0xDC00..<0xE000).contains(second),
                  let scalar = Unicode.Scalar(0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)) else {
                throw failure("a high surrogate without its low one")
            }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw failure("a lone low surrogate") }
        return scalar
    }

    private mutating func hex4() throws(JSONValue.ParseError) -> UInt32 {
        guard at + 4 <= bytes.count else { throw failure("a \\u escape needs four hex digits") }
        var v: UInt32 = 0
        for _ in 0..<4 {
            let c = bytes[at]
            let digit: UInt8
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = c - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape needs four hex digits")
            }
            v = v << 4 | UInt32(digit)
            at += 1
        }
        return v
    }

    private func append(_ scalar: Unicode.Scalar, to out: inout [UInt8]) {
        out.append(contentsOf: UTF8.encode(scalar) ?? UTF8.EncodedScalar())
    }

    private mutating func number() throws(JSONValue.ParseError) -> JSONValue {
        let start = at
        func digits() -> Int {
            let from = at
            while at < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[at]) { at += 1 }
            return at - from
        }
        if bytes[at] == UInt8(ascii: "-") { at += 1 }
        let integerStart = at
        let integerDigits = digits()
        guard integerDigits > 0 else { throw failure("a number needs digits") }
        guard bytes[integerStart] != UInt8(ascii: "0") || integerDigits == 1 else { throw failure("a number has a leading zero") }
        var integral = true
        if at < bytes.count, bytes[at] == UInt8(ascii: ".") {
            at += 1
            integral = false
            guard digits() > 0 else { throw failure("a fraction needs digits") }
        }
        if at < bytes.count, bytes[at] == UInt8(ascii: "e") || bytes[at] == UInt8(ascii: "E") {
            at += 1
            integral = false
            if at < bytes.count, bytes[at] == UInt8(ascii: "+") || bytes[at] == UInt8(ascii: "-") { at += 1 }
            guard digits() > 0 else { throw failure("an exponent needs digits") }
        }
        let text = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<at]), as: UTF8.self)
        if integral, let v = Int64(text) { return .int(v) }
        guard let d = Double(text), d.isFinite else { throw failure("the number \(text) is out of range") }
        return .double(d)
    }
}
