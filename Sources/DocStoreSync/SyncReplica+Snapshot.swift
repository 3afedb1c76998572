// SyncReplica+Snapshot: a replica as comparable text — every synced object by its global ID,
// with its attributes and synced relationships (targets by global ID), and the order of each
// ordered to-many. Two replicas that
// converged have equal snapshots; the convergence tests compare them object by object.

import DocStoreCore
import DocStoreSyncWire
import Foundation

extension SyncReplica {
    /// "Entity/GLOBAL-ID" → "name=value; …" for every synced object.
    func snapshot() throws(SyncError) -> [String: String] {
        do {
            let context = Context(store: store)
            var out: [String: String] = [:]
            let ids: (ManagedObject) throws -> String = { o in
                guard let key = o.objectID?.primaryKey,
                      let id = try store.syncRead({ try SyncState.globalID(ofKey: key, $0) }) else { return "unmapped" }
                return id.uuidString
            }
            for (name, entity) in model.entities.sorted(by: { $0.key < $1.key }) {
                for object in try context.fetch(entityName: name) where object.entityName == name {
                    var parts: [String] = []
                    for attribute in entity.attributes.keys.sorted() {
                        parts.append("\(attribute)=\(String(describing: try object.value(forKey: attribute) ?? "nil"))")
                    }
                    for r in entity.toOnes.keys.sorted() {
                        let target = try object.value(forKey: r) as? ManagedObject
                        parts.append("\(r)=\(try target.map(ids) ?? "nil")")
                    }
                    for r in entity.toManys.keys.sorted() {
                        let value = try object.value(forKey: r)
                        let targets = (value as? Set<ManagedObject>).map(Array.init) ?? (value as? [ManagedObject]) ?? []
                        parts.append("\(r)=[\(try targets.map(ids).sorted().joined(separator: ","))]")
                    }
                    for r in entity.orders {
                        let targets = try object.value(forKey: r) as? [ManagedObject] ?? []
                        parts.append("\(SyncModel.orderField(r))=[\(try targets.map(ids).joined(separator: ","))]")
                    }
                    out["\(name)/\(try ids(object))"] = parts.joined(separator: "; ")
                }
            }
            return out
        } catch let error as DocStoreError {
            throw SyncError.store(error, "reading the replica")
        } catch {
            throw SyncError(.store, "reading the replica: \(error)")
        }
    }
}

extension SyncEngine {
    /// The replica as comparable text (SyncReplica+Snapshot), for convergence tests.
    package func snapshot() throws(SyncError) -> [String: String] { try replicaForTests.snapshot() }
}
