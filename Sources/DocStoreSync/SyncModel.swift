// SyncModel: which entities and properties sync, and as what (Format/sync.md § What syncs).
// Built once from the store's schema.
//
//   SM1 every relationship pair syncs from one side only, and the other side follows by
//       inverse maintenance on each device: a to-one whose inverse is to-many syncs its
//       to-one side; between two to-ones or two to-manys, the side whose "Entity.name" sorts
//       first. A relationship without an inverse syncs itself.
//   SM2 local-only entities (caches, UI state) never sync, nor do relationships to them.
//   SM3 an entity with a unique attribute gets deterministic global IDs from that value — or,
//       without one, from a compound uniqueness constraint's values (GlobalIDs) — so two
//       devices creating the same unique value mean one object.
//   SM4 every ordered to-many (whichever side syncs its links, SM1) also syncs its order, as
//       a field of its own named "<relationship>#order" (Format/sync.md § Ordered
//       relationships).

import DocStoreCore
import DocStoreSyncWire
import Foundation

struct SyncModel: Sendable {
    struct Entity: Sendable {
        var name: String
        /// Attribute name → type name (the manifest's kind).
        var attributes: [String: String]
        /// Synced to-one relationships (SM1) → destination entity.
        var toOnes: [String: String]
        /// Synced to-many relationships (SM1) → destination entity.
        var toManys: [String: String]
        /// Ordered to-many relationships whose order syncs (SM4), either side of the pair.
        var orders: [String] = []
        /// The unique attribute deterministic IDs come from (SM3), if any.
        var identityAttribute: String?
        /// Every attribute unique on its own (U1), sorted.
        var uniqueAttributes: [String] = []
        /// Compound uniqueness constraints over attributes and synced to-ones (U1), each in
        /// its declared order.
        var compoundUniques: [[String]] = []
        /// The compound constraint deterministic IDs come from when no attribute is unique on
        /// its own (SM3, G1).
        var identityConstraint: [String]?
    }

    var entities: [String: Entity] = [:]

    init(schema: Schema, localOnly: Set<String>) {
        let byName = Dictionary(schema.entities.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        func lineage(_ e: EntityDescription) -> [EntityDescription] {
            var out = [e]
            var seen: Set<String> = [e.name]
            while let parent = out.last?.parent, let p = byName[parent], seen.insert(parent).inserted { out.append(p) }
            return out
        }
        for description in schema.entities where !localOnly.contains(description.name) {
            let all = lineage(description)
            var entity = Entity(name: description.name, attributes: [:], toOnes: [:], toManys: [:])
            for a in all.flatMap(\.attributes) { entity.attributes[a.name] = "\(a.type)" }
            entity.uniqueAttributes = all.flatMap(\.attributes).filter(\.isUnique).map(\.name).sorted()
            entity.identityAttribute = entity.uniqueAttributes.first
            for r in all.flatMap(\.relationships) where !localOnly.contains(r.destination) {
                if r.isToMany && r.isOrdered { entity.orders.append(r.name) }
                guard Self.syncsFromThisSide(r, of: description.name, byName: byName) else { continue }
                if r.isToMany { entity.toManys[r.name] = r.destination } else { entity.toOnes[r.name] = r.destination }
            }
            entity.orders.sort()
            entity.compoundUniques = all.flatMap(\.indexes).filter(\.isUnique).map(\.properties).filter { names in
                names.allSatisfy { entity.attributes[$0] != nil || entity.toOnes[$0] != nil }
                    && !(names.count == 1 && entity.uniqueAttributes.contains(names[0]))
            }
            if entity.identityAttribute == nil {
                entity.identityConstraint = entity.compoundUniques.min { $0.joined(separator: ",") < $1.joined(separator: ",") }
            }
            entities[description.name] = entity
        }
    }

    /// Whether objects of the entity get deterministic IDs (SM3).
    static func hasIdentity(_ entity: Entity) -> Bool { entity.identityAttribute != nil || entity.identityConstraint != nil }

    /// The name of the field that carries an ordered relationship's order (SM4).
    static func orderField(_ relationship: String) -> String { relationship + "#order" }

    /// SM1.
    static func syncsFromThisSide(_ r: RelationshipDescription, of entity: String, byName: [String: EntityDescription]) -> Bool {
        guard let inverseName = r.inverse, let destination = byName[r.destination],
              let inverse = destination.relationships.first(where: { $0.name == inverseName }) else { return true }
        if r.isToMany != inverse.isToMany { return !r.isToMany }
        return "\(entity).\(r.name)" < "\(r.destination).\(inverseName)"
    }

    /// The manifest a push carries.
    func manifest(version: Int) -> SchemaManifest {
        var out: [String: [String: String]] = [:]
        for (name, e) in entities {
            var fields = e.attributes
            for r in e.toOnes.keys { fields[r] = "toOne" }
            for r in e.toManys.keys { fields[r] = "toMany" }
            for r in e.orders { fields[Self.orderField(r)] = "order" }
            out[name] = fields
        }
        return SchemaManifest(version: version, entities: out)
    }
}
