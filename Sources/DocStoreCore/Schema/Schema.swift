// Schema: a store's entities, as Core Data's NSManagedObjectModel, and the checks a schema must
// pass before a store opens with it (`validate()`).
//
// Checks, each reported as a DocStoreError.Problem naming the entity and property:
//   S1  entity names are non-empty, unique, and do not begin with "$" (the engine's own trees);
//   S2  a parent entity exists, and inheritance has no cycle;
//   S3  property names are non-empty and unique within an entity, its ancestors included;
//   S4  attribute options fit the type: ranges on numbers and dates, lengths on strings and data,
//       patterns on strings (and compile), external storage on data, no index on Codable values,
//       minimum <= maximum and minLength <= maxLength, lengths not negative, a default that
//       fits the type;
//   S5  a relationship's destination exists; it names an inverse; the inverse exists on the
//       destination (or an ancestor of it), leads back to this entity (or an ancestor), and names
//       this relationship as its own inverse;
//   S6  ordered and min/max counts only on to-many relationships, minCount <= maxCount;
//   S7  no delete rule would orphan a required to-one: nullifying a relationship whose inverse is
//       a required to-one would leave the other object without its required link.
//   S8  a compound index or uniqueness constraint names at least one property, each once, and
//       each an attribute (not a Codable document), a to-one relationship, or a field inside a
//       Codable attribute (`metadata.author`, not in a uniqueness constraint) of the entity or
//       an ancestor.
// Every problem is collected, so one error lists all that must be fixed.

import Foundation

/// The entities of a store and how they relate: DocStore's managed object model.
///
/// ```swift
/// let schema = Schema(entities: [folder, note])
/// try schema.validate()   // throws DocStoreError(.invalidSchema) listing every problem
/// ```
///
/// ## Topics
/// - ``validate()``
/// - ``entity(named:)``
/// - ``allAttributes(of:)``
/// - ``allRelationships(of:)``
public struct Schema: Sendable, Hashable, Codable {
    /// The entities, in declaration order.
    public var entities: [EntityDescription]

    public init(entities: [EntityDescription]) {
        self.entities = entities
    }

    /// The entity with this name, if any.
    public func entity(named name: String) -> EntityDescription? {
        entities.first { $0.name == name }
    }

    /// The entity and its ancestors, nearest first; stops at a missing parent or a cycle.
    public func lineage(of name: String) -> [EntityDescription] {
        var chain: [EntityDescription] = []
        var seen = Set<String>()
        var next: String? = name
        while let current = next, seen.insert(current).inserted, let entity = entity(named: current) {
            chain.append(entity)
            next = entity.parent
        }
        return chain
    }

    /// Every attribute of the entity, the inherited ones first (root ancestor first).
    public func allAttributes(of name: String) -> [AttributeDescription] {
        lineage(of: name).reversed().flatMap(\.attributes)
    }

    /// Every relationship of the entity, the inherited ones first (root ancestor first).
    public func allRelationships(of name: String) -> [RelationshipDescription] {
        lineage(of: name).reversed().flatMap(\.relationships)
    }

    /// Whether `name` is `ancestor` or inherits from it.
    public func entity(_ name: String, isKindOf ancestor: String) -> Bool {
        lineage(of: name).contains { $0.name == ancestor }
    }

    /// Checks the schema (rules S1-S7 above) and throws one error listing every problem.
    ///
    /// - Throws: ``DocStoreError`` with code ``DocStoreError/Code/invalidSchema`` and its
    ///   ``DocStoreError/problems``, each naming the entity and property.
    public func validate() throws(DocStoreError) {
        var problems: [DocStoreError.Problem] = []
        func problem(_ entity: String, _ property: String?, _ message: String) {
            problems.append(DocStoreError.Problem(entity: entity, property: property, message))
        }

        // S1
        var names = Set<String>()
        for entity in entities {
            if entity.name.isEmpty { problem("(unnamed)", nil, "an entity needs a name") }
            if entity.name.hasPrefix("$") { problem(entity.name, nil, "entity names may not begin with \"$\" (reserved for the engine)") }
            if !names.insert(entity.name).inserted { problem(entity.name, nil, "two entities have this name") }
        }

        for entity in entities {
            // S2
            if let parent = entity.parent {
                if self.entity(named: parent) == nil {
                    problem(entity.name, nil, "its parent entity \"\(parent)\" does not exist")
                } else if hasInheritanceCycle(entity.name) {
                    problem(entity.name, nil, "its inheritance forms a cycle through \"\(parent)\"")
                }
            }

            // S3: names unique across the entity and its ancestors.
            var propertyOwner: [String: String] = [:]
            for ancestor in lineage(of: entity.name).reversed() {
                for name in ancestor.attributes.map(\.name) + ancestor.relationships.map(\.name) {
                    if name.isEmpty {
                        if ancestor.name == entity.name { problem(entity.name, nil, "a property needs a name") }
                        continue
                    }
                    if let owner = propertyOwner[name], ancestor.name == entity.name {
                        problem(entity.name, name, owner == entity.name
                            ? "two properties have this name"
                            : "the name is already a property of its ancestor \"\(owner)\"")
                    }
                    propertyOwner[name] = propertyOwner[name] ?? ancestor.name
                }
            }

            for attribute in entity.attributes { checkAttribute(attribute, of: entity.name, problem) }
            for relationship in entity.relationships { checkRelationship(relationship, of: entity.name, problem) }
            for index in entity.indexes { checkIndex(index, of: entity.name, problem) }
        }

        guard problems.isEmpty else {
            throw DocStoreError(
                .invalidSchema, "the schema has \(problems.count) problem\(problems.count == 1 ? "" : "s")",
                entity: problems.count == 1 ? problems[0].entity : nil,
                property: problems.count == 1 ? problems[0].property : nil, problems: problems)
        }
    }

