// Store+RemoteChanges: applying the server's changes to a store as one save (Format/sync.md §
// Applying). The device side of sync (DocStoreSync) maps global IDs to primary keys and decides
// which fields win; this file turns its decisions into context operations, so inverses and
// delete rules are kept exactly as for a local save, and saves them with sync's author so they
// are never pushed back.
//
//   RA1 one call is one save: the changes, the history transaction (authored by sync) and
//       sync's own bookkeeping (`alsoWrite`: ID mappings, the cursor) commit together or not
//       at all, so a crash can neither apply a change twice nor lose its mapping.
//   RA2 validation is skipped: the server's state was validated on the device that made it,
//       and a replica must take it even while a parent is still on its way.
//   RA3 an operation naming an object this store does not have (deleted here meanwhile) is
//       skipped, never an error: the server's feed decides what exists. A to-one set to such
//       an object is set to nil (the server holds it so, M5/M6).
//   RA4 the objects a call inserts exist before its first operation runs, so a reference or
//       link to an object later in the same page resolves, whatever the order.
//   RA6 a delete is applied even where a deny rule would refuse it in a local save (the
//       server decided it, M2): the objects that would hold it back lose their link to it, as
//       with nullify (Context+Delete). A required relationship left empty so stays empty until
//       the app fills it (its next save of that object says so).
//   RA5 a link removal of a link that is not there changes nothing (a page may hold an add and
//       removes of one link, collapsed from several entries).
//   RA7 every ordered to-many the call changed, and each one an `.arrange` names, is put in
//       the order the caller's `arrange` gives, just before the save: the caller decides the
//       order of the members the call leaves (sync's rule OR1), whatever the operations added.
//       An answer that is not a permutation of the members is ignored.

import Foundation
package import DocStoreEngine

/// A save's hook while sync applies remote changes (RA1).
final class RemoteApply {
    let alsoWrite: (WriteTransaction) throws -> Void
    init(_ alsoWrite: @escaping (WriteTransaction) throws -> Void) { self.alsoWrite = alsoWrite }
}

/// One change sync applies, with primary keys already resolved.
package enum RemoteOperation: Sendable {
    /// Sets attributes and to-one relationships (`.reference(key)` or `.null`) of the object
    /// `key`, inserting it first when `isNew` (with the key sync reserved).
    case upsert(entity: String, key: UInt64, isNew: Bool, values: [String: StoredValue])
    /// Adds (`present`) or removes a to-many link.
    case link(key: UInt64, relationship: String, target: UInt64, present: Bool)
    /// Deletes the object, with its delete rules.
    case delete(key: UInt64)
    /// Puts the ordered to-many `relationship` of the object `key` in the order `arrange`
    /// gives (RA7), even if no other operation changes it.
    case arrange(key: UInt64, relationship: String)
}

/// The order an ordered to-many should have (RA7): given the object, the relationship and its
/// members in their current order, the members in the wanted order.
package typealias RemoteArrangement = (_ key: UInt64, _ relationship: String, _ members: [UInt64]) throws(DocStoreError) -> [UInt64]

/// What applying came to.
package struct RemoteApplyReport: Sendable {
    /// Operations skipped because their object is not here (RA3).
    package var skipped = 0
}

