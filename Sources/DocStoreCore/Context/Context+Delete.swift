// Context+Delete: deleting objects and applying their relationships' delete rules at once (as
// Core Data does when it processes pending changes):
//   nullify   the link is removed from both sides (the targets stay);
//   cascade   the targets are deleted too, and so on along chains; cycles end because an object
//             already deleted is not visited again (a worklist, not recursion, so long chains
//             cannot overflow the stack);
//   deny      nothing changes now; save refuses while a target that is not deleted remains
//             (Context+Save.swift, D1);
//   noAction  nothing changes: the targets keep pointing at the deleted object.
// Deleting an object inserted in this context and never saved removes it from the context.

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
        // Work on a copy of the state, so a failure leaves the context as it was.
        journal = UndoGroup()   // records what the delete touches, to put back if it fails
        isPropagatingDelete = true
        defer { isPropagatingDelete = false; journal = nil }
        do {
            var work: [ManagedObject] = [object]
            while let next = work.popLast() {
                if next.isDeleted { continue }
                try willChange(next)
                next.prepareForDeletion()
                next.flags.insert(.deleted)
                guard let entity = next.entityInfo else { continue }
                for p in entity.properties {
                    guard let r = p.relationship else { continue }
                    let targets: [UInt64] = p.isToMany ? try members(of: next, p) : (try toOneKey(of: next, p)).map { [$0] } ?? []
                    switch r.deleteRule {
                    case .nullify:
                        for key in targets { try removeLink(next, p, try materialize(key)) }
                    case .cascade:
                        for key in targets {
                            let target = try materialize(key)
                            try fulfill(target)
                            if !target.isDeleted { work.append(target) }
                        }
                    case .deny, .noAction:
                        break
                    }
                }
            }
        } catch {
            if let touched = journal { _ = apply(touched) }
            throw error
        }
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

extension ToManyState {
    func copy() -> ToManyState {
        let c = ToManyState()
        c.members = members
        c.memberSet = memberSet
        c.added = added
        c.removed = removed
        c.orderChanged = orderChanged
        c.isNew = isNew
        return c
    }
}
