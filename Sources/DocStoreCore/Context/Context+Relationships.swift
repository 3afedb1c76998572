// Context+Relationships: links between objects, with both sides kept in step on every change.
//
// A link (a, p, b) means b is in a.p; its inverse is (b, q, a) with q = p's inverse. Every
// change goes through addLink/removeLink, which change both halves:
//   R1  setting a to-one first removes the link to its previous target (and that target's
//       inverse half), so a to-one never points at an object whose inverse lacks it;
//   R2  a to-many half is a change recorded in ToManyState (added/removed), so the inverse of a
//       fault's unloaded to-many is updated without loading it;
//   R3  ordered to-many relationships are loaded before they change, and keep insertion order.
//   R4  `added` never holds a link the store has (a later removal would merely cancel the
//       "addition" and leave the stored link behind): a to-many changed directly is loaded
//       first, and the inverse half is added only when the first half was new (so, the graph
//       being consistent, the inverse link is new too; only that half stays lazy, R2).
//   R5  a to-many read through an accessor hands out its members as faults, each holding its
//       record read ahead with the others in one read transaction: no detour through the row
//       cache, whose copies would outlive the objects. A save in between voids them (the row
//       cache's generation), so a fault never fires from a record older than the store's.
// To-many members load lazily through the relationship's links tree: a prefix scan over
// (source key, target key), never a scan of the other entity's records.

import Foundation
internal import DocStoreEngine

extension Context {
    // MARK: - Reading

    /// The key of a to-one relationship's target, or nil.
    func toOneKey(of object: ManagedObject, _ p: PropertyInfo) throws(DocStoreError) -> UInt64? {
        try fulfill(object)
        if object.isNulled(p.slot) { return nil }
        if case .reference(let key) = object.loadedValue(p.slot) { return key }
        return nil
    }

    /// The state of a to-many relationship, made on first use.
    func toManyState(of object: ManagedObject, _ p: PropertyInfo) -> ToManyState {
        if let state = object.toMany?[p.slot] { return state }
        let state = ToManyState()
        if object.toMany == nil { object.toMany = ToManyStates() }
        object.toMany?[p.slot] = state
        return state
    }

    /// The keys of a to-many relationship's members, loading them if needed (and, unless told
    /// not to, their records into the row cache: the members are usually read next).
    func members(of object: ManagedObject, _ p: PropertyInfo, prefetching: Bool = true) throws(DocStoreError) -> [UInt64] {
        let state = toManyState(of: object, p)
        if let members = state.members { return members }
        if let inherited = try parent?.currentMembers(of: object.key, p) {    // Context+Child CC2
            state.load(stored: inherited)
        } else {
            state.load(stored: try storedMembers(of: object.key, p))
        }
        let members = state.members ?? []
        if prefetching { try prefetchRecords(members) }
        return members
    }

    /// The objects of a to-many relationship's members, in member order: faults, as Core Data
    /// hands them out, with their records read ahead in one read transaction (R5).
    func memberObjects(of object: ManagedObject, _ p: PropertyInfo) throws(DocStoreError) -> [ManagedObject] {
        let keys = try members(of: object, p, prefetching: false)
        var objects: [ManagedObject] = []
        objects.reserveCapacity(keys.count)
        var faults: [ManagedObject] = []
        for key in keys {
            let member = try materialize(key)
            if member.isFault { faults.append(member) }
            objects.append(member)
        }
        try readAhead(faults)
        return objects
    }

    /// Reads the records of `faults` in one read transaction and gives each fault its own,
    /// to fire from (`Context.fulfill`) unless a save comes first; faults whose records the row
    /// cache holds (a fetch's prefetching put them there) fire from it instead. A child
    /// context's faults take their parent's state (CC1), and a pinned or batch context reads
    /// its own snapshot: those go through the row cache as before (`prefetchRecords`).
    func readAhead(_ objects: [ManagedObject]) throws(DocStoreError) {
        guard objects.count > 1 else { return }
        guard parent == nil, pinnedSnapshot == nil, batchTransaction == nil else {
            return try prefetchRecords(objects.map(\.key))
        }
        // Noted before the read, as the row cache notes it: a save that commits during the
        // read makes every record read here stale, and the faults then read afresh.
        let generation = store.rows.generation
        // Not read again: faults that still hold a current record (the relationship read a
        // second time) or whose record the row cache has.
        let cached = store.rows.holds(objects.map(\.key))
        let faults = zip(objects, cached).compactMap { object, isCached in
            isCached || object.readAhead?.generation == generation ? nil : object
        }
        guard faults.count > 1 else { return }
        let records: [[UInt8]?] = try readStore { txn in
            // An unordered to-many's members come in key order (its links tree's order): one
            // cursor finds each from the branch it shares with the one before. Other orders
            // cost a descent from the root where a key falls before the cursor's leaf.
            var lookup = RecordLookup(txn)
            var records: [[UInt8]?] = []
            records.reserveCapacity(faults.count)
            for (i, object) in faults.enumerated() {
                guard let entity = object.entityInfo else { records.append(nil); continue }
                // The next member's leaf is loaded while this one is read (members mostly lie
                // in leaves of their own). Two ahead made a folder's hundred members slower.
                if i + 1 < faults.count, let ahead = faults[i + 1].entityInfo { lookup.prefetch(faults[i + 1].key, ahead) }
                records.append(try lookup.withRecord(object.key, entity) { Array($0) })
            }
            return records
        }
        for (object, record) in zip(faults, records) {
            guard let record, object.isFault else { continue }
            object.readAhead = ReadAheadRecord(record: record, generation: generation)
        }
    }

