// SortKey: one key of a fetch's order — Core Data's NSSortDescriptor(key:ascending:). Values
// order by QueryValueSemantics; nil sorts first ascending (last descending), as in Core Data's
// SQLite store; objects equal on every key keep primary-key order, so results are deterministic.

/// How fetched objects are ordered by one key path.
///
/// ```swift
/// request.sortDescriptors = [SortKey("createdAt", ascending: false), SortKey("title", options: .caseInsensitive)]
/// ```
public struct SortKey: Sendable, Hashable, CustomStringConvertible {
    /// A key path, through to-one relationships and into documents (`folder.name`).
    public var keyPath: String
    public var ascending: Bool
    /// For strings: `.caseInsensitive` and `.diacriticInsensitive` fold before comparing;
    /// `.localized` orders by the current locale's collation, `.numeric` compares digits as
    /// numbers, and `.localizedStandard` is all of that (`localizedStandardCompare`).
    public var options: QueryStringOptions
    /// Why the key cannot be used (a key path that is not a persisted property), thrown by the
    /// fetch as `.invalidQuery`.
    var unresolved: String?

    public init(_ keyPath: String, ascending: Bool = true, options: QueryStringOptions = []) {
        self.keyPath = keyPath
        self.ascending = ascending
        self.options = options
    }

    /// `keyPath ASC` or `keyPath DESC`.
    public var description: String { "\(keyPath) \(ascending ? "ASC" : "DESC")" }
}
