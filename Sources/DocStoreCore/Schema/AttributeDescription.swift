// AttributeDescription: one attribute of an entity, as Core Data's NSAttributeDescription — name,
// type, optionality, index and uniqueness, external storage, the name it had before a rename, and
// the validation limits checked at save. Schema.validate() checks that the options fit the type.

/// An attribute of an entity: a stored value such as a title, a date or a flag.
///
/// ```swift
/// let title = AttributeDescription(name: "title", type: .string, maxLength: 200)
/// let created = AttributeDescription(name: "createdAt", type: .date, isIndexed: true)
/// ```
public struct AttributeDescription: Sendable, Hashable, Codable {
    /// The attribute's name, unique within its entity and the entities it inherits from.
    public var name: String
    /// The kind of value it stores.
    public var type: AttributeType
    /// Whether it may hold no value (Swift `Optional`). A required attribute must be set by save.
    public var isOptional: Bool
    /// Whether an index serves queries on it (equality, range, prefix, sort).
    public var isIndexed: Bool
    /// Whether no two objects of the entity may hold the same value (an index that refuses
    /// duplicates; the basis of upserts).
    public var isUnique: Bool
    /// Binary data only: large values are stored as external blob files.
    public var allowsExternalStorage: Bool
    /// The attribute's name in the previous schema version, when it was renamed (Core Data's
    /// renaming identifier): migration keeps its values.
    public var originalName: String?
    /// Numbers and dates: the smallest and largest value allowed (dates as seconds since
    /// 2001-01-01, `Date.timeIntervalSinceReferenceDate`).
    public var minimum: Double?
    public var maximum: Double?
    /// Strings (characters) and binary data (bytes): the shortest and longest value allowed.
    public var minLength: Int?
    public var maxLength: Int?
    /// Strings: a regular expression the whole value must match.
    public var pattern: String?
    /// The value a new object starts with, and what an object stored before the attribute
    /// existed reads as. Nil means no default (`.null`, or the type's placeholder when required).
    public var defaultValue: StoredValue?
    /// Whether a deleted object's value is kept in its history tombstone (SwiftData's
    /// `.preserveValueOnDeletion`), so a history reader can tell which object went away — by
    /// its server ID, say.
    public var preservesValueOnDeletion: Bool {
        get { preserves ?? false }
        set { preserves = newValue ? true : nil }
    }
    /// Stored as nil when false, so a catalog writes the key only when it is set and catalogs
    /// from before it existed keep their bytes (Format/schema.md).
    private var preserves: Bool?

    private enum CodingKeys: String, CodingKey {
        case name, type, isOptional, isIndexed, isUnique, allowsExternalStorage, originalName
        case minimum, maximum, minLength, maxLength, pattern, defaultValue
        case preserves = "preservesValueOnDeletion"
    }

    public init(
        name: String, type: AttributeType, isOptional: Bool = false, isIndexed: Bool = false,
        isUnique: Bool = false, allowsExternalStorage: Bool = false, originalName: String? = nil,
        minimum: Double? = nil, maximum: Double? = nil, minLength: Int? = nil, maxLength: Int? = nil,
        pattern: String? = nil, defaultValue: StoredValue? = nil, preservesValueOnDeletion: Bool = false
    ) {
        self.name = name
        self.type = type
        self.isOptional = isOptional
        self.isIndexed = isIndexed
        self.isUnique = isUnique
        self.allowsExternalStorage = allowsExternalStorage
        self.originalName = originalName
        self.minimum = minimum
        self.maximum = maximum
        self.minLength = minLength
        self.maxLength = maxLength
        self.pattern = pattern
        self.defaultValue = defaultValue
        self.preservesValueOnDeletion = preservesValueOnDeletion
    }
}
