// ServerSnapshot: the server's own state, read from PostgreSQL, in the form of a replica's
// snapshot (SyncReplica+Snapshot) — every live object with its attributes, to-one targets and
// to-many links, targets by global ID, a reference to a deleted object as nil. The convergence
// tests require every replica to equal it, not only each other.

import DocStoreSyncWire
import Foundation
@testable import DocStoreServer
@testable import DocStoreSync

enum ServerSnapshot {
    /// The snapshot of the server database `postgres`, for the entities of `model`.
    static func read(postgres: String, model: SyncModel) throws -> [String: String] {
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
            out["\(state.entity)/\(id.uuidString)"] = parts.joined(separator: "; ")
        }
        return out
    }
}
