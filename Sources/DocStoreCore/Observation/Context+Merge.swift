// Context+Merge: bringing a context up to date with other contexts' saves — Core Data's
// automaticallyMergesChangesFromParent and mergeChanges(fromContextDidSave:).
//
//   M1  an inserted object needs nothing (fetches read the store); it is reported as inserted.
//       An updated object is reported as refreshed whether this context has it or not, so
//       observers of lists can tell their results may have changed.
//   M2  an updated object registered here takes its new saved values and row version. Its own
//       unsaved edits stay on top, property by property (Core Data's refresh with
//       mergeChanges), and its saved snapshot becomes the new values, so a later save writes
//       only its edits and is no conflict. A to-many relationship that changed is reloaded on
//       next use, keeping unsaved additions and removals. A fault stays a fault.
//   M3  a deleted object registered here without unsaved changes leaves the context (deleted,
//       invalidated), and leaves the loaded relationships that held it; one with unsaved
//       changes stays, and its save meets the deletion as a conflict (Context+Conflicts.swift).
//   M4  merging the same transaction twice changes nothing the second time.
//   M6  an object deleted here but changed by the merged save has its delete rules applied to
//       what the store relates it to now, so its save leaves no half link behind.
//   M5  observers of an object's properties (Observation) hear of each property a merge
//       changed, as if it had been set.

internal import DocStoreEngine

extension Context {
    /// Whether the context merges every save other contexts commit to the store (Core Data's
    /// `automaticallyMergesChangesFromParent`; merges happen at the context's next
    /// ``processPendingChanges()`` — its next fetch or save, the main actor's next turn for
    /// the main context, a background context's next `perform`). Off for a new `Context`, on
    /// for ``Store/mainContext`` and ``BackgroundContext``, as in SwiftData.
    public var automaticallyMergesChangesFromParent: Bool {
        get { inbox != nil }
        set {
            if newValue, inbox == nil {
                let inbox = ContextInbox(origin: serial, wake: scheduler)
                store.changeHub.register(inbox)
                self.inbox = inbox
            } else if !newValue, let inbox {
                store.changeHub.unregister(inbox)
                self.inbox = nil
            }
        }
    }

    /// Merges a save another context committed — from its ``didSave()`` stream, the store's
    /// ``Store/transactions(entities:)`` or ``Store/history(after:entities:author:contextName:)``
    /// — and tells this context's observers (M1–M4).
    public func mergeChanges(from transaction: HistoryTransaction) {
        var event = ObjectsDidChange()
        merge(transaction, into: &event)
        post(event)
    }

    /// Merges changes known only by object ID (Core Data's
    /// `mergeChanges(fromRemoteContextSave:into:)`): updated objects take their saved values,
    /// all properties considered changed; deleted ones leave the context.
    public func mergeChanges(inserted: [ObjectID] = [], updated: [ObjectID] = [], deleted: [ObjectID] = []) {
        var event = ObjectsDidChange()
        for id in inserted where id.storeIdentifier == store.identifier { event.insertedObjectIDs.insert(id) }
        for id in updated where id.storeIdentifier == store.identifier {
            guard let ref = registry[id.primaryKey] else { continue }
            let object = ref.takeUnretainedValue()
            guard let entity = object.entityInfo else { continue }
            mergeUpdate(object, entity, slots: entity.properties.map(\.slot), id: id, into: &event)
        }
        mergeDeletes(deleted.filter { $0.storeIdentifier == store.identifier }, into: &event)
        post(event)
    }

    /// Merges `transaction` into the context, adding what changed to `event`.
    func merge(_ transaction: HistoryTransaction, into event: inout ObjectsDidChange) {
        var deleted: [ObjectID] = []
        for change in transaction.changes {
            let id = change.changedObjectID
            guard id.storeIdentifier == store.identifier else { continue }
            switch change.changeType {
            case .insert:
                event.insertedObjectIDs.insert(id)
            case .update:
                guard let ref = registry[id.primaryKey] else {
                    // Not here, but observers (a results controller) may show it.
                    event.refreshedObjectIDs.insert(id)
                    event.changedKeys[id, default: []].formUnion(change.updatedProperties)
                    continue
                }
                let object = ref.takeUnretainedValue()
                guard let entity = object.entityInfo else { continue }
                let slots = change.updatedProperties.compactMap { entity.slotByName[$0] }
                mergeUpdate(object, entity, slots: slots, id: id, into: &event)
            case .delete:
                deleted.append(id)
            }
        }
        mergeDeletes(deleted, into: &event)
    }

    /// M2 for one registered object.
    private func mergeUpdate(_ object: ManagedObject, _ entity: EntityInfo, slots: [Int], id: ObjectID, into event: inout ObjectsDidChange) {
        // Changed to-many relationships reload on next use; unsaved additions and removals stay.
        for slot in slots where entity.properties[slot].isToMany { object.toMany?[slot]?.rebase() }
        let names = Set(slots.map { entity.properties[$0].name })
        if !object.isFault {      // its row version moved on even when only links changed (W3)
            var fresh = entity.defaults
            guard let bytes = try? storedRecord(object.key, entity),
                  let version = try? RecordCoding.decode(bytes, key: object.key, into: &fresh, slotForField: entity.slotForField)
            else { return }
            let before = object.values
            let snapshot = committed[object.key] ?? object.values
            adoptStoredValues(object, entity, stored: fresh, rowVersion: version)
            if object.isDeleted {
                // Deleted here: what the store now relates it to gets its delete rules too (M6).
                for slot in slots where entity.properties[slot].isToMany { object.toMany?[slot]?.rebase() }
                try? reapplyDeleteRules(of: object, stored: fresh, snapshot: snapshot, denyNow: false)
            }
            if object.registrar != nil {      // Observation: only a read object can be observed
                for slot in object.values.indices where slot < before.count && before[slot] != object.values[slot] {
                    object._$observedValueChanged(slot: slot)
                }
            }
        }
        if object.registrar != nil {
            for slot in slots where entity.properties[slot].isToMany { object._$observedValueChanged(slot: slot) }
        }
        event.refreshedObjectIDs.insert(id)
        event.changedKeys[id, default: []].formUnion(names)
    }

    /// M3 for the objects of `ids` registered here.
    private func mergeDeletes(_ ids: [ObjectID], into event: inout ObjectsDidChange) {
        guard !ids.isEmpty else { return }
        var gone = Set<UInt64>()
        for id in ids {
            event.deletedObjectIDs.insert(id)
            guard let ref = registry[id.primaryKey] else { continue }
            let object = ref.takeUnretainedValue()
            if object.isDeleted {
                // Deleted here too: nothing is left to save.
                changed.removeValue(forKey: object.key)
                committed.removeValue(forKey: object.key)
            } else if object.hasChanges {
                continue
            }
            detachDeleted(object)
            gone.insert(id.primaryKey)
        }
        guard !gone.isEmpty else { return }
        // A loaded list that forgets a member may no longer hold every stored link (a
        // `.noAction` inverse keeps its link to a deleted object): a save stops trusting what
        // this context loaded (Context+Conflicts K6), whenever the merged commit was made.
        readsCurrentAt = nil
        for (_, ref) in registry {
            for (_, state) in ref.takeUnretainedValue().toMany ?? ToManyStates() where state.members != nil {
                state.forgetMembers(gone)
            }
        }
    }
}
