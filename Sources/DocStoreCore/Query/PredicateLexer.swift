// PredicateLexer: splits a predicate format string into tokens, each with the character offset
// it starts at (for error positions).
//
// Tokens: identifiers (letters, digits, `_`; `#name` escapes a reserved word), strings in single
// or double quotes with backslash escapes (\n \t \\ \' \" \uXXXX), numbers (integers, decimals,
// exponents, 0x hex), variables (`$name`), format arguments (`%@ %K %d %i %ld %lld %u %f %lf`),
// `@count`-style collection operators, and punctuation. Keywords are identifiers; the parser
// matches them case-insensitively.

enum PredicateToken: Equatable {
    case identifier(String)
    /// `#name`: an identifier even if it spells a keyword.
    case escapedIdentifier(String)
    case string(String)
    case integer(Int64)
    case double(Double)
    case variable(String)
    /// `%@`, `%K`, `%d`, `%f` (the letter after %, normalized: d for every integer, f for doubles).
    case argument(Character)
    /// `@count`, `@sum`, …
    case collectionOperator(String)
    case punctuation(String)
    case end

    var text: String {
        switch self {
        case .identifier(let s): s
        case .escapedIdentifier(let s): "#\(s)"
        case .string(let s): String(reflecting: s)
        case .integer(let v): "\(v)"
        case .double(let v): "\(v)"
        case .variable(let s): "$\(s)"
        case .argument(let c): "%\(c)"
        case .collectionOperator(let s): "@\(s)"
        case .punctuation(let s): s
        case .end: "the end"
        }
    }
}

struct PredicateLexer {
    /// The text as Unicode scalars, not Characters: a quote or a backslash escape followed by a
    /// combining mark (`"\u{301}`) would otherwise be one Character and hide the quote or
    /// escape. Positions count scalars.
    private let chars: [Unicode.Scalar]
    private var i = 0

    init(_ format: String) { chars = Array(format.unicodeScalars) }

    static func error(_ message: String, at position: Int) -> DocStoreError {
        DocStoreError(.invalidPredicate, "\(message) at character \(position)", position: position)
    }

    /// Every token, then `.end`.
    static func tokens(_ format: String) throws(DocStoreError) -> [(token: PredicateToken, at: Int)] {
        var lexer = PredicateLexer(format)
        var out: [(PredicateToken, Int)] = []
        while true {
            let (token, at) = try lexer.next()
            out.append((token, at))
            if token == .end { return out }
        }
    }

    private static let punctuation: [String] = [
        "==", "!=", "<>", "<=", "=<", ">=", "=>", "&&", "||",
        "=", "<", ">", "!", "(", ")", "{", "}", "[", "]", ",", ".", "+", "-", "*", "/", "?", ":",
    ]

    private mutating func next() throws(DocStoreError) -> (PredicateToken, Int) {
        while i < chars.count, chars[i].isWhitespace { i += 1 }
        let start = i
        guard i < chars.count else { return (.end, start) }
        let c = chars[i]
        if c == "'" || c == "\"" { return (.string(try string(quote: c)), start) }
        if c.isNumber, c.isASCII { return (try number(), start) }
        if c == "$" || c == "#" || c == "@" {
            i += 1
            let name = identifier()
            guard !name.isEmpty else { throw Self.error("expected a name after \(c)", at: start) }
            switch c {
            case "$": return (.variable(name), start)
            case "#": return (.escapedIdentifier(name), start)
            default: return (.collectionOperator(name), start)
            }
        }
        if c == "%" { return (.argument(try argument()), start) }
        if c.isLetter || c == "_" { return (.identifier(identifier()), start) }
        for p in Self.punctuation where matches(p) {
            i += p.count
            return (.punctuation(p), start)
        }
        throw Self.error("unexpected character \(String(reflecting: String(c)))", at: start)
    }

    private func matches(_ p: String) -> Bool {
        var j = i
        for ch in p.unicodeScalars {
            guard j < chars.count, chars[j] == ch else { return false }
            j += 1
        }
        return true
    }

    private mutating func identifier() -> String {
        var s = ""
        while i < chars.count, chars[i].isLetter || chars[i].isNumber || chars[i] == "_" {
            s.unicodeScalars.append(chars[i])
            i += 1
        }
        return s
    }

