// SchemaDifference: what changed between two schemas, property by property — what a store opened
// with a different schema than the one it holds reports (and what migrations will act on). An
// identical schema has no differences. Renames are recognized through
// `AttributeDescription.originalName`: an attribute whose original name was removed is a rename,
// not a removal plus an addition.

/// One change between a stored schema and a new one.
public struct SchemaDifference: Sendable, Hashable, CustomStringConvertible {
    /// The entity the change is in.
    public var entity: String
    /// The attribute or relationship, when the change is in one.
    public var property: String?
    /// What changed, old → new.
    public var change: String

    public init(entity: String, property: String? = nil, _ change: String) {
        self.entity = entity
        self.property = property
        self.change = change
    }

    /// `Entity.property: change`.
    public var description: String {
        property.map { "\(entity).\($0): \(change)" } ?? "\(entity): \(change)"
    }
}

extension Schema {
    /// The changes from `old` to this schema, entity by entity in this schema's order, then the
    /// entities `old` had and this one lacks. Empty when the two describe the same model
    /// (declaration order of entities and properties does not count).
    public func differences(from old: Schema) -> [SchemaDifference] {
        var out: [SchemaDifference] = []
        for entity in entities {
            guard let before = old.entity(named: entity.name) else {
                out.append(SchemaDifference(entity: entity.name, "entity added"))
                continue
            }
            if before.parent != entity.parent {
                out.append(SchemaDifference(entity: entity.name, "parent \(before.parent ?? "none") → \(entity.parent ?? "none")"))
            }
            if before.isAbstract != entity.isAbstract {
                out.append(SchemaDifference(entity: entity.name, entity.isAbstract ? "became abstract" : "no longer abstract"))
            }
            out += Self.attributeDifferences(entity.name, old: before.attributes, new: entity.attributes)
            out += Self.relationshipDifferences(entity.name, old: before.relationships, new: entity.relationships)
            for index in entity.indexes where !before.indexes.contains(index) {
                out.append(SchemaDifference(entity: entity.name, "index \(index.text(entity: entity.name)) added"))
            }
            for index in before.indexes where !entity.indexes.contains(index) {
                out.append(SchemaDifference(entity: entity.name, "index \(index.text(entity: entity.name)) removed"))
            }
        }
        for entity in old.entities where self.entity(named: entity.name) == nil {
            out.append(SchemaDifference(entity: entity.name, "entity removed"))
        }
        return out
    }

    private static func attributeDifferences(_ entity: String, old: [AttributeDescription], new: [AttributeDescription]) -> [SchemaDifference] {
        var out: [SchemaDifference] = []
        var matched = Set<String>()
        for a in new {
            let renamedFrom = a.originalName.flatMap { name in old.first { $0.name == name && name != a.name } }
            guard let b = old.first(where: { $0.name == a.name }) ?? renamedFrom else {
                out.append(SchemaDifference(entity: entity, property: a.name, "attribute added"))
                continue
            }
            matched.insert(b.name)
            func note(_ change: String) { out.append(SchemaDifference(entity: entity, property: a.name, change)) }
            if b.name != a.name { note("renamed from \(b.name)") }
            if b.type != a.type { note("type \(b.type) → \(a.type)") }
            if b.isOptional != a.isOptional { note(a.isOptional ? "became optional" : "became required") }
            if b.isIndexed != a.isIndexed { note(a.isIndexed ? "index added" : "index removed") }
            if b.isUnique != a.isUnique { note(a.isUnique ? "became unique" : "no longer unique") }
            if b.allowsExternalStorage != a.allowsExternalStorage { note(a.allowsExternalStorage ? "external storage allowed" : "external storage no longer allowed") }
            if b.minimum != a.minimum || b.maximum != a.maximum || b.minLength != a.minLength
                || b.maxLength != a.maxLength || b.pattern != a.pattern {
                note("validation limits changed")
            }
            if b.defaultValue != a.defaultValue { note("default \(b.defaultValue ?? .null) → \(a.defaultValue ?? .null)") }
        }
        for b in old where !matched.contains(b.name) {
            out.append(SchemaDifference(entity: entity, property: b.name, "attribute removed"))
        }
        return out
    }

    private static func relationshipDifferences(_ entity: String, old: [RelationshipDescription], new: [RelationshipDescription]) -> [SchemaDifference] {
        var out: [SchemaDifference] = []
        for r in new {
            guard let b = old.first(where: { $0.name == r.name }) else {
                out.append(SchemaDifference(entity: entity, property: r.name, "relationship added"))
                continue
            }
            func note(_ change: String) { out.append(SchemaDifference(entity: entity, property: r.name, change)) }
            if b.destination != r.destination { note("destination \(b.destination) → \(r.destination)") }
            if b.inverse != r.inverse { note("inverse \(b.inverse ?? "none") → \(r.inverse ?? "none")") }
            if b.isToMany != r.isToMany { note(r.isToMany ? "to-one → to-many" : "to-many → to-one") }
            if b.isOrdered != r.isOrdered { note(r.isOrdered ? "became ordered" : "no longer ordered") }
            if b.deleteRule != r.deleteRule { note("delete rule \(b.deleteRule) → \(r.deleteRule)") }
            if b.isOptional != r.isOptional { note(r.isOptional ? "became optional" : "became required") }
            if b.minCount != r.minCount || b.maxCount != r.maxCount { note("count limits changed") }
        }
        for b in old where !new.contains(where: { $0.name == b.name }) {
            out.append(SchemaDifference(entity: entity, property: b.name, "relationship removed"))
        }
        return out
    }
}
