// TypedStringConditions: the third way to write a query, for what `#Predicate` cannot say on
// Linux — case- and diacritic-insensitive string matching (`localizedStandardContains`,
// `caseInsensitiveCompare`, `lowercased()` are missing there) and localized sorting — on key
// paths the compiler checks, combined with `&&`, `||` and `!`.
//
// Key paths are named through the model class's `_$keyPathNames` (made by @Model): a key path
// that is not a persisted property (a computed or @Transient one) throws `.invalidQuery`
// naming it, when the condition is made.

import Foundation

/// How a string condition compares.
public enum StringMatch: Sendable, Hashable {
    case equals, contains, beginsWith, endsWith
    /// `*` and `?` wildcards.
    case like
    /// A regular expression matching the whole string.
    case matches

    var queryOperator: QueryOperator {
        switch self {
        case .equals: .equal
        case .contains: .contains
        case .beginsWith: .beginsWith
        case .endsWith: .endsWith
        case .like: .like
        case .matches: .matches
        }
    }
}

/// A property type string conditions apply to: `String` and `String?`.
public protocol StringQueryable {}
extension String: StringQueryable {}
extension Optional: StringQueryable where Wrapped == String {}

extension QueryStringOptions {
    /// `[cd]`: what `localizedStandardContains` and `caseInsensitiveCompare` ignore.
    public static let caseAndDiacriticInsensitive: QueryStringOptions = [.caseInsensitive, .diacriticInsensitive]
}

extension QueryPredicate {
    /// `keyPath` compared with `value` — case- and diacritic-insensitive unless `options` say
    /// otherwise.
    ///
    /// ```swift
    /// let request = FetchRequest<Note>(predicate: try .string(\Note.title, .contains, "creme brulee"))   // finds "Crème Brûlée"
    /// ```
    public static func string<Root: ManagedObject, V: StringQueryable>(
        _ keyPath: KeyPath<Root, V>, _ match: StringMatch, _ value: String,
        options: QueryStringOptions = .caseAndDiacriticInsensitive
    ) throws(DocStoreError) -> QueryPredicate {
        .comparison(QueryComparison(.keyPath(.evaluatedObject, [try name(of: keyPath)]), match.queryOperator, .constant(.string(value)), options: options))
    }

    /// A string property of the object a to-one relationship reaches: `folder.name`.
    public static func string<Root: ManagedObject, Destination: ManagedObject, V: StringQueryable>(
        _ relationship: KeyPath<Root, Destination?>, _ keyPath: KeyPath<Destination, V>, _ match: StringMatch, _ value: String,
        options: QueryStringOptions = .caseAndDiacriticInsensitive
    ) throws(DocStoreError) -> QueryPredicate {
        let path = [try name(of: relationship), try name(of: keyPath)]
        return .comparison(QueryComparison(.keyPath(.evaluatedObject, path), match.queryOperator, .constant(.string(value)), options: options))
    }

    /// Whether any object of a to-many relationship has a matching string: `ANY tags.name`.
    public static func string<Root: ManagedObject, Destination: ManagedObject, V: StringQueryable>(
        any relationship: KeyPath<Root, Set<Destination>>, _ keyPath: KeyPath<Destination, V>, _ match: StringMatch, _ value: String,
        options: QueryStringOptions = .caseAndDiacriticInsensitive
    ) throws(DocStoreError) -> QueryPredicate {
        let path = [try name(of: relationship), try name(of: keyPath)]
        return .comparison(QueryComparison(.keyPath(.evaluatedObject, path), match.queryOperator, .constant(.string(value)),
                                           quantifier: .any, options: options))
    }

    /// Foundation's `localizedStandardContains`: a case- and diacritic-insensitive substring.
    public static func localizedStandardContains<Root: ManagedObject, V: StringQueryable>(
        _ keyPath: KeyPath<Root, V>, _ value: String
    ) throws(DocStoreError) -> QueryPredicate {
        try string(keyPath, .contains, value)
    }

    /// Both conditions.
    public static func && (a: QueryPredicate, b: QueryPredicate) -> QueryPredicate { .and([a, b]) }
    /// Either condition.
    public static func || (a: QueryPredicate, b: QueryPredicate) -> QueryPredicate { .or([a, b]) }
    /// The opposite condition.
    public static prefix func ! (a: QueryPredicate) -> QueryPredicate { .not(a) }

    /// The persisted property a key path of a model class names.
    static func name<Root: ManagedObject>(of keyPath: AnyKeyPath, in root: Root.Type = Root.self) throws(DocStoreError) -> String {
        guard let name = Root._$keyPathNames[keyPath], name != "objectID" else {
            throw DocStoreError(.invalidQuery, "\(keyPath) is not a persisted property of \(Root.self)", entity: "\(Root.self)")
        }
        return name
    }

    private static func name<Root: ManagedObject, V>(of keyPath: KeyPath<Root, V>) throws(DocStoreError) -> String {
        try name(of: keyPath, in: Root.self)
    }
}

extension SortKey {
    /// A sort key on a property of a model class, named by key path.
    ///
    /// ```swift
    /// request.sortDescriptors = [SortKey(\Note.title, options: .localizedStandard)]   // Finder's order
    /// ```
    ///
    /// A key path that is not a persisted property makes the fetch throw `.invalidQuery`.
    public init<Root: ManagedObject, V>(_ keyPath: KeyPath<Root, V>, ascending: Bool = true, options: QueryStringOptions = []) {
        do {
            self.init(try QueryPredicate.name(of: keyPath, in: Root.self), ascending: ascending, options: options)
        } catch {
            self.init("\(keyPath)", ascending: ascending, options: options)
            unresolved = error.message
        }
    }
}
