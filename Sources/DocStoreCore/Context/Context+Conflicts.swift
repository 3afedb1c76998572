// Context+Conflicts: optimistic locking and merge policies (MergePolicy.swift) — what a save
// does when the store changed under it.
//
//   K1  inside the save's write transaction (so nothing can commit in between), every object
//       the save rewrites or deletes and whose values this context read is checked: its stored
//       row version must still be the one it read. Any difference stops the transaction before
//       it writes; nothing is stored.
//   K2  the policy decides every conflict before any is resolved: if one fails, the save fails
//       with all of them and the context is left exactly as it was.
//   K3  a resolved object's saved snapshot becomes the store's values and row version, so the
//       retried save rewrites it against what is stored now (its index entries included).
//   K4  relationships are changed through addLink/removeLink only, so both halves stay in step
//       (Context+Relationships R1, R2); additions and removals of to-many links made here are
//       kept under every policy.
//   K6  K1 reads no row this context has read, when nothing committed since the moment all its
//       reads are current at (`readsCurrentAt`): the store's settled commit when the context
//       was made — the last whose rows the row cache forgot, so no read after it is older —
//       then each of its own saves on top of it. The save's base LSN and the settled commit
//       must both still be that moment (a reopen never matches), and a pinned context's
//       snapshot must be the base. Rows it never read (faults, rows already gone) are checked
//       as before; a save on any other base checks everything and stops trusting its reads,
//       and so does a merge that makes a loaded to-many list forget members (Context+Merge):
//       a trusted save deletes a deleted object's links from its loaded lists.
//   K5  a unique-constraint clash of an inserted object with another (stored, or inserted in
//       the same save) is resolved by merging the inserted one into the other (an upsert); a
//       clash between objects that were not inserted is always an error.

internal import DocStoreEngine

/// An object whose stored row moved on since this context read it (K1).
struct StaleObject {
    let object: ManagedObject
    /// The stored values now; nil when the row is gone.
    let stored: [StoredValue]?
    let rowVersion: UInt64
}

/// Two objects that want the same unique index entry.
struct UniqueClash {
    /// `Tag.name` or `Note(folder, title)`.
    let constraint: String
    /// The object of this save, and the other one (stored, or also in this save).
    let owner: UInt64
    let other: UInt64
    let error: DocStoreError
}

extension Context {
    /// The merge policy save applies to conflicts (Core Data's `mergePolicy`; default `.error`).
    public var mergePolicy: MergePolicy {
        get { policy }
        set { policy = newValue }
    }

    // MARK: - Detection (K1)

    /// Whether every row this context read is still the stored one, as the write `txn` starts
    /// (K6).
    func readsAreCurrent(_ txn: WriteTransaction) -> Bool {
        guard let moment = readsCurrentAt, moment.lsn == txn.lsn.rawValue,
              pinnedSnapshot.map({ $0.lsn == txn.lsn }) ?? true else { return false }
        return store.settledMoment == moment
    }

    /// The objects among `objects` (deleted, or `rewritten[i]` for `objects[i]`) whose stored
    /// row version is not the one this context read. With `readsAreCurrent` (K6), the rows this
    /// context read are not read again.
    func staleObjects(_ objects: [ManagedObject], rewritten: [Bool], readsAreCurrent: Bool, _ txn: WriteTransaction) throws -> [StaleObject] {
        var out: [StaleObject] = []
        for (i, o) in objects.enumerated() where !o.isInserted && (o.isDeleted || rewritten[i]) {
            // A deleted object keeps its saved values (D2) and has no snapshot: its version is
            // checked all the same.
            guard committed[o.key] != nil || o.isDeleted, let entity = o.entityInfo else { continue }
            if readsAreCurrent && o.rowVersion > 0 && !o.flags.contains(.fault) && !o.flags.contains(.invalidated) { continue }
            guard let bytes = try txn.get(PrimaryKey.bytes(o.key), in: entity.recordsTree) else {
                out.append(StaleObject(object: o, stored: nil, rowVersion: 0))
                continue
            }
            let version = try RecordCoding.rowVersion(bytes, key: o.key)
            guard version != o.rowVersion else { continue }
            var values = entity.defaults
            _ = try RecordCoding.decode(bytes, key: o.key, into: &values, slotForField: entity.slotForField)
            out.append(StaleObject(object: o, stored: values, rowVersion: version))
        }
        return out
    }

    // MARK: - Optimistic-locking conflicts

