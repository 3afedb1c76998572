// QueryPredicate: the one representation every query language compiles to — format strings
// (PredicateParser), Foundation's #Predicate (later) — and that the planner and the evaluator
// run. It is plain data: Sendable, Hashable (so compiled plans can be cached by it), and
// printable back in the format-string language (`description`), which is what `explain` shows.
//
// Semantics follow NSPredicate's, as Core Data's SQLite store runs them:
//   Q1  a key path through a to-many relationship yields the collection of the values reached
//       (flattened through further steps); a comparison with a collection on its left and no
//       quantifier means ANY, as in Core Data's SQL;
//   Q2  ANY of an empty collection is false, ALL and NONE of it are true;
//   Q3  nil equals only nil; an ordering comparison (<, BETWEEN, …) with nil is false;
//   Q4  numbers (integers, doubles, decimals, Bools) compare by value across types; dates
//       compare with dates, strings with strings, objects by identity;
//   Q5  string operators honour [c] (case-insensitive), [d] (diacritic-insensitive) and [n]
//       (no Unicode normalization: compare scalars as given); without [n], canonically
//       equivalent strings are equal (Swift's String equality).

import Foundation

/// A predicate: what a fetch request's objects must satisfy.
///
/// Make one from a format string, as `NSPredicate(format:)`:
///
/// ```swift
/// let recent = try QueryPredicate(format: "title BEGINSWITH[c] %@ AND createdAt > %@", "buy", cutoff)
/// let tagged = try QueryPredicate(format: "ANY tags.name == 'home'")
/// ```
public indirect enum QueryPredicate: Sendable, Hashable {
    /// TRUEPREDICATE or FALSEPREDICATE.
    case constant(Bool)
    case and([QueryPredicate])
    case or([QueryPredicate])
    case not(QueryPredicate)
    case comparison(QueryComparison)
}

/// `lhs op rhs`, with a quantifier over a collection on the left and string options.
public struct QueryComparison: Sendable, Hashable {
    public var lhs: QueryExpression
    public var op: QueryOperator
    public var rhs: QueryExpression
    public var quantifier: QueryQuantifier
    public var options: QueryStringOptions

    public init(_ lhs: QueryExpression, _ op: QueryOperator, _ rhs: QueryExpression,
                quantifier: QueryQuantifier = .direct, options: QueryStringOptions = []) {
        self.lhs = lhs
        self.op = op
        self.rhs = rhs
        self.quantifier = quantifier
        self.options = options
    }
}

/// The comparison operators of the format-string language.
public enum QueryOperator: String, Sendable, Hashable, CaseIterable {
    case equal = "=="
    case notEqual = "!="
    case less = "<"
    case lessOrEqual = "<="
    case greater = ">"
    case greaterOrEqual = ">="
    /// `x BETWEEN {low, high}`: low <= x <= high.
    case between = "BETWEEN"
    /// `x IN collection`, or a substring of a string.
    case `in` = "IN"
    case beginsWith = "BEGINSWITH"
    case endsWith = "ENDSWITH"
    /// A substring of a string, or a member of a collection on the left.
    case contains = "CONTAINS"
    /// Wildcards: `*` any run of characters, `?` one character.
    case like = "LIKE"
    /// A regular expression matching the whole string (ICU syntax, as NSPredicate).
    case matches = "MATCHES"
}

/// How a comparison applies to a collection on its left.
public enum QueryQuantifier: String, Sendable, Hashable {
    /// Not a collection — or a collection, which then means ANY (Q1).
    case direct = ""
    case any = "ANY"
    case all = "ALL"
    case none = "NONE"
}

/// String comparison options: `[c]`, `[d]`, `[n]`.
public struct QueryStringOptions: OptionSet, Sendable, Hashable {
    public let rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// `[c]`: case-insensitive.
    public static let caseInsensitive = QueryStringOptions(rawValue: 1)
    /// `[d]`: diacritic-insensitive.
    public static let diacriticInsensitive = QueryStringOptions(rawValue: 2)
    /// `[n]`: no Unicode normalization (compare scalars as given).
    public static let normalized = QueryStringOptions(rawValue: 4)
    /// Sorting only: order strings by the current locale's collation (`é` between `e` and
    /// `f`, `a` before `B`) instead of by Unicode scalars.
    public static let localized = QueryStringOptions(rawValue: 8)
    /// Sorting only: digits compare as numbers (`file2` before `file10`).
    public static let numeric = QueryStringOptions(rawValue: 16)
    /// Sorting only: Foundation's `localizedStandardCompare` — the Finder's order.
    public static let localizedStandard: QueryStringOptions = [.localized, .caseInsensitive, .numeric]
}

/// A value in a predicate: a constant, a key path, a variable, a computed value.
public indirect enum QueryExpression: Sendable, Hashable {
    /// A constant (`nil`, a number, a string, a date, an object as `.reference(key)`).
    case constant(StoredValue)
    /// A collection literal (`{1, 2, 3}`) or an array argument.
    case list([QueryExpression])
    /// The object being tested (`SELF`).
    case evaluatedObject
    /// A variable: `$name` (substituted, or bound by SUBQUERY).
    case variable(String)
    /// Property names followed from a base: `folder.name` is
    /// `.keyPath(.evaluatedObject, ["folder", "name"])`.
    case keyPath(QueryExpression, [String])
    /// `collection.@count`, `collection.@sum.price`, …
    case aggregate(QueryAggregate, QueryExpression, [String])
    /// `SUBQUERY(collection, $x, predicate)`: the members for which the predicate holds.
    case subquery(QueryExpression, variable: String, QueryPredicate)
    /// `a + b`, `a - b`, `a * b`, `a / b`.
    case arithmetic(QueryArithmetic, QueryExpression, QueryExpression)
    /// `-a`.
    case negated(QueryExpression)
    /// `condition ? a : b` (#Predicate's conditionals).
    case conditional(QueryPredicate, QueryExpression, QueryExpression)
    /// `a ?? b`: a, or b when a is nil.
    case coalesce(QueryExpression, QueryExpression)

    /// A key path on the object being tested: `.path("folder.name")`.
    public static func path(_ dotted: String) -> QueryExpression {
        .keyPath(.evaluatedObject, dotted.split(separator: ".").map(String.init))
    }

    /// The key path step `@entities`: the names of an object's entity and of every entity it
    /// inherits from, as a collection — a type check (`ANY animal.@entities == "Dog"` is what
    /// `#Predicate { $0.animal is Dog }` becomes).
    public static let entitiesKey = "@entities"
}

/// The collection operators.
public enum QueryAggregate: String, Sendable, Hashable {
    case count = "@count"
    case sum = "@sum"
    case avg = "@avg"
    case min = "@min"
    case max = "@max"
}

/// The arithmetic operators.
public enum QueryArithmetic: String, Sendable, Hashable {
    case add = "+"
    case subtract = "-"
    case multiply = "*"
    /// Division; two integers divide as numbers (`7 / 2` is 3.5), as in NSPredicate.
    case divide = "/"
    /// Integer division, truncating toward zero (Swift's `/` on integers): `7 DIV 2` is 3.
    case integerDivide = "DIV"
    /// The remainder of integer division, with the dividend's sign (Swift's `%`): `7 MOD 2` is 1.
    case remainder = "MOD"

    /// How tightly it binds: `*`, `/`, `DIV` and `MOD` (1) before `+` and `-` (0).
    var precedence: Int {
        switch self {
        case .add, .subtract: 0
        case .multiply, .divide, .integerDivide, .remainder: 1
        }
    }
}