    /// Whether following parents from `name` comes back to an entity already passed.
    private func hasInheritanceCycle(_ name: String) -> Bool {
        var seen = Set<String>()
        var next: String? = name
        while let current = next {
            if !seen.insert(current).inserted { return true }
            next = entity(named: current)?.parent
        }
        return false
    }

    /// S4.
    private func checkAttribute(_ a: AttributeDescription, of entity: String, _ problem: (String, String?, String) -> Void) {
        if (a.minimum != nil || a.maximum != nil) && !a.type.isNumericOrDate {
            problem(entity, a.name, "minimum and maximum apply to numbers and dates, not \(a.type)")
        }
        if let lo = a.minimum, let hi = a.maximum, lo > hi {
            problem(entity, a.name, "minimum \(lo) is greater than maximum \(hi)")
        }
        if (a.minLength != nil || a.maxLength != nil) && !a.type.hasLength {
            problem(entity, a.name, "minLength and maxLength apply to String and Data, not \(a.type)")
        }
        if let lo = a.minLength, lo < 0 { problem(entity, a.name, "minLength \(lo) is negative") }
        if let hi = a.maxLength, hi < 0 { problem(entity, a.name, "maxLength \(hi) is negative") }
        if let lo = a.minLength, let hi = a.maxLength, lo > hi {
            problem(entity, a.name, "minLength \(lo) is greater than maxLength \(hi)")
        }
        if let pattern = a.pattern {
            if a.type != .string {
                problem(entity, a.name, "a pattern applies to String, not \(a.type)")
            } else if (try? NSRegularExpression(pattern: pattern)) == nil {
                problem(entity, a.name, "the pattern \"\(pattern)\" is not a valid regular expression")
            }
        }
        if a.allowsExternalStorage && a.type != .binaryData {
            problem(entity, a.name, "external storage applies to Data, not \(a.type)")
        }
        if let value = a.defaultValue, !value.fits(a.type) {
            problem(entity, a.name, "the default value \(value) is not a \(a.type)")
        }
        if case .codable = a.type, a.isIndexed || a.isUnique {
            problem(entity, a.name, "a Codable value cannot be indexed or unique; index one of its fields as an attribute instead")
        }
    }

    /// S8.
    private func checkIndex(_ index: IndexDescription, of entity: String, _ problem: (String, String?, String) -> Void) {
        var text: String { index.text(entity: entity) }   // only when there is a problem
        if index.properties.isEmpty { problem(entity, nil, "the index \(text) names no property") }
        if Set(index.properties).count != index.properties.count {
            problem(entity, nil, "the index \(text) names a property twice")
        }
        let attributes = allAttributes(of: entity)
        let relationships = allRelationships(of: entity)
        for name in index.properties {
            if let dot = name.firstIndex(of: "."), let a = attributes.first(where: { $0.name == name[..<dot] }), case .codable = a.type {
                if index.isUnique { problem(entity, name, "the index \(text) includes a document field; a uniqueness constraint cannot") }
                if name.hasSuffix(".") || name.contains("..") { problem(entity, name, "the index \(text) names an empty document field") }
                continue
            }
            if let a = attributes.first(where: { $0.name == name }) {
                if case .codable = a.type { problem(entity, name, "the index \(text) includes a Codable value, which cannot be indexed") }
            } else if let r = relationships.first(where: { $0.name == name }) {
                if r.isToMany { problem(entity, name, "the index \(text) includes a to-many relationship; only attributes and to-one relationships can be indexed") }
            } else {
                problem(entity, name, "the index \(text) names \"\(name)\", which is not a property of \(entity)")
            }
        }
    }

    /// S5-S7.
    private func checkRelationship(_ r: RelationshipDescription, of entity: String, _ problem: (String, String?, String) -> Void) {
        // S6
        if r.isOrdered && !r.isToMany { problem(entity, r.name, "only a to-many relationship can be ordered") }
        if (r.minCount != nil || r.maxCount != nil) && !r.isToMany {
            problem(entity, r.name, "minCount and maxCount apply to to-many relationships")
        }
        if let lo = r.minCount, let hi = r.maxCount, lo > hi {
            problem(entity, r.name, "minCount \(lo) is greater than maxCount \(hi)")
        }
        if let lo = r.minCount, lo < 0 { problem(entity, r.name, "minCount \(lo) is negative") }

        // S5
        guard self.entity(named: r.destination) != nil else {
            problem(entity, r.name, "its destination entity \"\(r.destination)\" does not exist")
            return
        }
        guard let inverseName = r.inverse else {
            problem(entity, r.name, "it has no inverse; add a relationship on \"\(r.destination)\" that points back and name it here (DocStore keeps both sides in step)")
            return
        }
        guard let inverse = allRelationships(of: r.destination).first(where: { $0.name == inverseName }) else {
            problem(entity, r.name, "its inverse \"\(r.destination).\(inverseName)\" does not exist")
            return
        }
        if !self.entity(entity, isKindOf: inverse.destination) {
            problem(entity, r.name, "its inverse \"\(r.destination).\(inverseName)\" leads to \"\(inverse.destination)\", not back to \"\(entity)\"")
        } else if inverse.inverse != r.name {
            problem(entity, r.name, "its inverse \"\(r.destination).\(inverseName)\" names \(inverse.inverse.map { "\"\($0)\"" } ?? "no inverse") as its own inverse, not \"\(r.name)\"")
        }

        // S7
        if r.deleteRule == .nullify && !inverse.isToMany && !inverse.isOptional {
            problem(entity, r.name, "deleting a \(entity) would nullify \"\(r.destination).\(inverseName)\", which is a required to-one: use cascade or deny, or make \"\(inverseName)\" optional")
        }
    }
}