    /// Resolves the stale objects by the merge policy (K2, K3), or throws `.mergeConflict`.
    func resolve(_ stale: [StaleObject]) throws(DocStoreError) {
        var decided: [(StaleObject, MergeResolution)] = []
        var failures: [MergeConflict] = []
        for s in stale {
            if s.stored == nil && s.object.isDeleted {
                decided.append((s, .keepStore))      // deleted on both sides: nothing to decide
                continue
            }
            let conflict = describe(s)
            let resolution = decide(conflict)
            if resolution == .fail { failures.append(conflict) } else { decided.append((s, resolution)) }
        }
        guard failures.isEmpty else {
            var error = DocStoreError(
                .mergeConflict,
                "\(failures.count) object\(failures.count == 1 ? "" : "s") changed in the store since this context read \(failures.count == 1 ? "it" : "them"): "
                    + failures.map(\.description).joined(separator: "; ")
                    + ". Set a merge policy, or refresh the objects and apply the changes again",
                entity: failures.first?.objectID.entityName)
            error.conflicts = failures
            throw error
        }
        for (s, resolution) in decided { try apply(resolution, to: s) }
    }

    /// The policy's resolution of `conflict` (`.fail` for `.error`).
    private func decide(_ conflict: MergeConflict) -> MergeResolution {
        switch policy {
        case .error: .fail
        case .mergeByPropertyStoreTrump: .mergeStoreTrump
        case .mergeByPropertyObjectTrump: .mergeObjectTrump
        case .overwrite: .keepObject
        case .rollback: .keepStore
        case .custom(let decide): decide(conflict)
        }
    }

    private func describe(_ s: StaleObject) -> MergeConflict {
        let o = s.object
        let entity = o.entityInfo
        let snapshot = committed[o.key] ?? o.values
        func named(_ values: [StoredValue]) -> [String: StoredValue] { entity.map { Self.named(values, $0) } ?? [:] }
        func differing(_ a: [StoredValue], _ b: [StoredValue]) -> Set<String> {
            Set((entity?.recordSlots ?? []).filter { $0 < a.count && $0 < b.count && a[$0] != b[$0] }.compactMap { entity?.properties[$0].name })
        }
        let id = ObjectID(store: store.identifier, entity: entity?.name ?? "?", key: o.key)
        return MergeConflict(
            objectID: id, kind: s.stored == nil ? .deletedInStore : .changedInStore, isDeletedHere: o.isDeleted,
            snapshotValues: named(snapshot), objectValues: named(o.visibleValues), storeValues: s.stored.map(named),
            objectChangedKeys: o.isDeleted ? [] : differing(snapshot, o.values),
            storeChangedKeys: s.stored.map { differing(snapshot, $0) } ?? [])
    }

    /// An object's record values by property name (attributes and to-ones).
    static func named(_ values: [StoredValue], _ entity: EntityInfo) -> [String: StoredValue] {
        var out: [String: StoredValue] = [:]
        for slot in entity.recordSlots where slot < values.count { out[entity.properties[slot].name] = values[slot] }
        return out
    }

    /// Applies one resolution (K3, K4).
    private func apply(_ resolution: MergeResolution, to s: StaleObject) throws(DocStoreError) {
        let o = s.object
        guard let entity = o.entityInfo else { return }
        guard let stored = s.stored else {
            evict(o)      // deleted in the store: the deletion stands
            return
        }
        let snapshot = committed[o.key] ?? o.values
        committed[o.key] = stored
        o.rowVersion = s.rowVersion
        for (_, state) in o.toMany ?? ToManyStates() { state.rebase() }   // links from the store as it is now
        if o.isDeleted {
            // The delete goes through, with its rules applied to what the store relates it to now.
            try reapplyDeleteRules(of: o, stored: stored, snapshot: snapshot)
            return
        }
        // Only its links changed here: it has no values of its own to assert.
        let own = snapshot == o.values ? MergeResolution.keepStore : resolution
        let result = try resolvedValues(own, entity, mine: o.values, theirs: stored, base: snapshot)
        try setRecordValues(result, of: o, entity, stored: stored)
    }

