// Context+Child: child contexts — a context whose parent is another context (Core Data's
// parent/child contexts): a scratch pad over the parent's state.
//
//   CC1  a child reads an object as its parent has it — unsaved values, deletion included —
//        when the parent (or an ancestor) has it loaded; otherwise from the store.
//   CC2  a to-many relationship's starting members are the parent's, unsaved links included.
//   CC3  a child's fetches test its ancestors' unsaved objects with their unsaved values, as
//        their own fetches would; its own changes come on top.
//   CC4  a child's save validates, then replays its changes on the parent through the parent's
//        own operations (insert with the same ID, set values, link and unlink, delete), so the
//        parent keeps inverses, delete rules, undo and observers as for its own edits. Nothing
//        reaches the store until the parent saves.

extension Context {
    /// The object `key` as this context has it now, or as an ancestor does (CC1); nil when
    /// none has it loaded (read the store).
    func currentState(of key: UInt64) throws(DocStoreError) -> (values: [StoredValue], rowVersion: UInt64, isDeleted: Bool)? {
        if let ref = registry[key] {
            let object = ref.takeUnretainedValue()
            if !object.isFault || changed[key] != nil {
                try fulfill(object)
                // A deleted object's nullified to-ones (D2) are nil to a child as they are here.
                return (object.visibleValues, object.rowVersion, object.isDeleted)
            }
        }
        return try parent?.currentState(of: key)
    }

    /// The members of `key`'s to-many relationship as this context or an ancestor has them
    /// (CC2); nil when none has them loaded or changed.
    func currentMembers(of key: UInt64, _ p: PropertyInfo) throws(DocStoreError) -> [UInt64]? {
        if let ref = registry[key] {
            let object = ref.takeUnretainedValue()
            if let state = object.toMany?[p.slot], state.members != nil || state.hasChanges {
                return try members(of: object, p)
            }
        }
        return try parent?.currentMembers(of: key, p)
    }

    /// The keys of this context's and its ancestors' unsaved objects of `kinds` (CC3).
    func pendingKeys(of kinds: Set<UInt32>) -> Set<UInt64> {
        var keys = changed.keys(of: kinds)
        if let parent { keys.formUnion(parent.pendingKeys(of: kinds)) }
        return keys
    }

    /// A child's save: its changes become the parent's unsaved changes (CC4).
    func pushChangesToParent() throws(DocStoreError) {
        guard let parent else { return }
        let objects = changed.sortedByKey()
        // Inserted objects first, under their own IDs, so links can reach them.
        for o in objects where o.isInserted && !o.isDeleted {
            guard let entity = o.entityInfo, parent.registry[o.key] == nil else { continue }
            let twin = entity.objectClass.init(_$fault: _$FaultToken(entity: entity, key: 0, context: parent))
            parent.attachNew(twin, entity, key: o.key, awake: false)
        }
        for o in objects where !o.isDeleted {
            guard let entity = o.entityInfo else { continue }
            let twin = try parent.materialize(o.key)
            try parent.fulfill(twin)
            let base = committed[o.key]
            for slot in entity.recordSlots {
                let p = entity.properties[slot]
                let value = o.values[slot]
                if p.isToOne {
                    guard value != twin.values[slot] else { continue }
                    if case .reference(let target) = value {
                        try parent.addLink(twin, p, try parent.materialize(target))
                    } else if case .reference(let old) = twin.values[slot] {
                        try parent.removeLink(twin, p, try parent.materialize(old))
                    }
                } else if o.isInserted ? value != entity.defaults[slot] : (base.map { $0[slot] != value } ?? false) {
                    try parent.setStored(value, of: twin, slot: slot)
                }
            }
            for (slot, state) in o.toMany ?? ToManyStates() where state.hasChanges {
                let p = entity.properties[slot]
                let added = state.isNew ? (state.members ?? []) : Array(state.added)
                for key in state.removed { try parent.removeLink(twin, p, try parent.materialize(key)) }
                for key in added { try parent.addLink(twin, p, try parent.materialize(key)) }
            }
        }
        for o in objects where o.isDeleted && !o.isInserted {
            let twin = try parent.materialize(o.key)
            if !twin.isDeleted { try parent.delete(twin) }
        }
        // The child's changes are the parent's now: the child starts again from them.
        settle(objects, rewritten: nil)
        unprocessed = []
        for o in objects where !o.isDeleted { o.didSave() }
    }
}
