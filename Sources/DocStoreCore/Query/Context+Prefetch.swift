// Context+Prefetch: `relationshipKeyPathsForPrefetching` — loading the objects a fetch's results
// reach through relationships, one level of a key path at a time for all results together.
//
//   P1  Every key path is checked before anything is read: each step must be a relationship of
//       the entity reached so far (`.invalidQuery` otherwise).
//   P2  Per level: to-one targets come from the objects' values; to-many members from one read
//       transaction over the links tree (a prefix scan per object, in key order), which loads
//       the relationship's state so reading it later costs no read; then the targets' records
//       are read in one transaction into the row cache. A level costs two reads, not one per
//       object (no N+1).
//   P3  A level's targets are made into objects only when a further step needs them; the
//       context holds those objects until its next fetch with prefetching (or reset), so their
//       loaded relationships stay loaded. The last level's records wait in the row cache, so
//       its faults fire without reading the store.

import Foundation
internal import DocStoreEngine

extension Context {
    func prefetch(_ keyPaths: [String], from results: [ManagedObject], entity: EntityInfo) throws(DocStoreError) {
        let model = store.model
        // P1
        var paths: [[String]] = []
        for path in keyPaths {
            let names = path.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
            var current = entity
            for name in names {
                guard let p = current.property(named: name), p.relationship != nil,
                      p.destination >= 0, p.destination < model.entities.count else {
                    throw DocStoreError(.invalidQuery, "cannot prefetch \"\(path)\": \"\(name)\" is not a relationship of \(current.name)",
                                        entity: current.name, property: name)
                }
                current = model.entities[p.destination]
            }
            paths.append(names)
        }
        var made: [ManagedObject] = []
        defer { prefetchedObjects = made }
        for names in paths {
            var level = results
            for (depth, name) in names.enumerated() {
                let targets = try prefetchLevel(name, of: level)
                // P3
                guard depth + 1 < names.count else { break }
                level = []
                level.reserveCapacity(targets.count)
                for key in targets {
                    let object = try materialize(key)
                    try fulfill(object)
                    level.append(object)
                }
                made += level
            }
        }
    }

    /// P2: the keys the relationship `name` of `objects` reaches (each once), with their
    /// records in the row cache and the to-many states loaded.
    private func prefetchLevel(_ name: String, of objects: [ManagedObject]) throws(DocStoreError) -> [UInt64] {
        var targets: [UInt64] = []
        var seen = Set<UInt64>()
        func reach(_ key: UInt64) { if seen.insert(key).inserted { targets.append(key) } }
        var unloaded: [(object: ManagedObject, state: ToManyState)] = []
        var unloadedProperty: PropertyInfo?
        for object in objects {
            guard let p = object.entityInfo?.property(named: name) else { continue }
            if p.isToOne {
                if let key = try toOneKey(of: object, p) { reach(key) }
                continue
            }
            let state = toManyState(of: object, p)
            if let members = state.members {
                for key in members { reach(key) }
            } else if object.key != 0, !object.isInserted {
                unloaded.append((object, state))
                unloadedProperty = p
            }
        }
        if let p = unloadedProperty {
            unloaded.sort { $0.object.key < $1.object.key }
            let stored = try storedMembers(of: unloaded.map(\.object.key), p)
            for (i, u) in unloaded.enumerated() {
                u.state.load(stored: stored[i])
                for key in u.state.members ?? [] { reach(key) }
            }
        }
        try prefetchRecords(targets)
        return targets
    }
}
