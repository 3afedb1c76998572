// VariableBindings: the values `substituting` puts for a predicate's `$name` variables — by
// name (`withSubstitutionVariables`), or a parsed format's arguments by position, its `%@ %d %f`
// placeholders being the variables `%0`, `%1`, … (PredicateParser's templates).
//
// Invariant: a placeholder name is "%" and decimal digits, and only such a name finds a value
// among `placeholders`; no `$name` a format or a SUBQUERY can write starts with "%".

/// What a substitution binds each variable to.
enum VariableBindings {
    case named([String: QueryExpression])
    /// Placeholder `%i`'s value is element `i` (an array, where a dictionary made for every
    /// fetch of a format was a tenth of its substitution).
    case placeholders([QueryExpression])

    /// The value bound to `name`, if any.
    func value(for name: String) -> QueryExpression? {
        switch self {
        case .named(let values):
            return values[name]
        case .placeholders(let values):
            guard let i = Self.placeholderIndex(name), i < values.count else { return nil }
            return values[i]
        }
    }

    /// The variable name of a template's `i`th placeholder (`%0`, `%1`, …): the first few
    /// made once, not formatted anew for every parse.
    static func placeholderName(_ i: Int) -> String {
        i < placeholderNames.count ? placeholderNames[i] : "%\(i)"
    }
    private static let placeholderNames = (0..<8).map { "%\($0)" }

    /// `i` for the name `placeholderName(i)`; nil for any other name.
    static func placeholderIndex(_ name: String) -> Int? {
        var bytes = name.utf8.makeIterator()
        guard bytes.next() == UInt8(ascii: "%") else { return nil }
        var index = 0, digits = 0
        while let byte = bytes.next() {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9"), digits < 9 else { return nil }
            index = index * 10 + Int(byte - UInt8(ascii: "0"))
            digits += 1
        }
        return digits > 0 ? index : nil
    }
}
