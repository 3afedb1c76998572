// MigrationPlanner: what it takes to bring a store from the schema its catalog holds to a new
// one — the inferred changes, the new catalog (IDs kept, given or retired), and whether the
// objects must be rewritten.
//
//   MP1 an entity or property is the same one in both versions when it has the same name, or
//       when the new one's `originalName` names the old one (a rename): it keeps its ID, so its
//       records, links and index entries stay valid.
//   MP2 a new entity or property gets the next ID; a removed one's ID is retired, never given
//       again (Format/schema.md rule 2).
//   MP3 instant changes touch only the catalog and whole trees: adding or removing an attribute
//       (not indexed) or a relationship, adding or removing an entity (a hierarchy root),
//       renames, optional ↔ required when every object has a value or the attribute a default,
//       validation limits, delete rules, and removing an index. Records written before an
//       attribute existed read as its default (Format/record.md rule 2), and fields of removed
//       properties are ignored (rule 3).
//   MP4 everything else rewrites the objects into a new file, streamed (MigrationCopier): a
//       type change, to-one ↔ to-many, ordered ↔ unordered, a changed default, a new index or
//       uniqueness constraint, a new required value without a default, a changed parent entity,
//       removing a sub-entity, and any custom stage.

import Foundation

/// One change a migration makes, as a dry run reports it.
public struct MigrationChange: Sendable, Hashable, CustomStringConvertible {
    /// What applying it costs.
    public enum Cost: Sendable, Hashable {
        /// The catalog and whole trees only, whatever the number of objects.
        case instant
        /// Every object is rewritten (into a new file that replaces the store at the end).
        case rewritesObjects
    }

    public var entity: String
    public var property: String?
    public var change: String
    public var cost: Cost

    public var description: String {
        let place = property.map { "\(entity).\($0)" } ?? entity
        return "\(place): \(change) (\(cost == .instant ? "instant" : "rewrites objects"))"
    }
}

/// A planned step from one catalog to the next.
struct MigrationStep {
    let from: Catalog
    var to: Catalog
    var changes: [MigrationChange] = []
    /// Whether the objects must be rewritten (MP4).
    var rewrites: Bool { changes.contains { $0.cost == .rewritesObjects } || isCustom }
    var isCustom = false
    /// New entity ID → old entity ID (renames keep IDs, so they are equal; absent: a new entity).
    var entityMapping: [UInt32: UInt32] = [:]
}

enum MigrationPlanner {
    /// The step from `old` to `schema` (numbered `version`).
    static func plan(from old: Catalog, to schema: Schema, version: SchemaVersion?) -> MigrationStep {
        var new = Catalog(new: Schema(entities: []))
        new.schemaVersion = old.schemaVersion + 1
        new.versionIdentifier = version
        new.versions = old.versions + [old.asVersion]
        new.schema = schema
        new.nextEntityID = old.nextEntityID
        new.nextFieldID = old.nextFieldID
        var step = MigrationStep(from: old, to: new)
        func note(_ entity: String, _ property: String?, _ change: String, _ cost: MigrationChange.Cost) {
            step.changes.append(MigrationChange(entity: entity, property: property, change: change, cost: cost))
        }

        // MP1: the old entity each new one continues.
        var oldName: [String: String] = [:]
        for e in schema.entities {
            if old.schema.entity(named: e.name) != nil {
                oldName[e.name] = e.name
            } else if let original = e.originalName, old.schema.entity(named: original) != nil,
                      schema.entity(named: original) == nil {
                oldName[e.name] = original
            }
        }
        let renamedTo = Dictionary(oldName.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })

        for e in schema.entities {
            guard let was = oldName[e.name], let before = old.schema.entity(named: was) else {
                new.entityIDs[e.name] = new.nextEntityID
                new.nextEntityID += 1
                note(e.name, nil, "entity added", .instant)
                for name in e.attributes.map(\.name) + e.relationships.map(\.name) {
                    new.fieldIDs["\(e.name).\(name)"] = new.nextFieldID
                    new.nextFieldID += 1
                }
                if e.parent != nil { step.changes[step.changes.count - 1].cost = .instant }
                continue
            }
            let id = old.entityID(was)
            new.entityIDs[e.name] = id
            step.entityMapping[id] = id
            if was != e.name { note(e.name, nil, "renamed from \(was)", .instant) }
            if before.parent.map({ renamedTo[$0] ?? $0 }) != e.parent {
                note(e.name, nil, "parent \(before.parent ?? "none") → \(e.parent ?? "none")", .rewritesObjects)
            }
            if before.isAbstract != e.isAbstract { note(e.name, nil, e.isAbstract ? "became abstract" : "no longer abstract", .instant) }

            // Attributes.
            var matched = Set<String>()
            for a in e.attributes {
                let b = before.attributes.first { $0.name == a.name }
                    ?? a.originalName.flatMap { n in before.attributes.first { $0.name == n && !e.attributes.contains { $0.name == n } } }
                guard let b else {
                    new.fieldIDs["\(e.name).\(a.name)"] = new.nextFieldID
                    new.nextFieldID += 1
                    let required = !a.isOptional && (a.defaultValue ?? .null).isNull
                    note(e.name, a.name, required ? "required attribute added without a default" : "attribute added",
                         required || a.isIndexed || a.isUnique ? .rewritesObjects : .instant)
                    continue
                }
                matched.insert(b.name)
                new.fieldIDs["\(e.name).\(a.name)"] = old.fieldID(was, b.name)
                if b.name != a.name { note(e.name, a.name, "renamed from \(b.name)", .instant) }
                if b.type != a.type { note(e.name, a.name, "type \(b.type) → \(a.type)", .rewritesObjects) }
                if b.isOptional != a.isOptional {
                    let safe = a.isOptional || !(a.defaultValue ?? .null).isNull && !a.isIndexed && !a.isUnique
                    note(e.name, a.name, a.isOptional ? "became optional" : "became required", safe ? .instant : .rewritesObjects)
                }
                if (b.isIndexed || b.isUnique) != (a.isIndexed || a.isUnique) || b.isUnique != a.isUnique {
                    let adds = a.isUnique && !b.isUnique || a.isIndexed && !b.isIndexed && !b.isUnique
                    note(e.name, a.name, a.isUnique ? "became unique" : a.isIndexed ? (b.isUnique ? "no longer unique" : "index added") : "index removed",
                         adds || b.isUnique && a.isIndexed ? .rewritesObjects : .instant)
                }
                if b.defaultValue != a.defaultValue {
                    note(e.name, a.name, "default \(b.defaultValue ?? .null) → \(a.defaultValue ?? .null)", .rewritesObjects)
                }
                if b.minimum != a.minimum || b.maximum != a.maximum || b.minLength != a.minLength || b.maxLength != a.maxLength || b.pattern != a.pattern {
                    note(e.name, a.name, "validation limits changed", .instant)
                }
            }
            for b in before.attributes where !matched.contains(b.name) {
                note(e.name, b.name, "attribute removed", .instant)
            }

            // Relationships.
            var matchedRelationships = Set<String>()
            for r in e.relationships {
                let b = before.relationships.first { $0.name == r.name }
                    ?? r.originalName.flatMap { n in before.relationships.first { $0.name == n && !e.relationships.contains { $0.name == n } } }
                guard let b, (renamedTo[b.destination] ?? b.destination) == r.destination else {
                    new.fieldIDs["\(e.name).\(r.name)"] = new.nextFieldID
                    new.nextFieldID += 1
                    let required = !r.isOptional || (r.minCount ?? 0) > 0
                    note(e.name, r.name, required ? "required relationship added" : "relationship added", required ? .rewritesObjects : .instant)
                    continue
                }
                matchedRelationships.insert(b.name)
                new.fieldIDs["\(e.name).\(r.name)"] = old.fieldID(was, b.name)
                if b.name != r.name { note(e.name, r.name, "renamed from \(b.name)", .instant) }
                if b.isToMany != r.isToMany { note(e.name, r.name, r.isToMany ? "to-one → to-many" : "to-many → to-one", .rewritesObjects) }
                if b.isToMany && r.isToMany && b.isOrdered != r.isOrdered { note(e.name, r.name, r.isOrdered ? "became ordered" : "no longer ordered", .rewritesObjects) }
                if b.deleteRule != r.deleteRule { note(e.name, r.name, "delete rule \(b.deleteRule) → \(r.deleteRule)", .instant) }
                if b.isOptional != r.isOptional || b.minCount != r.minCount || b.maxCount != r.maxCount {
                    let tighter = !r.isOptional && b.isOptional || (r.minCount ?? 0) > (b.minCount ?? 0) || (r.maxCount ?? .max) < (b.maxCount ?? .max)
                    note(e.name, r.name, "count limits changed", tighter ? .rewritesObjects : .instant)
                }
            }
            for b in before.relationships where !matchedRelationships.contains(b.name) {
                note(e.name, b.name, "relationship removed", .instant)
            }

            // Compound indexes and uniqueness constraints (by their properties, renames applied).
            let renames = Dictionary(e.attributes.compactMap { a in a.originalName.map { ($0, a.name) } }
                + e.relationships.compactMap { r in r.originalName.map { ($0, r.name) } }, uniquingKeysWith: { a, _ in a })
            let carried = before.indexes.map { IndexDescription($0.properties.map { renames[$0] ?? $0 }, isUnique: $0.isUnique) }
            for index in e.indexes where !carried.contains(index) {
                note(e.name, nil, "\(index.isUnique ? "uniqueness constraint" : "index") \(index.text(entity: e.name)) added", .rewritesObjects)
            }
            for index in carried where !e.indexes.contains(index) {
                note(e.name, nil, "\(index.isUnique ? "uniqueness constraint" : "index") \(index.text(entity: e.name)) removed", .instant)
            }
        }
        for b in old.schema.entities where renamedTo[b.name] == nil {
            note(b.name, nil, "entity removed", b.parent == nil ? .instant : .rewritesObjects)
        }
        step.to = new
        return step
    }
}
