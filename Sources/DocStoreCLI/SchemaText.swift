// SchemaText: a store's schema in words for `docstore inspect --schema` — each entity with its
// parent, its attributes (type and options), its relationships (destination, inverse, delete
// rule, cardinality) and its indexes, as a developer would read a Core Data model editor.

import DocStore
import Foundation

enum SchemaText {
    static func render(_ schema: Schema, versionLine: String) -> String {
        var out = [versionLine]
        for entity in schema.entities {
            var head = "entity \(entity.name)"
            if let parent = entity.parent { head += " : \(parent)" }
            if entity.isAbstract { head += "  (abstract)" }
            if let original = entity.originalName { head += "  (was \(original))" }
            out.append("")
            out.append(head)
            let width = max(12, (entity.attributes.map(\.name) + entity.relationships.map(\.name)).map(\.count).max() ?? 0)
            func name(_ s: String) -> String { s.padding(toLength: width, withPad: " ", startingAt: 0) }
            let destinationWidth = max(8, entity.relationships.map(\.destination.count).max() ?? 0)
            for a in entity.attributes {
                out.append("  \(name(a.name))  \(a.type.description.padding(toLength: 10, withPad: " ", startingAt: 0))  \(options(of: a).joined(separator: ", "))")
            }
            for r in entity.relationships {
                var parts = [r.isToMany ? (r.isOrdered ? "ordered to-many" : "to-many") : "to-one", "inverse \(r.inverse ?? "none")",
                             "delete rule \(r.deleteRule.rawValue)", r.isOptional ? "optional" : "required"]
                if let lo = r.minCount { parts.append("at least \(lo)") }
                if let hi = r.maxCount { parts.append("at most \(hi)") }
                if let original = r.originalName { parts.append("was \(original)") }
                out.append("  \(name(r.name))  → \(r.destination.padding(toLength: destinationWidth, withPad: " ", startingAt: 0))  \(parts.joined(separator: ", "))")
            }
            for index in entity.indexes {
                out.append("  index (\(index.properties.joined(separator: ", ")))\(index.isUnique ? "  unique" : "")")
            }
            for constraint in entity.uniquenessConstraints where constraint.count > 1 && !entity.indexes.contains(where: { $0.properties == constraint && $0.isUnique }) {
                out.append("  unique together (\(constraint.joined(separator: ", ")))")
            }
        }
        return out.joined(separator: "\n")
    }

    static func options(of a: AttributeDescription) -> [String] {
        var parts = [a.isOptional ? "optional" : "required"]
        if a.isUnique { parts.append("unique") } else if a.isIndexed { parts.append("indexed") }
        if let d = a.defaultValue, !d.isNull { parts.append("default \(d)") }
        if let lo = a.minimum { parts.append("minimum \(lo)") }
        if let hi = a.maximum { parts.append("maximum \(hi)") }
        if let lo = a.minLength { parts.append("min length \(lo)") }
        if let hi = a.maxLength { parts.append("max length \(hi)") }
        if let p = a.pattern { parts.append("pattern \(p)") }
        if a.allowsExternalStorage { parts.append("external storage") }
        if a.preservesValueOnDeletion { parts.append("kept in history on deletion") }
        if let original = a.originalName { parts.append("was \(original)") }
        return parts
    }
}
