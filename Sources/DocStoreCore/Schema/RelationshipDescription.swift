// RelationshipDescription: one relationship of an entity, as Core Data's
// NSRelationshipDescription — its destination, its inverse (required: DocStore keeps both sides
// in step on every change), to-one / to-many / ordered, the delete rule, optionality and counts.

/// What deleting an object does to the objects its relationship reaches.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable, Codable {
    /// The related objects stay; their inverse relationship no longer includes the deleted one.
    case nullify
    /// The related objects are deleted too.
    case cascade
    /// The delete fails at save while any related object remains.
    case deny
    /// Nothing is done to the related objects (their inverse is left as it is — use with care).
    case noAction
}

/// A relationship of an entity: a link to one object or a set of objects of another entity.
///
/// ```swift
/// let notes = RelationshipDescription(name: "notes", destination: "Note", inverse: "folder",
///                                     isToMany: true, deleteRule: .cascade)
/// let folder = RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes",
///                                      isOptional: true)
/// ```
public struct RelationshipDescription: Sendable, Hashable, Codable {
    /// The relationship's name, unique within its entity and the entities it inherits from.
    public var name: String
    /// The entity at the other end.
    public var destination: String
    /// The relationship of the destination entity that points back here.
    public var inverse: String?
    /// To-many (a set of objects) rather than to-one.
    public var isToMany: Bool
    /// To-many only: the objects keep the order they were added in.
    public var isOrdered: Bool
    /// What deleting the source object does to the destination objects.
    public var deleteRule: DeleteRule
    /// To-one: whether it may be empty. To-many: whether it may hold no objects.
    public var isOptional: Bool
    /// To-many only: the fewest and most objects allowed at save.
    public var minCount: Int?
    public var maxCount: Int?
    /// The name this relationship had in the previous schema version (a rename: migrations keep
    /// its links). Written to the catalog only when set.
    public var originalName: String?

    public init(
        name: String, destination: String, inverse: String?, isToMany: Bool = false,
        isOrdered: Bool = false, deleteRule: DeleteRule = .nullify, isOptional: Bool = true,
        minCount: Int? = nil, maxCount: Int? = nil
    ) {
        self.name = name
        self.destination = destination
        self.inverse = inverse
        self.isToMany = isToMany
        self.isOrdered = isOrdered
        self.deleteRule = deleteRule
        self.isOptional = isOptional
        self.minCount = minCount
        self.maxCount = maxCount
    }
}
