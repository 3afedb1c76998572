// QueryPredicate+Format: making predicates from format strings, binding `$variables`, and
// printing a predicate back in the format-string language (what `explain` and errors show).
//
// Invariant: for a predicate without object references or unprintable values, parsing its
// `description` gives the same predicate back (tested).

import Foundation

extension QueryPredicate: CustomStringConvertible {
    /// Parses an NSPredicate-style format string; `%@ %K %d %f` take `arguments` in order.
    ///
    /// - Throws: ``DocStoreError/Code/invalidPredicate`` saying what was expected and where
    ///   (``DocStoreError/position``), or which argument does not fit.
    public init(format: String, _ arguments: Any?...) throws(DocStoreError) {
        self = try PredicateParser.parse(format, arguments: arguments)
    }

    /// Parses a format string with its arguments in an array.
    public init(format: String, argumentArray: [Any?]) throws(DocStoreError) {
        self = try PredicateParser.parse(format, arguments: argumentArray)
    }

    /// The predicate with each `$name` replaced by `variables[name]`, as NSPredicate's
    /// `withSubstitutionVariables(_:)`. Variables bound by a SUBQUERY stay, and so do names
    /// not in `variables` (an unbound variable is an error when the predicate runs).
    ///
    /// - Throws: ``DocStoreError/Code/invalidPredicate`` for a value that cannot be a query
    ///   value.
    public func withSubstitutionVariables(_ variables: [String: Any?]) throws(DocStoreError) -> QueryPredicate {
        var bound: [String: QueryExpression] = [:]
        for (name, value) in variables {
            guard let e = QueryArgument.expression(value) else {
                throw DocStoreError(.invalidPredicate, "$\(name) cannot be \(String(describing: value)) of type \(type(of: value as Any))")
            }
            bound[name] = e
        }
        return substituting(.named(bound), shadowed: [])
    }

    func substituting(_ bound: VariableBindings, shadowed: Set<String>) -> QueryPredicate {
        switch self {
        case .constant: self
        case .and(let ps): .and(ps.map { $0.substituting(bound, shadowed: shadowed) })
        case .or(let ps): .or(ps.map { $0.substituting(bound, shadowed: shadowed) })
        case .not(let p): .not(p.substituting(bound, shadowed: shadowed))
        case .comparison(let c):
            .comparison(QueryComparison(c.lhs.substituting(bound, shadowed: shadowed), c.op,
                                        c.rhs.substituting(bound, shadowed: shadowed),
                                        quantifier: c.quantifier, options: c.options))
        }
    }

    /// The predicate in the format-string language.
    public var description: String { text(nested: false) }

    func text(nested: Bool) -> String {
        switch self {
        case .constant(let b): return b ? "TRUEPREDICATE" : "FALSEPREDICATE"
        case .and(let ps):
            let s = ps.map { $0.text(nested: true) }.joined(separator: " AND ")
            return nested ? "(\(s))" : s
        case .or(let ps):
            let s = ps.map { $0.text(nested: true) }.joined(separator: " OR ")
            return nested ? "(\(s))" : s
        case .not(let p): return "NOT \(p.text(nested: true))"
        case .comparison(let c):
            var options = ""
            if !c.options.isEmpty {
                options = "["
                if c.options.contains(.caseInsensitive) { options += "c" }
                if c.options.contains(.diacriticInsensitive) { options += "d" }
                if c.options.contains(.normalized) { options += "n" }
                options += "]"
            }
            let quantifier = c.quantifier == .direct ? "" : c.quantifier.rawValue + " "
            return "\(quantifier)\(c.lhs) \(c.op.rawValue)\(options) \(c.rhs)"
        }
    }
}

extension QueryExpression {
    /// Parses an expression in the format-string language — a key path, a constant,
    /// arithmetic, `??`, an aggregate — as NSExpression(format:) does: `views + 1`,
    /// `rating * 2`, `body ?? 'untitled'` (a batch update's computed values).
    ///
    /// - Throws: ``DocStoreError/Code/invalidPredicate`` saying what was expected and where.
    public init(format: String) throws(DocStoreError) {
        self = try PredicateParser.parseExpression(format)
    }
}

