// Store+UniqueMerge: two objects that came to hold one unique value on different devices,
// made one (Format/sync.md § Unique values, U1–U3). Sync decides which object stays (the same
// everywhere) and calls these; this file finds who holds a value and moves everything the
// other object had onto the one that stays.
//
//   UM1 a value is looked up in the constraint's own index: a unique attribute's, or a
//       compound uniqueness constraint's (`#Unique`) over attributes and to-ones, with all its
//       elements non-nil (a nil element never clashes). Constraints over document fields are
//       not looked up.
//   UM2 a merge is one save with its own author (not sync's, so it is pushed like a local
//       save): the loser's to-many members join the winner's, its to-one targets move to the
//       winner where the winner has none, and the loser — with no links left, so no delete
//       rule reaches further — is deleted. Validation is skipped, as for applied changes (RA2).

import Foundation
package import DocStoreEngine

extension Store {
    /// The key of the object holding `value` in the unique attribute `attribute` of `entity`
    /// (UM1), nil when no object does.
    package func uniqueHolder(entity: String, attribute: String, value: StoredValue, _ txn: Transaction) throws -> UInt64? {
        guard let e = model.entity(named: entity), let p = e.property(named: attribute), p.isUnique, let tree = p.indexTree,
              let k = Context.indexKey(value, unique: true, key: 0), try txn.treeExists(tree),
              let owner = try txn.get(k, in: tree) else { return nil }
        return PrimaryKey.read(owner)
    }

    /// The key of the object holding `values` — one per property of `constraint`, to-ones as
    /// `.reference(key)` — in that compound uniqueness constraint of `entity` (UM1); nil when
    /// no object does, a value is nil, or `entity` has no such constraint.
    package func uniqueHolder(entity: String, constraint: [String], values: [StoredValue], _ txn: Transaction) throws -> UInt64? {
        guard let e = model.entity(named: entity), values.count == constraint.count,
              let index = e.compoundIndexes.first(where: { $0.isUnique && !$0.isMultiValued && $0.description.properties == constraint }),
              let entry = Context.compoundEntry(elements: values, isUnique: true, key: 0), entry.checksUniqueness,
              try txn.treeExists(index.tree), let owner = try txn.get(entry.key, in: index.tree) else { return nil }
        return PrimaryKey.read(owner)
    }

    /// Merges each `loser` into its `winner` (UM2) in one save authored `author`; pairs whose
    /// objects are gone are skipped.
    package func mergeObjects(_ pairs: [(loser: UInt64, winner: UInt64)], author: String) throws(DocStoreError) {
        let context = Context(store: self, name: "sync merge")
        context.transactionAuthor = author
        context.remoteApply = RemoteApply { _ in }
        func object(_ key: UInt64) throws(DocStoreError) -> ManagedObject? {
            guard let entity = model.entity(ofKey: key) else { return nil }
            do {
                let o = try context.existingObject(with: ObjectID(store: identifier, entity: entity.name, key: key))
                return o.isDeleted ? nil : o
            } catch where error.code == .objectNotFound { return nil }
        }
        for (loserKey, winnerKey) in pairs where loserKey != winnerKey {
            guard let loser = try object(loserKey), let winner = try object(winnerKey),
                  let entity = loser.entityInfo, winner.entityInfo === entity else { continue }
            for p in entity.properties where p.isToMany {
                for key in try context.members(of: loser, p) {
                    let target = try context.materialize(key)
                    try context.removeLink(loser, p, target)
                    try context.addLink(winner, p, target)
                }
            }
            for p in entity.properties where p.isToOne {
                guard let key = try context.toOneKey(of: loser, p) else { continue }
                let target = try context.materialize(key)
                try context.removeLink(loser, p, target)
                if try context.toOneKey(of: winner, p) == nil { try context.addLink(winner, p, target) }
            }
            try context.delete(loser)
        }
        if context.hasChanges { try context.save() }
    }
}
