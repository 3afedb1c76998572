// ServerSnapshot: the server's own state, read from PostgreSQL, in the form of a replica's
// snapshot (SyncReplica+Snapshot) — every live object with its attributes, to-one targets and
// to-many links, targets by global ID, a reference to a deleted object as nil, and each ordered
// to-many in the order Format/sync.md's rule OR1 gives — computed here on its own, from the
// server's members and stored order, as an oracle for the devices' arrangement. The convergence
// tests require every replica to equal it, not only each other.

import DocStoreCore
import DocStoreSyncWire
import Foundation
@testable import DocStoreServer
@testable import DocStoreSync

enum ServerSnapshot {
    /// The snapshot of the server database `postgres`, for the entities of `model`.
    static func read(postgres: String, model: SyncModel, schema: Schema) throws -> [String: String] {
        let separator = "\u{1F}"
        func rows(_ sql: String) throws -> [[String]] {
            try TestPostgres.run(["psql", postgres, "-At", "-F", separator, "-c", sql])
                .split(separator: "\n").map { $0.components(separatedBy: separator) }
        }
        var states: [UUID: ObjectState] = [:]
        for row in try rows("SELECT id, state FROM docstore_objects") where row.count == 2 {
            guard let id = UUID(uuidString: row[0]) else { throw TestEnvironmentError("a bad object row: \(row)") }
            states[id] = try WireCoding.decode(ObjectState.self, from: Data(row[1].utf8))
        }
        func alive(_ id: UUID) -> Bool { states[id].map { !$0.deleted } ?? false }
        var links: [UUID: [String: [String]]] = [:]
        for row in try rows("SELECT source, relationship, target FROM docstore_links WHERE present") where row.count == 3 {
            guard let source = UUID(uuidString: row[0]), let target = UUID(uuidString: row[2]) else { continue }
            if alive(target) { links[source, default: [:]][row[1], default: []].append(target.uuidString) }
        }
        var out: [String: String] = [:]
        for (id, state) in states where !state.deleted {
            guard let entity = model.entities[state.entity] else { continue }
            var parts: [String] = []
            for name in entity.attributes.keys.sorted() {
                let value = state.fields[name]?.value.storedValue?.anyValue
                parts.append("\(name)=\(value.map { String(describing: $0) } ?? "nil")")
            }
            for name in entity.toOnes.keys.sorted() {
                if case .reference(let target) = state.fields[name]?.value, alive(target) {
                    parts.append("\(name)=\(target.uuidString)")
                } else {
                    parts.append("\(name)=nil")
                }
            }
            for name in entity.toManys.keys.sorted() {
                parts.append("\(name)=[\((links[id]?[name] ?? []).sorted().joined(separator: ","))]")
            }
            for name in entity.orders {
                var members: [String]
                if entity.toManys[name] != nil {
                    members = links[id]?[name] ?? []
                } else {
                    // The members are the objects whose inverse (a to-one field, or links the
                    // other side syncs) names this one.
                    let r = schema.entities.first { $0.name == state.entity }?.relationships.first { $0.name == name }
                    let inverse = r?.inverse ?? ""
                    members = states.filter { other in
                        !other.value.deleted && (other.value.fields[inverse]?.value == .reference(id)
                            || links[other.key]?[inverse]?.contains(id.uuidString) == true)
                    }.map(\.key.uuidString)
                }
                var order: [String] = []
                if case .order(let ids)? = state.fields[name + "#order"]?.value { order = ids.map(\.uuidString) }
                let listed = order.reduce(into: [String]()) { out, m in if members.contains(m) && !out.contains(m) { out.append(m) } }
                members = listed + members.filter { !listed.contains($0) }.sorted()
                parts.append("\(name)#order=[\(members.joined(separator: ","))]")
            }
            out["\(state.entity)/\(id.uuidString)"] = parts.joined(separator: "; ")
        }
        return out
    }
}
