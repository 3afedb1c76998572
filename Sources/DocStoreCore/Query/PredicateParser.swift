// PredicateParser: the NSPredicate-style format-string language → QueryPredicate.
//
//   predicate   := or
//   or          := and (("OR" | "||") and)*
//   and         := not (("AND" | "&&") not)*
//   not         := ("NOT" | "!") not | "(" predicate ")" | TRUEPREDICATE | FALSEPREDICATE | comparison
//   comparison  := [ANY | SOME | ALL | NONE] expression operator ["[" c d n "]"] expression
//   operator    := == = != <> < <= =< > >= => BETWEEN IN BEGINSWITH ENDSWITH CONTAINS LIKE MATCHES
//   expression  := term (("+" | "-") term)*        (left-associative)
//   term        := unary (("*" | "/") unary)*
//   unary       := "-" unary | postfix
//   postfix     := primary ("." (name | @count | @sum | @avg | @min | @max))*
//   primary     := name | SELF | $variable | literal | "{" expression, … "}" | "(" expression ")"
//                | %@ | %K | %d | %f | SUBQUERY "(" expression "," $variable "," predicate ")"
//                | CAST "(" expression "," type ")"       (type: "NSDate", "Date", "UUID", "NSUUID")
//   literal     := 'string' | "string" | number | YES | NO | TRUE | FALSE | nil | NULL
//
// Keywords are case-insensitive; `#name` makes a keyword a property name. A parenthesis opens a
// predicate when what it encloses parses as one and is not followed by an operator; otherwise it
// groups an expression (`(a + b) > 3`). Errors say what was expected, and where.

import Foundation
internal import DocStoreEngine

struct PredicateParser {
    private let tokens: [(token: PredicateToken, at: Int)]
    private var index = 0
    private var arguments: [Any?]
    private var nextArgument = 0
    /// Template mode: `%@ %d %f` become placeholders (`$%0`, `$%1`, …) recorded here.
    private var placeholders: [(kind: Character, at: Int)]?
    /// Token positions where a parenthesized predicate was tried and failed (the parse then
    /// reads the parenthesis as an expression): each is tried once, so nested parentheses cost
    /// linear time, not a retry per level (FuzzPredicate found `((((…` taking seconds).
    private var failedParentheses: [Int: DocStoreError] = [:]
    /// How deeply parentheses, subqueries and lists nest here; past `maxDepth` the format is
    /// refused rather than recursing without bound.
    private var depth = 0
    static let maxDepth = 100
    /// Parenthesized predicates started (see `parenthesizedAttempts`).
    private var attempts = 0
    /// Set when the format has a `%K`, whose argument changes the predicate's shape.
    private var usesKeyPathArgument = false
    /// Template mode: placeholders that are the bounds of a BETWEEN, with the operator's
    /// position, so a bound argument that is not a pair is refused there.
    private var betweenPlaceholders: [String: Int] = [:]

    /// A parsed format whose `%@ %d %f` arguments are placeholders, filled per call.
    struct Template: Sendable {
        let predicate: QueryPredicate
        let arguments: [(kind: Character, at: Int)]
        /// BETWEEN bounds given as one argument: placeholder name → the operator's position.
        let betweenBounds: [String: Int]
        /// The position of the format's end (where a surplus of arguments is reported).
        let end: Int
    }

    /// Parsed formats by text (bounded), so a format used again costs only its substitution.
    private static let templates = Locked<[String: Template]>([:])
    private static let templateLimit = 512

    /// Parses `format`, taking `%` arguments from `arguments` in order.
    static func parse(_ format: String, arguments: [Any?]) throws(DocStoreError) -> QueryPredicate {
        if let template = templates.withLock({ $0[format] }) { return try fill(template, arguments) }
        var parser = PredicateParser(tokens: try PredicateLexer.tokens(format), arguments: [])
        parser.placeholders = []
        let predicate = try parser.predicate()
        guard parser.current == .end else { throw parser.expected("AND, OR or the end") }
        if parser.usesKeyPathArgument { return try parseDirectly(format, arguments: arguments) }
        let template = Template(predicate: predicate, arguments: parser.placeholders ?? [],
                                betweenBounds: parser.betweenPlaceholders, end: parser.position)
        keep(template, for: format, in: templates)
        return try fill(template, arguments)
    }

