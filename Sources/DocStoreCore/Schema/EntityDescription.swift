// EntityDescription: one kind of object, as Core Data's NSEntityDescription — its name, its
// attributes and relationships, and the entity it inherits from (a sub-entity has its parent's
// properties too and is fetched with it), and its compound indexes and uniqueness constraints.
// In a catalog (Format/schema.md) `indexes` is written only when it is not empty, so a store
// without compound indexes keeps the catalog bytes it had before they existed.

/// A kind of object in a schema: its attributes and relationships.
///
/// ```swift
/// let folder = EntityDescription(name: "Folder", attributes: [
///     AttributeDescription(name: "name", type: .string),
/// ], relationships: [
///     RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", isToMany: true),
/// ])
/// ```
public struct EntityDescription: Sendable, Hashable, Codable {
    /// The entity's name, unique in its schema.
    public var name: String
    /// The entity this one inherits from, if any: its properties are this entity's too, and a
    /// fetch of the parent returns objects of this entity as well.
    public var parent: String?
    /// An abstract entity has no objects of its own, only through its sub-entities.
    public var isAbstract: Bool
    /// The attributes declared here (not the inherited ones).
    public var attributes: [AttributeDescription]
    /// The relationships declared here (not the inherited ones).
    public var relationships: [RelationshipDescription]
    /// Compound indexes and uniqueness constraints declared here (a sub-entity's objects are in
    /// its ancestors' indexes too). Single-attribute ones are options of the attribute.
    public var indexes: [IndexDescription]
    /// The name this entity had in the previous schema version (a rename: migrations keep its
    /// objects, IDs and links). Written to the catalog only when set.
    public var originalName: String?

    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = [],
        indexes: [IndexDescription] = []
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
        self.indexes = indexes
    }

    /// The uniqueness constraints, Core Data's `uniquenessConstraints`: the property names of
    /// each unique index.
    public var uniquenessConstraints: [[String]] {
        indexes.filter(\.isUnique).map(\.properties)
    }

    private enum CodingKeys: String, CodingKey {
        case name, parent, isAbstract, attributes, relationships, indexes, originalName
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        name = try c.decode(String.self, forKey: .name)
        parent = try c.decodeIfPresent(String.self, forKey: .parent)
        isAbstract = try c.decode(Bool.self, forKey: .isAbstract)
        attributes = try c.decode([AttributeDescription].self, forKey: .attributes)
        relationships = try c.decode([RelationshipDescription].self, forKey: .relationships)
        indexes = try c.decodeIfPresent([IndexDescription].self, forKey: .indexes) ?? []
        originalName = try c.decodeIfPresent(String.self, forKey: .originalName)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(name, forKey: .name)
        try c.encodeIfPresent(parent, forKey: .parent)
        try c.encode(isAbstract, forKey: .isAbstract)
        try c.encode(attributes, forKey: .attributes)
        try c.encode(relationships, forKey: .relationships)
        if !indexes.isEmpty { try c.encode(indexes, forKey: .indexes) }
        try c.encodeIfPresent(originalName, forKey: .originalName)
    }
}
