// FetchProperty: one entry of a dictionary fetch's results — Core Data's propertiesToFetch,
// where an entry is a property (NSPropertyDescription) or an aggregate expression over a group
// (NSExpressionDescription with count:, sum:, average:, min:, max:).

/// A value a dictionary fetch returns for each result: a key path's value, or an aggregate of a
/// key path over each group of `propertiesToGroupBy` (over all matches without groups).
///
/// ```swift
/// var request = FetchRequest<Note>()
/// request.propertiesToGroupBy = ["folder.name"]
/// request.propertiesToFetch = [FetchProperty("folder.name"), .count(as: "notes"), .max("createdAt", as: "latest")]
/// let rows = try context.fetchDictionaries(request)   // [["folder.name": "Inbox", "notes": 12, "latest": …], …]
/// ```
public struct FetchProperty: Sendable, Hashable {
    /// How an aggregate combines a group's values (nils are skipped).
    public enum Function: String, Sendable, Hashable {
        /// The number of non-nil values (of objects, for `SELF`), an `Int`.
        case count
        /// The total of numbers: an `Int` when every value is an integer (and the total fits),
        /// else a `Double`; 0 for none.
        case sum
        /// The mean of numbers, a `Double`; nil (left out) for none.
        case average
        /// The least value (numbers, dates, strings); nil for none.
        case min
        /// The greatest value; nil for none.
        case max
    }

    /// The key the value has in each result dictionary.
    public var name: String
    /// The key path from the fetched entity (`"title"`, `"folder.name"`, `"SELF"`).
    public var keyPath: String
    /// The aggregate, or nil for the key path's own value.
    public var function: Function?

    /// The value of `keyPath`, under the key `name` (the key path itself by default).
    public init(_ keyPath: String, as name: String? = nil) {
        self.keyPath = keyPath
        self.name = name ?? keyPath
        self.function = nil
    }

    /// An aggregate of `keyPath` under the key `name`.
    public init(_ function: Function, of keyPath: String, as name: String) {
        self.keyPath = keyPath
        self.name = name
        self.function = function
    }

    /// How many objects (or non-nil values of `keyPath`) each group has.
    public static func count(_ keyPath: String = "SELF", as name: String) -> FetchProperty { FetchProperty(.count, of: keyPath, as: name) }
    public static func sum(_ keyPath: String, as name: String) -> FetchProperty { FetchProperty(.sum, of: keyPath, as: name) }
    public static func average(_ keyPath: String, as name: String) -> FetchProperty { FetchProperty(.average, of: keyPath, as: name) }
    public static func min(_ keyPath: String, as name: String) -> FetchProperty { FetchProperty(.min, of: keyPath, as: name) }
    public static func max(_ keyPath: String, as name: String) -> FetchProperty { FetchProperty(.max, of: keyPath, as: name) }
}
