// EntityDescription: one kind of object, as Core Data's NSEntityDescription — its name, its
// attributes and relationships, and the entity it inherits from (a sub-entity has its parent's
// properties too and is fetched with it).

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

    public init(
        name: String, parent: String? = nil, isAbstract: Bool = false,
        attributes: [AttributeDescription] = [], relationships: [RelationshipDescription] = []
    ) {
        self.name = name
        self.parent = parent
        self.isAbstract = isAbstract
        self.attributes = attributes
        self.relationships = relationships
    }
}
