// AttributeOptions: the option values @Attribute and @Relationship take (declared with the macros
// in the DocStore module), and what the code @Model generates passes at run time. They live in
// DocStoreCore so that the object layer builds without the macro plugin.

/// An option of ``Attribute(_:)``.
public struct AttributeOption: Sendable {
    let apply: @Sendable (inout AttributeDescription) -> Void

    /// Queries on the attribute use an index.
    public static let indexed = AttributeOption { $0.isIndexed = true }
    /// No two objects may have the same value (save fails with `uniqueConstraint`).
    public static let unique = AttributeOption { $0.isUnique = true; $0.isIndexed = true }
    /// Large `Data` values are stored as blob files.
    public static let externalStorage = AttributeOption { $0.allowsExternalStorage = true }
    /// A deleted object's value stays in its history tombstone (``HistoryChange/tombstone``).
    public static let preserveValueOnDeletion = AttributeOption { $0.preservesValueOnDeletion = true }
    /// The attribute's name before a rename: its stored values are kept.
    public static func originalName(_ name: String) -> AttributeOption { AttributeOption { $0.originalName = name } }
    /// Numbers and dates: the allowed range, checked at save.
    public static func range(_ range: ClosedRange<Double>) -> AttributeOption {
        AttributeOption { $0.minimum = range.lowerBound; $0.maximum = range.upperBound }
    }
    public static func minimum(_ value: Double) -> AttributeOption { AttributeOption { $0.minimum = value } }
    public static func maximum(_ value: Double) -> AttributeOption { AttributeOption { $0.maximum = value } }
    /// Strings (characters) and data (bytes): the allowed length, checked at save.
    public static func minLength(_ n: Int) -> AttributeOption { AttributeOption { $0.minLength = n } }
    public static func maxLength(_ n: Int) -> AttributeOption { AttributeOption { $0.maxLength = n } }
    /// Strings: a regular expression the whole value must match at save.
    public static func pattern(_ regex: String) -> AttributeOption { AttributeOption { $0.pattern = regex } }
}

/// What @Model passes for a property marked @Relationship. Not for direct use.
public struct _$RelationshipOptions {
    var inverseName: String?
    var deleteRule: DeleteRule
    var minimumCount: Int?
    var maximumCount: Int?
    var originalName: String?

    public init(inverseName: String?, deleteRule: DeleteRule = .nullify, inverse: AnyKeyPath? = nil,
                minimumCount: Int? = nil, maximumCount: Int? = nil, originalName: String? = nil) {
        self.inverseName = inverseName
        self.deleteRule = deleteRule
        self.minimumCount = minimumCount
        self.maximumCount = maximumCount
        self.originalName = originalName
    }
}