    /// Reads the records of `keys` whose objects are not loaded into the row cache, in one read
    /// transaction (a to-many relationship's members are usually read next).
    func prefetchRecords(_ keys: [UInt64]) throws(DocStoreError) {
        // G2: the row cache holds the latest committed rows, not a pinned snapshot's or a batch's.
        guard pinnedSnapshot == nil, batchTransaction == nil else { return }
        let wanted = store.rows.missing(keys.filter { key in
            guard let ref = registry[key] else { return true }
            return ref.takeUnretainedValue().isFault
        })
        guard wanted.count > 1 else { return }
        let generation = store.rows.generation
        let model = store.model
        let rows: [(UInt64, [UInt8])] = try readStore { txn in
            var rows: [(UInt64, [UInt8])] = []
            rows.reserveCapacity(wanted.count)
            for key in wanted {
                guard let entity = model.entity(ofKey: key),
                      let bytes = try txn.get(PrimaryKey.bytes(key), in: entity.recordsTree) else { continue }
                rows.append((key, bytes))
            }
            return rows
        }
        store.rows.insert(rows, readAt: generation)
    }

    /// The members as saved: a prefix scan of the links tree.
    func storedMembers(of key: UInt64, _ p: PropertyInfo) throws(DocStoreError) -> [UInt64] {
        try storedMembers(of: [key], p)[0]
    }

    /// The saved members of several objects' relationship, in one read transaction: one
    /// prefix scan per object, in key order (prefetching reads a level this way).
    func storedMembers(of keys: [UInt64], _ p: PropertyInfo) throws(DocStoreError) -> [[UInt64]] {
        let ordered = p.isOrdered
        return try readStore { txn throws -> [[UInt64]] in
            var all: [[UInt64]] = []
            all.reserveCapacity(keys.count)
            var cursor = try txn.cursor(in: p.linkTree)
            for key in keys {
                let prefix = PrimaryKey.bytes(key)
                var out: [UInt64] = []
                var entry = try cursor.seek(to: prefix)
                while let (k, v) = entry, k.count == 16, k.starts(with: prefix) {
                    let target = ordered ? PrimaryKey.read(v) : PrimaryKey.read(k, at: 8)
                    guard let target else {
                        throw DocStoreError(.corrupt, "a link of \(p.name) under key \(key) is malformed", property: p.name)
                    }
                    out.append(target)
                    entry = try cursor.next()
                }
                all.append(out)
            }
            return all
        }
    }

    // MARK: - Writing

    /// Sets a to-one relationship, updating the inverse of the old and new targets.
    func setToOne(_ target: ManagedObject?, of object: ManagedObject, _ p: PropertyInfo) throws(DocStoreError) {
        try undoable { () throws(DocStoreError) in try setToOneNow(target, of: object, p) }
    }

    private func setToOneNow(_ target: ManagedObject?, of object: ManagedObject, _ p: PropertyInfo) throws(DocStoreError) {
        try check(object, "setting \(p.name)")
        if let target {
            try checkTarget(target, for: p, of: object)
            try addLink(object, p, target)
        } else if let old = try toOneKey(of: object, p) {
            try removeLink(object, p, try materialize(old))
        }
    }

    /// Replaces a to-many relationship's members (in this order, if it is ordered).
    func setToMany(_ targets: [ManagedObject], of object: ManagedObject, _ p: PropertyInfo) throws(DocStoreError) {
        try undoable { () throws(DocStoreError) in try setToManyNow(targets, of: object, p) }
    }

    private func setToManyNow(_ targets: [ManagedObject], of object: ManagedObject, _ p: PropertyInfo) throws(DocStoreError) {
        try check(object, "setting \(p.name)")
        for target in targets { try checkTarget(target, for: p, of: object) }
        let current = try members(of: object, p)
        if current.isEmpty && !p.isOrdered {
            // The common case (a new object's relationship set once): nothing to remove, and
            // the members' list made once at its size rather than grown.
            toManyState(of: object, p).reserveMembers(targets.count)
            for target in targets { try addLink(object, p, target) }
            return
        }
        let wanted = Set(targets.map(\.key))
        for key in current where !wanted.contains(key) { try removeLink(object, p, try materialize(key)) }
        let present = Set(try members(of: object, p))
        for target in targets where !present.contains(target.key) { try addLink(object, p, target) }
        if p.isOrdered {
            let order = targets.map(\.key)
            let state = toManyState(of: object, p)
            if state.members != order {
                try willChange(object, record: false)
                state.setOrder(order)
            }
        }
    }

