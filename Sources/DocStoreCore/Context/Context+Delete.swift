// Context+Delete: deleting objects and applying their relationships' delete rules at once (as
// Core Data does when it processes pending changes):
//   nullify   the link is removed from both sides (the targets stay);
//   cascade   the targets are deleted too, and so on along chains; cycles end because an object
//             already deleted is not visited again (a worklist, not recursion, so long chains
//             cannot overflow the stack);
//   deny      nothing changes now; save refuses while a target that is not deleted remains
//             (Context+Save.swift, D1) — except for a delete sync applies, which nullifies
//             (Store+RemoteChanges RA6);
//   noAction  nothing changes: the targets keep pointing at the deleted object.
// Deleting an object inserted in this context and never saved removes it from the context.
//
//   D2  a deleted object (saved before) keeps its saved values until the save removes it: its
//       own to-ones that a rule nullifies are marked (`ManagedObject.nulledSlots`, slots below
//       16; others are written as nil) and read as nil, so no snapshot of it is taken and its
//       record is not decoded or copied. Its version is still checked at save (K1), which reads
//       the index values and tombstone from the saved values; a rollback or undo clears the
//       marks, and inserting it again turns them into values.

import Foundation

extension Context {
    /// Deletes `object` at the next save, applying the delete rules of its relationships now.
    /// Deleting an object twice does nothing.
    ///
    /// - Throws: ``DocStoreError/Code/wrongContext`` for an object of another context;
    ///   ``DocStoreError/Code/storage`` if loading a relationship failed (nothing is deleted then).
    public func delete(_ object: ManagedObject) throws(DocStoreError) {
        try undoable { () throws(DocStoreError) in try deleteNow(object) }
    }

    private func deleteNow(_ object: ManagedObject) throws(DocStoreError) {
        try check(object, "deleting")
        if object.isDeleted { return }
        // Keep what the delete changes, so a failure leaves the context as it was: each touched
        // object's state before its first change, and a log of its to-many changes.
        // The last delete's emptied journal: its storage is reused, not made anew per object.
        var group = UndoGroup()
        swap(&group, &spareJournal)
        journal = group
        isPropagatingDelete = true
        defer {
            isPropagatingDelete = false
            if var used = journal {
                journal = nil
                used.removeAll()
                spareJournal = used
            }
            for state in journaledStates { state.changeLog = nil }
            journaledStates = []
        }
        do {
            try propagateDeletion([object])
        } catch {
            for state in journaledStates { state.undoLoggedChanges() }
            if let touched = journal { _ = apply(touched) }
            throw error
        }
    }

    /// Records `o`'s state in the delete's journal before its first change: its values, flags
    /// and registration as they are, and its to-many states as themselves, which log their
    /// changes from now on (a copy of each, per object deleted, was what a delete spent most on).
    func recordForJournal(_ o: ManagedObject) {
        guard journal != nil, journal?.states[o.key] == nil else { return }
        journal?.states[o.key] = UndoGroup.State(object: o, key: o.key, values: o.decodedValues, record: o.record, flags: o.flags,
                                                 nulledSlots: o.nulledSlots, toMany: o.toMany,
                                                 registered: registry[o.key] != nil, changed: changed[o.key] != nil,
                                                 committed: committed[o.key])
        journal?.order.append(o.key)
        for (_, state) in o.toMany ?? ToManyStates() where state.changeLog == nil {
            state.changeLog = []
            journaledStates.append(state)
        }
    }

    /// Marks `roots` deleted and applies the delete rules from them through the graph.
    func propagateDeletion(_ roots: [ManagedObject]) throws(DocStoreError) {
        var work = roots
        while let next = work.popLast() {
            if next.isDeleted { continue }
            // Its record leaves the store at the save: the row cache need not keep it meanwhile
            // (for a large delete, a copy of every deleted record).
            try fulfill(next, caching: false)
            // Its values do not change: it keeps the saved ones (no snapshot to take, nothing
            // decoded), and the to-ones its rules nullify are marked (`nulledSlots`, D2).
            try willChange(next, record: false)
            changed.noteValuesMayChange(next.key)
            next.prepareForDeletion()
            next.flags.insert(.deleted)
            changed.noteDeleted(next)
            guard let entity = next.entityInfo else { continue }
            for p in entity.properties where p.relationship != nil {
                let targets: [UInt64] = p.isToMany ? try members(of: next, p, prefetching: false) : (try toOneKey(of: next, p)).map { [$0] } ?? []
                try applyDeleteRule(of: next, p, to: targets, &work)
            }
        }
    }