    /// The values a resolution gives, per record slot, for the object that keeps them: `theirs`
    /// (the store's, or the existing object's), `mine` (this context's, or the new object's),
    /// and `base`, what counts as "not changed" — the values read, or for an upsert the
    /// defaults (a new object's unset properties do not overwrite).
    func resolvedValues(_ resolution: MergeResolution, _ entity: EntityInfo, mine: [StoredValue], theirs: [StoredValue],
                        base: [StoredValue]) throws(DocStoreError) -> [StoredValue] {
        var out = theirs
        for slot in entity.recordSlots where slot < out.count && slot < base.count {
            let m = slot < mine.count ? mine[slot] : base[slot]
            switch resolution {
            case .keepStore, .values, .fail: break
            case .keepObject: out[slot] = m
            case .mergeStoreTrump: if theirs[slot] == base[slot] { out[slot] = m }
            case .mergeObjectTrump: if m != base[slot] { out[slot] = m }
            }
        }
        if case .values(let given) = resolution {
            for (name, value) in given {
                guard let slot = entity.slotByName[name], entity.properties[slot].attribute != nil else {
                    throw DocStoreError(.unknownProperty, "a custom merge policy set \"\(name)\", which is not an attribute of \(entity.name)", entity: entity.name, property: name)
                }
                out[slot] = value
            }
        }
        return out
    }

    /// Gives `o` these record values: attributes directly, to-ones through links (K4), and
    /// drops the store's inverse half of a to-one the result no longer has.
    private func setRecordValues(_ result: [StoredValue], of o: ManagedObject, _ entity: EntityInfo, stored: [StoredValue]) throws(DocStoreError) {
        for slot in entity.recordSlots where slot < result.count {
            let p = entity.properties[slot]
            if p.isToOne {
                if result[slot] != o.values[slot] {
                    if case .reference(let key) = result[slot] {
                        try addLink(o, p, try materialize(key))
                    } else if case .reference(let old) = o.values[slot] {
                        try removeLink(o, p, try materialize(old))
                    }
                }
                if case .reference(let was) = stored[slot], result[slot] != stored[slot] {
                    let target = try materialize(was)
                    if let q = inverse(of: p, on: target) { try removeHalf(target, q, o) }
                }
            } else if result[slot] != o.values[slot] {
                try willChange(o)
                o.values[slot] = result[slot]
                o.flags.insert(.recordChanged)
            }
        }
    }

    /// Gives `o` the store's values and row version, its unsaved edits staying on top (a merge,
    /// a refresh that merges): the saved snapshot becomes the store's values, and where an edited
    /// to-one overrides a target the store changed, the store's inverse half is dropped (K4).
    func adoptStoredValues(_ o: ManagedObject, _ entity: EntityInfo, stored: [StoredValue], rowVersion: UInt64) {
        let snapshot = committed[o.key] ?? o.values
        // A to-one a deletion nullified (D2) is an edit to nil, as if it had been written.
        let mine = o.visibleValues
        var result = stored
        if changed[o.key] != nil {
            for slot in mine.indices where slot < snapshot.count && slot < result.count && mine[slot] != snapshot[slot] {
                result[slot] = mine[slot]
                let p = entity.properties[slot]
                if p.isToOne, stored[slot] != snapshot[slot], stored[slot] != mine[slot], case .reference(let was) = stored[slot],
                   let target = try? materialize(was), let q = inverse(of: p, on: target) {
                    try? removeHalf(target, q, o)
                }
            }
            committed[o.key] = stored
        }
        o.values = result
        o.rowVersion = rowVersion
        changed.noteValuesMayChange(o.key)
    }

    /// Drops `o` from the context and from the pending halves of its links (an object
    /// deleted in the store, or an inserted object merged into another).
    func evict(_ o: ManagedObject) {
        if let entity = o.entityInfo, !o.isDeleted {
            for p in entity.properties {
                if p.isToOne, case .reference(let key) = o.values[p.slot], let target = try? materialize(key),
                   let q = inverse(of: p, on: target) {
                    try? removeHalf(target, q, o)
                } else if p.isToMany, let state = o.toMany?[p.slot] {
                    let pending = state.isNew ? (state.members ?? []) : Array(state.added)
                    for key in pending {
                        guard let target = try? materialize(key), let q = inverse(of: p, on: target) else { continue }
                        try? removeHalf(target, q, o)
                    }
                }
            }
        }
        changed.removeValue(forKey: o.key)
        committed.removeValue(forKey: o.key)
        detachDeleted(o)
    }

    // MARK: - Unique constraints (K5)