    /// Puts an ordered to-many's loaded members in `order`, a permutation of them (sync's
    /// arrangement of remote changes, RA7).
    func reorder(_ object: ManagedObject, _ p: PropertyInfo, _ order: [UInt64]) throws(DocStoreError) {
        let state = toManyState(of: object, p)
        guard p.isOrdered, state.members != order else { return }
        try willChange(object, record: false)
        state.setOrder(order)
    }

    /// Adds `target` to a to-many relationship.
    func addToMany(_ target: ManagedObject, of object: ManagedObject, _ p: PropertyInfo) throws(DocStoreError) {
        try check(object, "adding to \(p.name)")
        try checkTarget(target, for: p, of: object)
        try addLink(object, p, target)
    }

    /// Removes `target` from a to-many relationship.
    func removeFromToMany(_ target: ManagedObject, of object: ManagedObject, _ p: PropertyInfo) throws(DocStoreError) {
        try check(object, "removing from \(p.name)")
        try check(target, "removing from \(p.name)")
        try removeLink(object, p, target)
    }

    private func checkTarget(_ target: ManagedObject, for p: PropertyInfo, of object: ManagedObject) throws(DocStoreError) {
        try check(target, "relating it through \(p.name)")
        guard let entity = target.entityInfo, p.destination >= 0,
              entity === store.model.entities[p.destination] || store.model.entities[p.destination].kindIDs.contains(entity.id) else {
            throw DocStoreError(.typeMismatch, "\(p.name) leads to \(p.relationship?.destination ?? "?"), not to \(target.entityInfo?.name ?? "?")", entity: object.entityInfo?.name, property: p.name)
        }
        if target.isDeleted {
            throw DocStoreError(.objectDeleted, "\(target) is deleted; it cannot be related through \(p.name)", entity: object.entityInfo?.name, property: p.name)
        }
    }

    /// The inverse of `p`, as a property of `target`'s entity.
    func inverse(of p: PropertyInfo, on target: ManagedObject) -> PropertyInfo? {
        guard let entity = target.entityInfo, p.inverseSlot >= 0, p.inverseSlot < entity.properties.count else { return nil }
        return entity.properties[p.inverseSlot]
    }

    /// Links a.p to b and b.q to a (R1, R2, R4).
    func addLink(_ a: ManagedObject, _ p: PropertyInfo, _ b: ManagedObject) throws(DocStoreError) {
        guard try addHalf(a, p, b) else { return }
        if let q = inverse(of: p, on: b) { try addHalf(b, q, a, inverseHalf: true) }
    }

    /// Unlinks b from a.p and a from b.q.
    func removeLink(_ a: ManagedObject, _ p: PropertyInfo, _ b: ManagedObject) throws(DocStoreError) {
        try removeHalf(a, p, b)
        if let q = inverse(of: p, on: b) { try removeHalf(b, q, a) }
    }

    /// Adds b to a.p; false when it was there already (R4).
    @discardableResult
    func addHalf(_ a: ManagedObject, _ p: PropertyInfo, _ b: ManagedObject, inverseHalf: Bool = false) throws(DocStoreError) -> Bool {
        if p.isToOne {
            let old = try toOneKey(of: a, p)
            if old == b.key { return false }
            if let old { try removeLink(a, p, try materialize(old)) }   // R1
            try willChange(a)
            a.values[p.slot] = .reference(b.key)
            a.flags.insert(.recordChanged)
        } else {
            let state = toManyState(of: a, p)
            if state.members == nil && (p.isOrdered || (!inverseHalf && !state.isNew)) {   // R3, R4
                _ = try members(of: a, p)
            }
            if state.isMember(b.key) || state.added.contains(b.key) { return false }
            try willChange(a, record: false)
            state.add(b.key)   // R2
            if p.isOrdered { state.orderChanged = true }
        }
        return true
    }

    func removeHalf(_ a: ManagedObject, _ p: PropertyInfo, _ b: ManagedObject) throws(DocStoreError) {
        if p.isToOne {
            guard try toOneKey(of: a, p) == b.key else { return }
            if isPropagatingDelete && a.isDeleted && !a.isInserted && p.slot < 16 {
                // D2: a deleted object's to-one is nullified by a mark, its values left alone.
                try willChange(a, record: false)
                a.nulledSlots |= 1 << UInt16(p.slot)
                return
            }
            try willChange(a)
            a.values[p.slot] = .null
            a.flags.insert(.recordChanged)
        } else {
            let state = toManyState(of: a, p)
            if state.members == nil && p.isOrdered { _ = try members(of: a, p) }
            if state.removed.contains(b.key) { return }
            if state.members != nil && !state.isMember(b.key) { return }
            try willChange(a, record: false)
            state.remove(b.key)
            if p.isOrdered { state.orderChanged = true }
        }
    }
}
