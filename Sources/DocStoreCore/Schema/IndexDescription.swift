// IndexDescription: an index over one or more properties of an entity, as Core Data's
// NSFetchIndexDescription and SwiftData's #Index / #Unique — a compound index, or a uniqueness
// constraint over several properties together.
//
// Elements are attributes (not Codable documents) or to-one relationships of the entity or its
// ancestors, in order: the index orders its entries by the first element, then the second, and
// so on, so it serves a query that fixes a leading run of elements by equality and (optionally)
// bounds or sorts by the next one. Single-attribute indexes are still declared on the attribute
// (`isIndexed`, `isUnique`); an entity's `indexes` are the compound ones.

/// An index over several properties of an entity, or a uniqueness constraint over them.
///
/// ```swift
/// var note = EntityDescription(name: "Note", attributes: [...], relationships: [...])
/// note.indexes = [IndexDescription(["folder", "createdAt"])]           // folder == x sorted by date
/// note.indexes.append(IndexDescription(["folder", "title"], isUnique: true))  // one title per folder
/// ```
public struct IndexDescription: Sendable, Hashable, Codable {
    /// The indexed properties (attributes or to-one relationships), most significant first.
    public var properties: [String]
    /// Whether no two objects may hold the same values in every element. Objects with a nil
    /// element never conflict (as in SQL and Core Data).
    public var isUnique: Bool

    public init(_ properties: [String], isUnique: Bool = false) {
        self.properties = properties
        self.isUnique = isUnique
    }

    /// `Note(folder, createdAt)`, `unique Note(folder, title)`.
    func text(entity: String) -> String {
        "\(isUnique ? "unique " : "")\(entity)(\(properties.joinedNames(", ")))"
    }
}