    /// Resolves unique clashes by merging inserted objects into the ones they clash with, or
    /// throws the first clash's `.uniqueConstraint` listing all of them.
    func resolve(_ clashes: [UniqueClash]) throws(DocStoreError) {
        var plans: [(dup: ManagedObject, keep: ManagedObject, resolution: MergeResolution)] = []
        var failures: [MergeConflict] = []
        var firstError: DocStoreError?
        var absorbed = Set<UInt64>()
        for clash in clashes {
            // The inserted one is merged into the other; of two inserted ones, the later.
            let a = registry[clash.owner]?.takeUnretainedValue()
            let b = registry[clash.other]?.takeUnretainedValue()
            let dup: ManagedObject?
            let keepKey: UInt64
            if let a, let b, a.isInserted, b.isInserted {
                (dup, keepKey) = a.key > b.key ? (a, b.key) : (b, a.key)
            } else if let a, a.isInserted {
                (dup, keepKey) = (a, clash.other)
            } else if let b, b.isInserted {
                (dup, keepKey) = (b, clash.owner)
            } else {
                (dup, keepKey) = (nil, 0)
            }
            let conflict = describe(clash, dup: dup, keepKey: keepKey)
            guard let dup, !absorbed.contains(dup.key), let keep = try? materialize(keepKey), !keep.isDeleted else {
                if firstError == nil { firstError = clash.error }
                if let conflict { failures.append(conflict) }
                continue
            }
            let resolution = conflict.map(decide) ?? .fail
            guard resolution != .fail else {
                if firstError == nil { firstError = clash.error }
                if let conflict { failures.append(conflict) }
                continue
            }
            absorbed.insert(dup.key)
            plans.append((dup, keep, resolution))
        }
        if var error = firstError {
            error.conflicts = failures
            throw error
        }
        for plan in plans { try absorb(plan.dup, into: plan.keep, plan.resolution) }
    }

    private func describe(_ clash: UniqueClash, dup: ManagedObject?, keepKey: UInt64) -> MergeConflict? {
        guard let dup, let entity = dup.entityInfo, let keepEntity = store.model.entity(ofKey: keepKey) else { return nil }
        try? fulfill(dup)
        let keep = try? materialize(keepKey)
        if let keep { try? fulfill(keep) }
        let mine = Self.named(dup.values, entity)
        let theirs = Self.named(keep?.values ?? [], entity)
        return MergeConflict(
            objectID: ObjectID(store: store.identifier, entity: entity.name, key: dup.key),
            kind: .uniqueConstraint(constraint: clash.constraint, existing: ObjectID(store: store.identifier, entity: keepEntity.name, key: keepKey)),
            isDeletedHere: false, snapshotValues: nil, objectValues: mine, storeValues: theirs,
            objectChangedKeys: Set(mine.keys), storeChangedKeys: [])
    }

    /// Merges the inserted `dup` into `keep` (K4, K5): references to it lead to `keep`, its
    /// links join `keep`'s, its values are resolved against `keep`'s, and it leaves the context.
    private func absorb(_ dup: ManagedObject, into keep: ManagedObject, _ resolution: MergeResolution) throws(DocStoreError) {
        guard let entity = dup.entityInfo, let keepEntity = keep.entityInfo else { return }
        try fulfill(keep)
        // To-ones of other objects that lead to dup.
        var referrers: [(ManagedObject, PropertyInfo)] = []
        for (_, ref) in registry {
            let o = ref.takeUnretainedValue()
            guard o !== dup, !o.isFault, let e = o.entityInfo else { continue }
            // A to-one a deletion nullified (D2) leads nowhere, though its saved value is kept.
            for p in e.properties where p.isToOne && p.slot < o.values.count && !o.isNulled(p.slot) && o.values[p.slot] == .reference(dup.key) {
                referrers.append((o, p))
            }
        }
        for (o, p) in referrers { try addLink(o, p, keep) }
        // dup's to-many links move to keep.
        for p in entity.properties where p.isToMany {
            guard let kp = keepEntity.property(named: p.name) else { continue }
            for key in try members(of: dup, p) {
                let target = try materialize(key)
                try removeLink(dup, p, target)
                try addLink(keep, kp, target)
            }
        }
        // Values: the defaults count as "not set" for the by-property policies.
        let result = try resolvedValues(resolution, keepEntity, mine: dup.values, theirs: keep.values, base: keepEntity.defaults)
        for p in entity.properties where p.isToOne {
            if case .reference(let key) = dup.values[p.slot] { try removeLink(dup, p, try materialize(key)) }
        }
        try setRecordValues(result, of: keep, keepEntity, stored: keep.values)
        evict(dup)
        dup.flags = [.invalidated]
    }
}