    /// Gives the targets of a delete rule that reads them (a cascade, or a nullify whose inverse
    /// is a to-one in their records) their records in one read transaction, read ahead into the
    /// faults themselves (R5), not the row cache: a cascade deletes them, and the save then
    /// takes their records out of the cache anyway.
    private func readTargetsAhead(_ keys: [UInt64]) throws(DocStoreError) {
        guard keys.count > 1 else { return }
        var faults: [ManagedObject] = []
        for key in keys {
            let target = try materialize(key)
            if target.isFault { faults.append(target) }
        }
        try readAhead(faults)
    }

    /// Applies `p`'s delete rule of the deleted `object` to `targets`; cascaded ones go to `work`.
    /// A deny rule is checked at save (D1), unless `denyNow` (the save is under way).
    func applyDeleteRule(of object: ManagedObject, _ p: PropertyInfo, to targets: [UInt64], _ work: inout [ManagedObject],
                         denyNow: Bool = false) throws(DocStoreError) {
        switch p.relationship?.deleteRule {
        case .nullify?:
            try nullify(object, p, targets)
        case .deny? where remoteApply != nil:
            // A delete sync applies is the server's decision (Format/sync.md RA6): a deny rule
            // cannot refuse it here, so the objects that would hold it back lose their link.
            try nullify(object, p, targets)
        case .cascade?:
            try readTargetsAhead(targets)
            for key in targets {
                let target = try materialize(key)
                try fulfill(target, caching: false)
                if !target.isDeleted { work.append(target) }
            }
        case .deny?:
            if denyNow, let key = targets.first {
                let target = try materialize(key)
                try fulfill(target)
                if !target.isDeleted {
                    throw DocStoreError(.deleteDenied, "\(object) cannot be deleted: \(p.name) still reaches \(target) (deny rule)", entity: object.entityInfo?.name, property: p.name)
                }
            }
        case .noAction?, nil:
            break
        }
    }

    private func nullify(_ object: ManagedObject, _ p: PropertyInfo, _ targets: [UInt64]) throws(DocStoreError) {
        // A to-many inverse changes without loading its owners (R2); a to-one is in their records.
        if p.isToMany, let first = targets.first, let q = inverse(of: p, on: try materialize(first)), q.isToOne {
            try readTargetsAhead(targets)
        }
        for key in targets {
            let target = try materialize(key)
            try removeLink(object, p, target)
            if p.isToOne, let q = inverse(of: p, on: target) { try removeHalf(target, q, object) }
        }
    }

    /// A delete whose object changed in the store since it was read (Context+Conflicts): its
    /// delete rules are applied again to what the store relates it to now and this context
    /// had not seen — a card added to a deleted board meanwhile is cascaded or nullified too.
    func reapplyDeleteRules(of object: ManagedObject, stored: [StoredValue], snapshot: [StoredValue],
                            denyNow: Bool = true) throws(DocStoreError) {
        guard let entity = object.entityInfo else { return }
        isPropagatingDelete = true
        defer { isPropagatingDelete = false }
        var work: [ManagedObject] = []
        for p in entity.properties where p.relationship != nil {
            var unseen: [UInt64] = []
            if p.isToMany {
                let state = toManyState(of: object, p)
                for key in try storedMembers(of: object.key, p) where !state.removed.contains(key) && !state.isMember(key) {
                    if let ref = registry[key], ref.takeUnretainedValue().isDeleted { continue }
                    unseen.append(key)
                }
            } else if p.slot < stored.count, case .reference(let key) = stored[p.slot], stored[p.slot] != snapshot[p.slot] {
                unseen.append(key)
            }
            try applyDeleteRule(of: object, p, to: unseen, &work, denyNow: denyNow)
        }
        try propagateDeletion(work)
    }

    /// Whether a deny rule holds `object` back from deletion: the first relationship with the
    /// deny rule that still reaches an object which is not deleted.
    func denyingRelationship(of object: ManagedObject) throws(DocStoreError) -> (PropertyInfo, ManagedObject)? {
        guard let entity = object.entityInfo else { return nil }
        for p in entity.properties where p.relationship?.deleteRule == .deny {
            let targets: [UInt64] = p.isToMany ? try members(of: object, p) : (try toOneKey(of: object, p)).map { [$0] } ?? []
            for key in targets {
                let target = try materialize(key)
                try fulfill(target)
                if !target.isDeleted && !target.isInvalidated { return (p, target) }
            }
        }
        return nil
    }
}