    private mutating func string(quote: Unicode.Scalar) throws(DocStoreError) -> String {
        let start = i
        i += 1
        var s = ""
        while i < chars.count {
            let c = chars[i]
            i += 1
            if c == quote { return s }
            guard c == "\\" else {
                s.unicodeScalars.append(c)
                continue
            }
            guard i < chars.count else { break }
            let e = chars[i]
            i += 1
            switch e {
            case "n": s.append("\n")
            case "t": s.append("\t")
            case "r": s.append("\r")
            case "0": s.append("\0")
            case "u":
                guard i + 4 <= chars.count, let v = UInt32(String(String.UnicodeScalarView(chars[i..<(i + 4)])), radix: 16),
                      let scalar = Unicode.Scalar(v) else {
                    throw Self.error("expected four hex digits after \\u", at: i - 2)
                }
                s.unicodeScalars.append(scalar)
                i += 4
            default: s.unicodeScalars.append(e)
            }
        }
        throw Self.error("unterminated string (no closing \(quote))", at: start)
    }

    private mutating func number() throws(DocStoreError) -> PredicateToken {
        let start = i
        if chars[i] == "0", i + 1 < chars.count, chars[i + 1] == "x" || chars[i + 1] == "X" {
            i += 2
            var digits = ""
            while i < chars.count, chars[i].properties.isASCIIHexDigit { digits.unicodeScalars.append(chars[i]); i += 1 }
            guard let v = Int64(digits, radix: 16) else { throw Self.error("expected hex digits", at: start) }
            return .integer(v)
        }
        var text = ""
        var isDouble = false
        while i < chars.count, chars[i].isASCII, chars[i].isNumber { text.unicodeScalars.append(chars[i]); i += 1 }
        if i + 1 < chars.count, chars[i] == ".", chars[i + 1].isASCII, chars[i + 1].isNumber {
            isDouble = true
            text.append(".")
            i += 1
            while i < chars.count, chars[i].isASCII, chars[i].isNumber { text.unicodeScalars.append(chars[i]); i += 1 }
        }
        if i < chars.count, chars[i] == "e" || chars[i] == "E" {
            var j = i + 1
            var exponent = "e"
            if j < chars.count, chars[j] == "+" || chars[j] == "-" { exponent.unicodeScalars.append(chars[j]); j += 1 }
            if j < chars.count, chars[j].isASCII, chars[j].isNumber {
                while j < chars.count, chars[j].isASCII, chars[j].isNumber { exponent.unicodeScalars.append(chars[j]); j += 1 }
                text += exponent
                isDouble = true
                i = j
            }
        }
        if i < chars.count, chars[i].isLetter || chars[i] == "_" {
            throw Self.error("a number runs into \(String(reflecting: String(chars[i])))", at: i)
        }
        if !isDouble, let v = Int64(text) { return .integer(v) }
        guard let v = Double(text), v.isFinite else { throw Self.error("\(text) is not a number in range", at: start) }
        return .double(v)
    }

    private mutating func argument() throws(DocStoreError) -> Character {
        let start = i
        i += 1
        var spec = ""
        while i < chars.count, chars[i].isLetter || chars[i] == "@" {
            spec.unicodeScalars.append(chars[i])
            i += 1
            if spec == "@" || spec == "K" { break }
            if ["d", "i", "u", "f", "ld", "lld", "lu", "llu", "lf"].contains(spec),
               i >= chars.count || !chars[i].isLetter { break }
        }
        switch spec {
        case "@": return "@"
        case "K": return "K"
        case "d", "i", "u", "ld", "lld", "lu", "llu": return "d"
        case "f", "lf": return "f"
        default:
            throw Self.error("unknown format argument %\(spec) (use %@, %K, %d or %f)", at: start)
        }
    }
}

private extension Unicode.Scalar {
    var isWhitespace: Bool { properties.isWhitespace }
    var isNumber: Bool { properties.numericType != nil }
    /// Letters, and the marks that combine with them (a decomposed `é` in a name).
    var isLetter: Bool {
        switch properties.generalCategory {
        case .nonspacingMark, .spacingMark, .enclosingMark: true
        default: properties.isAlphabetic
        }
    }
}