    /// How many times parsing `format` started a parenthesized predicate: at most once per
    /// parenthesis (tests check that nesting costs linear work).
    static func parenthesizedAttempts(_ format: String) throws(DocStoreError) -> Int {
        var parser = PredicateParser(tokens: try PredicateLexer.tokens(format), arguments: [])
        parser.placeholders = []
        _ = try? parser.predicate()
        return parser.attempts
    }

    /// Parses with the arguments in place (formats with `%K`).
    private static func parseDirectly(_ format: String, arguments: [Any?]) throws(DocStoreError) -> QueryPredicate {
        var parser = PredicateParser(tokens: try PredicateLexer.tokens(format), arguments: arguments)
        let predicate = try parser.predicate()
        guard parser.current == .end else { throw parser.expected("AND, OR or the end") }
        guard parser.nextArgument == arguments.count else {
            throw argumentCountError(given: arguments.count, used: parser.nextArgument, end: parser.position)
        }
        return predicate
    }

    /// More arguments than the format uses: reported at the format's end.
    private static func argumentCountError(given: Int, used: Int, end: Int) -> DocStoreError {
        PredicateLexer.error("\(given) argument\(given == 1 ? " was" : "s were") given, but the format uses \(used), ending", at: end)
    }

    /// The template with its placeholders replaced by `arguments`, converted as each `%` asks.
    private static func fill(_ template: Template, _ arguments: [Any?]) throws(DocStoreError) -> QueryPredicate {
        if arguments.count < template.arguments.count {
            let missing = template.arguments[arguments.count]
            throw PredicateLexer.error("the format needs argument \(arguments.count + 1), but only \(arguments.count) \(arguments.count == 1 ? "was" : "were") given", at: missing.at)
        }
        guard arguments.count == template.arguments.count else {
            throw argumentCountError(given: arguments.count, used: template.arguments.count, end: template.end)
        }
        guard !arguments.isEmpty else { return template.predicate }
        var values: [QueryExpression] = []
        values.reserveCapacity(arguments.count)
        for (i, slot) in template.arguments.enumerated() {
            values.append(try convert(arguments[i], as: slot.kind, at: slot.at))
        }
        let bound = VariableBindings.placeholders(values)
        // `x BETWEEN %@` takes a pair: checked once the argument is in.
        for (name, at) in template.betweenBounds {
            guard let value = bound.value(for: name) else { continue }
            if case .list(let bounds) = value, bounds.count == 2 { continue }
            throw PredicateLexer.error("BETWEEN takes two bounds, as {low, high} or an array of two; it was given \(value)", at: at)
        }
        return template.predicate.substituting(bound, shadowed: [])
    }


    /// Parsed expressions by text (bounded, as the templates): a fetch plans its sort keys every
    /// time, and lexing "createdAt" was a tenth of fetching a first page of 20 objects.
    private static let expressions = Locked<[String: QueryExpression]>([:])

    /// Parses an expression alone (a sort key, a key path with operators).
    static func parseExpression(_ format: String) throws(DocStoreError) -> QueryExpression {
        if let known = expressions.withLock({ $0[format] }) { return known }
        var parser = PredicateParser(tokens: try PredicateLexer.tokens(format), arguments: [])
        let e = try parser.expression()
        guard parser.current == .end else { throw parser.expected("the end") }
        keep(e, for: format, in: expressions)
        return e
    }

    /// Keeps a parse under its text in one of the bounded caches (emptied when full: an app
    /// uses a few hundred formats at most, so this happens only to one that makes them up).
    private static func keep<Parsed: Sendable>(_ parsed: Parsed, for text: String, in cache: Locked<[String: Parsed]>) {
        cache.withLock { c in
            if c.count >= templateLimit { c.removeAll(keepingCapacity: true) }
            c[text] = parsed
        }
    }