extension QueryExpression: CustomStringConvertible {
    func substituting(_ bound: VariableBindings, shadowed: Set<String>) -> QueryExpression {
        switch self {
        case .constant, .evaluatedObject: self
        case .variable(let name): shadowed.contains(name) ? self : bound.value(for: name) ?? self
        case .list(let items): .list(items.map { $0.substituting(bound, shadowed: shadowed) })
        case .keyPath(let base, let names): .keyPath(base.substituting(bound, shadowed: shadowed), names)
        case .aggregate(let op, let base, let names): .aggregate(op, base.substituting(bound, shadowed: shadowed), names)
        case .subquery(let collection, let v, let p):
            .subquery(collection.substituting(bound, shadowed: shadowed), variable: v, p.substituting(bound, shadowed: shadowed.union([v])))
        case .arithmetic(let op, let a, let b): .arithmetic(op, a.substituting(bound, shadowed: shadowed), b.substituting(bound, shadowed: shadowed))
        // A negated number that a substitution makes constant folds, as the parser folds `-3`
        // (so printing it and parsing the text back gives the same tree).
        case .negated(let a):
            switch a.substituting(bound, shadowed: shadowed) {
            case .constant(.int(let v)) where v != Int64.min: .constant(.int(-v))
            case .constant(.double(let v)): .constant(.double(-v))
            case let operand: .negated(operand)
            }
        case .conditional(let p, let a, let b):
            .conditional(p.substituting(bound, shadowed: shadowed), a.substituting(bound, shadowed: shadowed), b.substituting(bound, shadowed: shadowed))
        case .coalesce(let a, let b): .coalesce(a.substituting(bound, shadowed: shadowed), b.substituting(bound, shadowed: shadowed))
        }
    }

    /// The expression in the format-string language.
    public var description: String {
        switch self {
        case .constant(let v): Self.literal(v)
        case .list(let items): "{" + items.map(\.description).joined(separator: ", ") + "}"
        case .evaluatedObject: "SELF"
        case .variable(let name): "$" + name
        case .keyPath(let base, let names):
            (base == .evaluatedObject ? "" : base.operandText + ".") + names.map(Self.name).joined(separator: ".")
        case .aggregate(let op, let base, let names):
            ([base.operandText, op.rawValue] + names.map(Self.name)).joined(separator: ".")
        case .subquery(let collection, let v, let p): "SUBQUERY(\(collection), $\(v), \(p))"
        case .arithmetic(let op, let a, let b):
            // Left-associative: parentheses only where precedence needs them, so a long chain
            // prints flat and reads back without nesting (FuzzPredicate found `a - b - …` of
            // over 100 terms printing as 100 nested parentheses, past the parser's depth limit).
            (a.arithmeticPrecedence.map { $0 < op.precedence } == true ? "(\(a))" : a.description)
                + " \(op.rawValue) "
                + (b.arithmeticPrecedence.map { $0 <= op.precedence } == true ? "(\(b))" : b.description)
        case .negated(let a): a.arithmeticPrecedence == nil ? "-\(a)" : "-(\(a))"
        case .conditional(let p, let a, let b): "(\(p) ? \(a) : \(b))"
        case .coalesce(let a, let b): "(\(a) ?? \(b))"
        }
    }

    /// The precedence of a binary arithmetic expression (nil for anything else).
    var arithmeticPrecedence: Int? {
        if case .arithmetic(let op, _, _) = self { return op.precedence }
        return nil
    }

    /// The expression as the base of a key path: in parentheses when it is arithmetic, negated
    /// or a number, which would otherwise read back differently (`(a - b).y`, `(-x).y`, `(5).y`).
    var operandText: String {
        switch self {
        case .arithmetic, .negated, .constant(.int), .constant(.double), .constant(.float), .constant(.decimal): "(\(description))"
        default: description
        }
    }

    /// A property name as the lexer reads it back: `#` before a keyword or a name that does not
    /// start with a letter or `_`.
    private static func name(_ n: String) -> String {
        if n == QueryExpression.entitiesKey { return n }
        let plain = n.first.map { $0.isLetter || $0 == "_" } ?? false
        return plain && !PredicateParser.reserved.contains(n.uppercased()) ? n : "#" + n
    }

    static func literal(_ v: StoredValue) -> String {
        switch v {
        case .null: "nil"
        case .bool(let b): b ? "YES" : "NO"
        case .int(let i): "\(i)"
        case .double(let d): "\(d)"
        case .float(let f): "\(f)"
        case .decimal(let d): "\(d)"
        case .string(let s): quoted(s)
        case .date(let d): "CAST(\(d.timeIntervalSinceReferenceDate), \"NSDate\")"
        case .uuid(let u): "CAST(\(quoted(u.uuidString)), \"UUID\")"
        case .url(let u): quoted(u.absoluteString)
        case .data(let d): "<\(d.count) bytes>"
        case .document(let d): quoted(String(decoding: d, as: UTF8.self))
        case .reference(let key): "<object \(PrimaryKey.entity(of: key))/\(key & PrimaryKey.sequenceMask)>"
        }
    }

    private static func quoted(_ s: String) -> String {
        var out = "\""
        for c in s.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            default: out.unicodeScalars.append(c)
            }
        }
        return out + "\""
    }
}