extension Store {
    /// Applies `operations` in order as one save authored `author`, with `alsoWrite` in its
    /// transaction (RA1); when nothing changes, `alsoWrite` still runs, in a write of its own.
    package func applyRemote(_ operations: [RemoteOperation], author: String, arrange: RemoteArrangement? = nil,
                             alsoWrite: @escaping (WriteTransaction) throws -> Void) throws(DocStoreError) -> RemoteApplyReport {
        let context = Context(store: self, name: "sync")
        context.transactionAuthor = author
        context.remoteApply = RemoteApply(alsoWrite)
        var report = RemoteApplyReport()
        func existing(_ key: UInt64) throws(DocStoreError) -> ManagedObject? {
            guard let entity = model.entity(ofKey: key) else { return nil }
            if let o = context.registry[key]?.takeUnretainedValue(), o.isInserted { return o.isDeleted ? nil : o }
            do {
                let o = try context.existingObject(with: ObjectID(store: identifier, entity: entity.name, key: key))
                return o.isDeleted ? nil : o
            } catch where error.code == .objectNotFound { return nil }
        }
        // RA4: new objects exist before any operation refers to them.
        for case .upsert(let name, let key, true, _) in operations {
            guard let entity = model.entity(named: name), !entity.description.isAbstract else { continue }
            let object = entity.objectClass.init(_$fault: _$FaultToken(entity: entity, key: 0, context: context))
            context.attachNew(object, entity, key: key, awake: false)
        }
        for operation in operations {
            switch operation {
            case .upsert(let name, let key, _, let values):
                guard let entity = model.entity(named: name), !entity.description.isAbstract,
                      let object = try existing(key) else { report.skipped += 1; continue }
                for (propertyName, value) in values.sorted(by: { $0.key < $1.key }) {
                    guard let slot = entity.slotByName[propertyName] else { continue }
                    let p = entity.properties[slot]
                    switch p.kind {
                    case .attribute(let a):
                        guard value.isNull || value.fits(a.type) else { continue }
                        try context.setStored(value, of: object, slot: slot)
                    case .toOne:
                        if case .reference(let target) = value, let t = try existing(target) {
                            try context.setToOne(t, of: object, p)
                        } else {
                            // RA3 for a target: one this store deleted (a delete the server
                            // has or will have) — the server holds such a reference as nil (M5,
                            // M6), so nil it is here too, not the value it had before.
                            if !value.isNull { report.skipped += 1 }
                            try context.setToOne(nil, of: object, p)
                        }
                    case .toMany:
                        continue
                    }
                }
            case .link(let key, let relationship, let target, let present):
                guard let object = try existing(key), let entity = object.entityInfo,
                      let slot = entity.slotByName[relationship], entity.properties[slot].isToMany,
                      let t = try existing(target) else { report.skipped += 1; continue }
                let p = entity.properties[slot]
                if present {
                    try context.addLink(object, p, t)
                } else if try context.members(of: object, p).contains(t.key) {
                    // RA5: only a link that is there is removed, so a removal of one that is not
                    // cannot cancel a later addition on one side only.
                    try context.removeLink(object, p, t)
                }
            case .delete(let key):
                guard let object = try existing(key) else { report.skipped += 1; continue }
                try context.delete(object)
            case .arrange:
                continue
            }
        }
        if let arrange { try arrangeOrdered(operations, in: context, existing: existing, by: arrange) }
        if context.hasChanges {
            try context.save()
        } else {
            try write { txn in try alsoWrite(txn) }
        }
        return report
    }

    /// RA7: every ordered to-many this call changed or named, in the order `arrange` gives.
    private func arrangeOrdered(_ operations: [RemoteOperation], in context: Context,
                                existing: (UInt64) throws(DocStoreError) -> ManagedObject?,
                                by arrange: RemoteArrangement) throws(DocStoreError) {
        var wanted: [(object: ManagedObject, p: PropertyInfo)] = []
        var seen: Set<[UInt64]> = []
        func note(_ object: ManagedObject, _ p: PropertyInfo) {
            if seen.insert([object.key, UInt64(p.slot)]).inserted { wanted.append((object, p)) }
        }
        for case .arrange(let key, let relationship) in operations {
            guard let object = try existing(key), let entity = object.entityInfo, let slot = entity.slotByName[relationship],
                  entity.properties[slot].isToMany, entity.properties[slot].isOrdered else { continue }
            note(object, entity.properties[slot])
        }
        for object in context.changed.values.sorted(by: { $0.key < $1.key }) where !object.isDeleted {
            guard let entity = object.entityInfo else { continue }
            for (slot, state) in object.toMany ?? ToManyStates() where state.hasChanges && entity.properties[slot].isOrdered {
                note(object, entity.properties[slot])
            }
        }
        for (object, p) in wanted {
            let members = try context.members(of: object, p)
            let order = try arrange(object.key, p.name, members)
            guard order != members, order.count == members.count, Set(order) == Set(members) else { continue }
            try context.reorder(object, p, order)
        }
    }
}