    private init(tokens: [(token: PredicateToken, at: Int)], arguments: [Any?]) {
        self.tokens = tokens
        self.arguments = arguments
    }

    // MARK: - Tokens

    private var current: PredicateToken { tokens[index].token }
    private var position: Int { tokens[index].at }

    private mutating func advance() { if index < tokens.count - 1 { index += 1 } }

    private func isKeyword(_ word: String) -> Bool {
        if case .identifier(let s) = current { return s.uppercased() == word }
        return false
    }

    private func isPunctuation(_ p: String) -> Bool { current == .punctuation(p) }

    private mutating func take(_ p: String) -> Bool {
        guard isPunctuation(p) else { return false }
        advance()
        return true
    }

    private mutating func takeKeyword(_ word: String) -> Bool {
        guard isKeyword(word) else { return false }
        advance()
        return true
    }

    private mutating func expect(_ p: String) throws(DocStoreError) {
        guard take(p) else { throw expected("\"\(p)\"") }
    }

    private func expected(_ what: String) -> DocStoreError {
        PredicateLexer.error("expected \(what), found \(current.text)", at: position)
    }

    /// The keywords: a property of one of these names is written `#name`.
    static let reserved: Set<String> = [
        "AND", "OR", "NOT", "ANY", "SOME", "ALL", "NONE", "IN", "BETWEEN", "BEGINSWITH", "ENDSWITH",
        "CONTAINS", "LIKE", "MATCHES", "TRUEPREDICATE", "FALSEPREDICATE", "SELF", "NIL", "NULL",
        "YES", "NO", "TRUE", "FALSE", "SUBQUERY", "CAST", "DIV", "MOD",
    ]

    // MARK: - Predicates

    private mutating func predicate() throws(DocStoreError) -> QueryPredicate {
        var terms = [try conjunction()]
        while takeKeyword("OR") || take("||") { terms.append(try conjunction()) }
        return terms.count == 1 ? terms[0] : .or(terms)
    }

    private mutating func conjunction() throws(DocStoreError) -> QueryPredicate {
        var terms = [try negation()]
        while takeKeyword("AND") || take("&&") { terms.append(try negation()) }
        return terms.count == 1 ? terms[0] : .and(terms)
    }

    private mutating func negation() throws(DocStoreError) -> QueryPredicate {
        if takeKeyword("NOT") || take("!") {
            try enter()
            defer { depth -= 1 }
            return .not(try negation())
        }
        if takeKeyword("TRUEPREDICATE") { return .constant(true) }
        if takeKeyword("FALSEPREDICATE") { return .constant(false) }
        guard isPunctuation("(") else { return try comparison() }
        // A parenthesized predicate, unless it turns out to be an expression (`(a + b) > 3`).
        // If neither reading parses, the error that got further is the one to report.
        let saved = (index, nextArgument, placeholders?.count ?? 0)
        var first: DocStoreError
        if let known = failedParentheses[saved.0] {
            first = known
        } else {
            advance()
            attempts += 1
            do {
                try enter()
                defer { depth -= 1 }
                let inner = try predicate()
                if take(")"), !startsOperator() { return inner }
                first = expected("\")\"")
            } catch {
                first = error
            }
            failedParentheses[saved.0] = first
            (index, nextArgument) = (saved.0, saved.1)
            if let recorded = placeholders { placeholders = Array(recorded.prefix(saved.2)) }
        }
        do {
            return try comparison()
        } catch {
            throw (error.position ?? 0) >= (first.position ?? 0) ? error : first
        }
    }

    /// One level deeper; throws past `maxDepth`.
    private mutating func enter() throws(DocStoreError) {
        guard depth < Self.maxDepth else {
            throw PredicateLexer.error("the format nests more than \(Self.maxDepth) levels deep", at: position)
        }
        depth += 1
    }

    private func startsOperator() -> Bool {
        if case .punctuation(let p) = current {
            return ["==", "=", "!=", "<>", "<", "<=", "=<", ">", ">=", "=>", "+", "-", "*", "/", "."].contains(p)
        }
        return ["BETWEEN", "IN", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES"].contains { isKeyword($0) }
    }

    private mutating func comparison() throws(DocStoreError) -> QueryPredicate {
        var quantifier = QueryQuantifier.direct
        if takeKeyword("ANY") || takeKeyword("SOME") { quantifier = .any }
        else if takeKeyword("ALL") { quantifier = .all }
        else if takeKeyword("NONE") { quantifier = .none }
        let lhs = try expression()
        let opPosition = position
        let op = try comparisonOperator()
        let options = try stringOptions()
        let rhs = try expression()
        if op == .between {
            // Bounds given in the format must be two; a variable is checked when it is bound.
            switch rhs {
            case .list(let bounds) where bounds.count == 2: break
            case .variable(let name):
                if placeholders != nil, name.hasPrefix("%") { betweenPlaceholders[name] = opPosition }
            default: throw PredicateLexer.error("BETWEEN takes two bounds, as {low, high}", at: opPosition)
            }
        }
        return .comparison(QueryComparison(lhs, op, rhs, quantifier: quantifier, options: options))
    }

    private mutating func comparisonOperator() throws(DocStoreError) -> QueryOperator {
        if case .punctuation(let p) = current {
            let op: QueryOperator? = switch p {
            case "==", "=": .equal
            case "!=", "<>": .notEqual
            case "<": .less
            case "<=", "=<": .lessOrEqual
            case ">": .greater
            case ">=", "=>": .greaterOrEqual
            default: nil
            }
            if let op {
                advance()
                return op
            }
        }
        for op in [QueryOperator.between, .in, .beginsWith, .endsWith, .contains, .like, .matches] where takeKeyword(op.rawValue) {
            return op
        }
        throw expected("a comparison operator (==, !=, <, <=, >, >=, BETWEEN, IN, BEGINSWITH, ENDSWITH, CONTAINS, LIKE, MATCHES)")
    }

    private mutating func stringOptions() throws(DocStoreError) -> QueryStringOptions {
        guard isPunctuation("[") else { return [] }
        advance()
        guard case .identifier(let letters) = current else { throw expected("c, d or n") }
        var options: QueryStringOptions = []
        for letter in letters.lowercased() {
            switch letter {
            case "c": options.insert(.caseInsensitive)
            case "d": options.insert(.diacriticInsensitive)
            case "n": options.insert(.normalized)
            default: throw PredicateLexer.error("unknown comparison option \(letter) (use c, d or n)", at: position)
            }
        }
        advance()
        try expect("]")
        return options
    }

    // MARK: - Expressions

    /// Binary operators by precedence, loosest first (all left-associative).
    private static let arithmeticLevels: [[(String, QueryArithmetic)]] = [
        [("+", .add), ("-", .subtract)],
        [("*", .multiply), ("/", .divide), ("DIV", .integerDivide), ("MOD", .remainder)],
    ]

    private mutating func expression() throws(DocStoreError) -> QueryExpression {
        try arithmetic(level: 0)
    }

    private mutating func arithmetic(level: Int) throws(DocStoreError) -> QueryExpression {
        guard level < Self.arithmeticLevels.count else { return try unary() }
        var e = try arithmetic(level: level + 1)
        while let op = Self.arithmeticLevels[level].first(where: { isPunctuation($0.0) || isKeyword($0.0) })?.1 {
            advance()
            e = .arithmetic(op, e, try arithmetic(level: level + 1))
        }
        return e
    }

    private mutating func unary() throws(DocStoreError) -> QueryExpression {
        if take("-") {
            try enter()
            defer { depth -= 1 }
            let operand = try unary()
            switch operand {
            case .constant(.int(let v)) where v != Int64.min: return .constant(.int(-v))
            case .constant(.double(let v)): return .constant(.double(-v))
            default: return .negated(operand)
            }
        }
        return try postfix()
    }

    private mutating func postfix() throws(DocStoreError) -> QueryExpression {
        var e = try primary()
        while isPunctuation(".") {
            advance()
            switch current {
            case .identifier(let name) where !Self.reserved.contains(name.uppercased()):
                advance()
                e = appending(name, to: e)
            case .escapedIdentifier(let name):
                advance()
                e = appending(name, to: e)
            case .collectionOperator(let name) where "@" + name == QueryExpression.entitiesKey:
                advance()
                e = appending(QueryExpression.entitiesKey, to: e)
            case .collectionOperator(let name):
                let at = position
                advance()
                guard let op = QueryAggregate(rawValue: "@" + name.lowercased()) else {
                    throw PredicateLexer.error("unknown collection operator @\(name) (use @count, @sum, @avg, @min or @max)", at: at)
                }
                var path: [String] = []
                if op != .count {
                    try expect(".")
                    path = try keyPathTail()
                }
                e = .aggregate(op, e, path)
            default:
                throw expected("a property name after \".\"")
            }
        }
        return e
    }

    /// `a.b.c` after an aggregate's dot.
    private mutating func keyPathTail() throws(DocStoreError) -> [String] {
        var names: [String] = []
        repeat {
            switch current {
            case .identifier(let n) where !Self.reserved.contains(n.uppercased()): names.append(n)
            case .escapedIdentifier(let n): names.append(n)
            default: throw expected("a property name")
            }
            advance()
        } while take(".")
        return names
    }

    private func appending(_ name: String, to e: QueryExpression) -> QueryExpression {
        if case .keyPath(let base, let names) = e { return .keyPath(base, names + [name]) }
        return .keyPath(e, [name])
    }

    private mutating func primary() throws(DocStoreError) -> QueryExpression {
        let at = position
        switch current {
        case .string(let s):
            advance()
            return .constant(.string(s))
        case .integer(let v):
            advance()
            return .constant(.int(v))
        case .double(let v):
            advance()
            return .constant(.double(v))
        case .variable(let name):
            advance()
            return .variable(name)
        case .escapedIdentifier(let name):
            advance()
            return .keyPath(.evaluatedObject, [name])
        case .collectionOperator(let name) where "@" + name == QueryExpression.entitiesKey:
            advance()
            return .keyPath(.evaluatedObject, [QueryExpression.entitiesKey])
        case .argument(let kind):
            advance()
            return try argument(kind, at: at)
        case .punctuation("{"):
            advance()
            try enter()
            defer { depth -= 1 }
            var items: [QueryExpression] = []
            if !take("}") {
                repeat { items.append(try expression()) } while take(",")
                try expect("}")
            }
            return .list(items)
        case .punctuation("("):
            advance()
            try enter()
            defer { depth -= 1 }
            let e = try expression()
            try expect(")")
            return e
        case .identifier(let word):
            switch word.uppercased() {
            case "SELF": advance(); return .evaluatedObject
            case "NIL", "NULL": advance(); return .constant(.null)
            case "YES", "TRUE": advance(); return .constant(.bool(true))
            case "NO", "FALSE": advance(); return .constant(.bool(false))
            case "SUBQUERY": advance(); return try subquery()
            case "CAST": advance(); return try cast(at: at)
            default:
                if Self.reserved.contains(word.uppercased()) {
                    throw PredicateLexer.error("expected a value or a property name, found the keyword \(word) (write #\(word) for a property of that name)", at: at)
                }
                advance()
                return .keyPath(.evaluatedObject, [word])
            }
        default:
            throw expected("a value or a property name")
        }
    }

    private mutating func subquery() throws(DocStoreError) -> QueryExpression {
        try enter()
        defer { depth -= 1 }
        try expect("(")
        let collection = try expression()
        try expect(",")
        guard case .variable(let name) = current else { throw expected("a $variable") }
        advance()
        try expect(",")
        let p = try predicate()
        try expect(")")
        return .subquery(collection, variable: name, p)
    }

    private mutating func cast(at: Int) throws(DocStoreError) -> QueryExpression {
        try expect("(")
        let valuePosition = position
        let value = try expression()
        try expect(",")
        guard case .string(let type) = current else { throw expected("a type name in quotes (\"NSDate\" or \"UUID\")") }
        advance()
        try expect(")")
        switch (type, value) {
        case ("NSDate", .constant(.int(let v))), ("Date", .constant(.int(let v))):
            return .constant(.date(Date(timeIntervalSinceReferenceDate: Double(v))))
        case ("NSDate", .constant(.double(let v))), ("Date", .constant(.double(let v))):
            return .constant(.date(Date(timeIntervalSinceReferenceDate: v)))
        case ("NSDate", .constant(.string(let s))), ("Date", .constant(.string(let s))):
            guard let date = try? Date(s, strategy: .iso8601) else {
                throw PredicateLexer.error("\(String(reflecting: s)) is not an ISO 8601 date (2026-11-23T10:00:00Z)", at: valuePosition)
            }
            return .constant(.date(date))
        case ("UUID", .constant(.string(let s))), ("NSUUID", .constant(.string(let s))):
            guard let uuid = UUID(uuidString: s) else {
                throw PredicateLexer.error("\(String(reflecting: s)) is not a UUID", at: valuePosition)
            }
            return .constant(.uuid(uuid))
        default:
            throw PredicateLexer.error("CAST takes a number or ISO 8601 string to \"NSDate\", or a string to \"UUID\"", at: at)
        }
    }

    // MARK: - Arguments

    private mutating func argument(_ kind: Character, at: Int) throws(DocStoreError) -> QueryExpression {
        if kind == "K" { usesKeyPathArgument = true }
        if placeholders != nil, kind != "K" {
            placeholders?.append((kind, at))
            return .variable(VariableBindings.placeholderName((placeholders?.count ?? 1) - 1))
        }
        if placeholders != nil { return .variable("%K") }   // parsed again directly (parseDirectly)
        guard nextArgument < arguments.count else {
            throw PredicateLexer.error("the format needs argument \(nextArgument + 1), but only \(arguments.count) \(arguments.count == 1 ? "was" : "were") given", at: at)
        }
        let value = arguments[nextArgument]
        nextArgument += 1
        return try Self.convert(value, as: kind, at: at)
    }

    /// An argument as the expression its `%` asks for.
    private static func convert(_ value: Any?, as kind: Character, at: Int) throws(DocStoreError) -> QueryExpression {
        switch kind {
        case "K":
            guard let path = value as? String, !path.isEmpty else {
                throw PredicateLexer.error("%K takes a key path as a String, not \(String(describing: value))", at: at)
            }
            let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            guard !names.contains(where: \.isEmpty) else {
                throw PredicateLexer.error("%K: \(String(reflecting: path)) is not a key path", at: at)
            }
            return .keyPath(.evaluatedObject, names)
        case "d":
            guard let e = QueryArgument.expression(value), case .constant(.int) = e else {
                throw PredicateLexer.error("%d takes an integer, not \(String(describing: value))", at: at)
            }
            return e
        case "f":
            switch QueryArgument.expression(value) {
            case .constant(.double(let v))?: return .constant(.double(v))
            case .constant(.int(let v))?: return .constant(.double(Double(v)))
            default: throw PredicateLexer.error("%f takes a number, not \(String(describing: value))", at: at)
            }
        default:
            guard let e = QueryArgument.expression(value) else {
                throw PredicateLexer.error("%@ cannot take \(String(describing: value)) of type \(type(of: value as Any)): use a number, String, Date, UUID, URL, Data, Bool, a managed object or object ID, or an array or set of these", at: at)
            }
            return e
        }
    }
}
