// A context's changed objects — inserted, updated or deleted, not yet saved — by primary key,
// with per-entity-kind indexes a fetch uses to find the unsaved objects it must consider (F2)
// without walking all of them.
//
// Invariants (each kind's state is one `Kind`, found with one hash by each change):
// - Once `kinds[kind].tracksLive`, `kinds[kind].live` holds exactly the keys of the objects here
//   of that kind that are not deleted, as their deleted flag stood at their last `subscript`
//   set or at the last `noteDeleted`/`noteUndeleted` of them. Code that flips the flag of an
//   object that is here says so through those two; setting an object again re-reads its flag.
//   A kind is tracked from the first lookup that reads its live keys until it loses its last
//   object. Until then `untracked` lists every key added to the kind (in a plain array: no
//   hashing), and `trackLive` builds the live keys from it — so a context that only inserts and
//   saves, an import, keeps no hash set of its new objects' keys beside `byKey`, and tracking a
//   kind costs what the kind's objects cost, not what the context holds.
// - `kinds[kind].count` is how many objects here are of that kind, deleted ones included; a
//   kind with none has no entry.
// - A value index (kind, slot) maps, for every live object of the kind, a hash of the slot's
//   value as its index encodes it (Context.indexValue) to the object's key; a lookup may return
//   objects of another value with the same hash, never miss one. It is made the first time a fetch
//   looks up by that attribute and kept current lazily: a key whose values may have changed —
//   set, removed, deleted, undeleted, or told through `noteValuesMayChange` (every attribute or
//   to-one write calls `willChange` first, which tells) — is `stale` for its kind's indexes and
//   re-encoded before the next lookup reads them.
// A kind's state goes with its last object, value indexes included; the next lookup of the kind
// makes them again from its live keys (which `objectsToEncode` then hands out to be loaded).
// So a fetch costs what the unsaved objects it could return cost, not what the context holds:
// fetching and deleting 50 000 objects one at a time in one context is linear, not quadratic,
// and so is finding-or-creating 50 000 objects by an indexed attribute.

internal import DocStoreEngine

/// The changed objects of a context, by primary key (Context.swift's `changed`).
struct ChangedObjects: Sequence, ExpressibleByDictionaryLiteral {
    private(set) var byKey: [UInt64: ManagedObject] = [:]
    /// What is kept per entity kind. One dictionary of these, rather than one dictionary per
    /// field, so that adding an object hashes its kind once (a save's inserts and each inverse
    /// relationship's `willChange` set objects here: a twelfth of inserting 100 000 notes
    /// went to the five hashes that took).
    private var kinds: [UInt32: Kind] = [:]
    /// `sortedByKey()`'s last answer; nil once an object is added or removed. (Keys never
    /// change, so the order holds while the set of objects does.)
    private var sorted: [ManagedObject]?

    /// A kind's state, by reference: found with one hash and changed in place, never copied
    /// out of the dictionary and back (a struct read through `kinds.values[i]` copied every
    /// field — its sets, array and indexes retained and released — on each fetch's lookup).
    /// `ChangedObjects` is never copied while both copies change (a context moves it out whole,
    /// `let objects = changed; changed = [:]`), so sharing these between copies changes nothing.
    /// Its properties are `@exclusivity(unchecked)` as the context's `changed` is: one context
    /// changes them, on its own queue, never from inside another access to them.
    final class Kind {
        /// How many objects here are of this kind, deleted ones included.
        @exclusivity(unchecked) var count = 0
        /// The keys of those not deleted, while `tracksLive` (file comment).
        @exclusivity(unchecked) var live = KeySet()
        @exclusivity(unchecked) var tracksLive = false
        /// Until `tracksLive`: every key added to the kind, in order (some since removed).
        @exclusivity(unchecked) var untracked: [UInt64] = []
        /// By slot: the live objects by their value's index encoding (file comment).
        @exclusivity(unchecked) var valueIndexes: [Int: ValueIndex] = [:]
        /// The keys to re-encode before a lookup, while the kind has value indexes.
        @exclusivity(unchecked) var stale = KeySet()

        /// Marks `key` for re-encoding if this kind has value indexes.
        func noteValuesMayChange(_ key: UInt64) {
            if !valueIndexes.isEmpty { stale.insert(key) }
        }

        /// `key`'s object, here, was just marked deleted.
        func noteDeleted(_ key: UInt64) {
            if tracksLive { live.remove(key) }
            noteValuesMayChange(key)
        }
    }

    /// The live objects of one (kind, slot) by a 64-bit hash of their value's index encoding.
    /// A hash, not the bytes: hashing and comparing a word is what made keeping the index cheap
    /// (an array per value was most of its cost). Two values may share a hash, so a lookup
    /// returns a superset; the fetch tests every unsaved object it is given (F2) anyway.
    final class ValueIndex {
        @exclusivity(unchecked) var keysByValue: [UInt64: Keys] = [:]
        @exclusivity(unchecked) var valueOfKey: [UInt64: UInt64] = [:]

        /// The keys holding one value: almost always one (a value index is made for the
        /// attributes a fetch looks up by equality, which tend to be unique), so one key is held
        /// without a set.
        enum Keys {
            case one(UInt64)
            case many(Set<UInt64>)

            func forEach(_ body: (UInt64) -> Void) {
                switch self {
                case .one(let key): body(key)
                case .many(let keys): for key in keys { body(key) }
                }
            }
        }

        /// A 64-bit hash of an index encoding (FNV-1a over 8-byte words, then a final mix).
        static func hash(_ bytes: [UInt8]) -> UInt64 {
            var h: UInt64 = 0xcbf2_9ce4_8422_2325
            bytes.withUnsafeBytes { raw in
                var i = 0
                while i + 8 <= raw.count {
                    h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x0000_0100_0000_01b3
                    h ^= h >> 29
                    i += 8
                }
                while i < raw.count {
                    h = (h ^ UInt64(raw[i])) &* 0x0000_0100_0000_01b3
                    i += 1
                }
            }
            h ^= UInt64(bytes.count)
            h = (h ^ (h >> 33)) &* 0xff51_afd7_ed55_8ccd
            return h ^ (h >> 33)
        }

        func set(_ key: UInt64, to value: [UInt8]?) {
            let new = value.map(Self.hash)
            let old = valueOfKey[key]
            if old == new { return }
            if let old { remove(key, from: old) }
            valueOfKey[key] = new
            if let new { add(key, to: new) }
        }

        private func add(_ key: UInt64, to value: UInt64) {
            switch keysByValue[value] {
            case nil: keysByValue[value] = .one(key)
            case .one(let other): keysByValue[value] = .many([other, key])
            case .many(var keys):
                keysByValue[value] = .one(key)   // drops the dictionary's reference to the set before it changes
                keys.insert(key)
                keysByValue[value] = .many(keys)
            }
        }

        private func remove(_ key: UInt64, from value: UInt64) {
            switch keysByValue[value] {
            case nil: return
            case .one(let other): if other == key { keysByValue.removeValue(forKey: value) }
            case .many(var keys):
                keysByValue[value] = .one(key)
                keys.remove(key)
                if keys.count == 1, let last = keys.first { keysByValue[value] = .one(last) } else { keysByValue[value] = .many(keys) }
            }
        }
    }

    init(dictionaryLiteral elements: (UInt64, ManagedObject)...) {
        for (key, object) in elements { self[key] = object }
    }

    var values: Dictionary<UInt64, ManagedObject>.Values { byKey.values }
    var isEmpty: Bool { byKey.isEmpty }
    var count: Int { byKey.count }

    func makeIterator() -> Dictionary<UInt64, ManagedObject>.Iterator { byKey.makeIterator() }

    subscript(key: UInt64) -> ManagedObject? {
        get { byKey[key] }
        set {
            guard let object = newValue else {
                removeValue(forKey: key)
                return
            }
            sorted = nil
            let added = byKey.updateValue(object, forKey: key) == nil
            let deleted = object.isDeleted
            let kind = state(PrimaryKey.entity(of: key))
            if added { kind.count += 1 }
            if kind.tracksLive {
                if deleted { kind.live.remove(key) } else { kind.live.insert(key) }
            } else if added {
                kind.untracked.append(key)
                // Objects removed and added again leave keys behind: kept within twice the kind.
                if kind.untracked.count > 2 * kind.count + 64 { compactUntracked(kind) }
            }
            kind.noteValuesMayChange(key)
        }
    }

    /// Drops from `kind`'s untracked keys those no longer here, and repeats.
    private func compactUntracked(_ kind: Kind) {
        var seen = KeySet()
        kind.untracked = kind.untracked.filter { byKey[$0] != nil && seen.insert($0).inserted }
    }

    /// `kind`'s state (made if it has none).
    private mutating func state(_ kind: UInt32) -> Kind {
        if let known = kinds[kind] { return known }
        let made = Kind()
        kinds[kind] = made
        return made
    }

    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> ManagedObject? {
        guard let object = byKey.removeValue(forKey: key) else { return nil }
        sorted = nil
        // The kind's state, found once: changed in place, or dropped with its last object (its
        // value indexes with it: the next lookup rebuilds them from the live keys).
        guard let i = kinds.index(forKey: PrimaryKey.entity(of: key)) else { return object }
        let kind = kinds.values[i]
        if kind.count <= 1 {
            kinds.remove(at: i)
        } else {
            kind.count -= 1
            kind.noteDeleted(key)
        }
        return object
    }

    /// Every object here, in key order: the dictionary's entries sorted by their keys, so the
    /// comparisons read no object (sorting the objects by their `key` retained and released each
    /// one per comparison). The entries are sorted (RadixSort) as keys with unretained
    /// references as words, moved without a retain or release each (safe: `byKey` holds every
    /// object until the array is made). Kept until an object is added or removed (`sorted`): a
    /// save asks twice, to validate and to write, with the same objects in between.
    mutating func sortedByKey() -> [ManagedObject] {
        if let sorted { return sorted }
        var entries: [RadixSort.Entry] = []
        entries.reserveCapacity(byKey.count)
        for (key, object) in byKey {
            entries.append((high: 0, low: key, payload: UInt64(UInt(bitPattern: Unmanaged.passUnretained(object).toOpaque()))))
        }
        RadixSort.sort(&entries)
        let made = entries.compactMap { entry in
            UnsafeRawPointer(bitPattern: UInt(entry.payload)).map { Unmanaged<ManagedObject>.fromOpaque($0).takeUnretainedValue() }
        }
        sorted = made
        return made
    }

    /// `object`, here, was just marked deleted.
    func noteDeleted(_ object: ManagedObject) {
        let key = object.key
        kinds[PrimaryKey.entity(of: key)]?.noteDeleted(key)
    }

    /// `object` was just brought back from deletion; it counts as live if it is here.
    mutating func noteUndeleted(_ object: ManagedObject) {
        let key = object.key
        guard byKey[key] != nil else { return }
        let kind = state(PrimaryKey.entity(of: key))
        if kind.tracksLive { kind.live.insert(key) }
        kind.noteValuesMayChange(key)
    }

    /// The values of the object with `key` may be about to change, or have changed: its value
    /// index entries are re-encoded before the next lookup.
    func noteValuesMayChange(_ key: UInt64) {
        kinds[PrimaryKey.entity(of: key)]?.noteValuesMayChange(key)
    }

    // MARK: - Lookups by value

    /// Starts tracking `kind`'s live keys, if it is not tracked yet: they are gathered from the
    /// keys added to it once, then kept by every change (file comment).
    private func trackLive(_ kind: Kind) {
        guard !kind.tracksLive else { return }
        var live = KeySet()
        for key in kind.untracked {
            if let object = byKey[key], !object.isDeleted { live.insert(key) }
        }
        kind.untracked = []
        kind.live = live
        kind.tracksLive = true
    }

    /// The live objects a lookup of `kind`'s `slot` would encode now: the stale ones of the kind
    /// (for every value index it has), and every live one if `slot` has no index yet. The caller
    /// loads them (a changed object may still be a fault) before `liveObjects(of:slot:encodedAs:)`.
    func objectsToEncode(kind: UInt32, slot: Int) -> [ManagedObject] {
        guard let state = kinds[kind] else { return [] }
        trackLive(state)
        var out: [ManagedObject] = []
        func add(_ key: UInt64) {
            if let object = byKey[key], !object.isDeleted { out.append(object) }
        }
        if state.valueIndexes[slot] != nil {
            for key in state.stale { add(key) }
        } else {
            for key in state.live { add(key) }
            for key in state.stale where !state.live.contains(key) { add(key) }
        }
        return out
    }

    /// The live objects of `kind` whose `slot` encodes, as its index would hold it, to one of
    /// `points` — and any whose encoding shares a hash with one (the caller tests each object).
    /// Objects from `objectsToEncode` must be loaded.
    func liveObjects(of kind: UInt32, slot: Int, encodedAs points: [[UInt8]]) -> [ManagedObject] {
        func encoding(_ key: UInt64, _ slot: Int) -> [UInt8]? {
            guard let object = byKey[key], !object.isDeleted, slot < object.values.count else { return nil }
            return Context.indexValue(object.values[slot])
        }
        guard let state = kinds[kind] else { return [] }
        trackLive(state)
        // The stale keys are re-encoded into every index the kind has; the set is emptied
        // keeping its table (a fetch after each insert refills it).
        if !state.stale.isEmpty {
            for (s, index) in state.valueIndexes {
                for key in state.stale { index.set(key, to: encoding(key, s)) }
            }
            state.stale.removeAll()
        }
        let index: ValueIndex
        if let known = state.valueIndexes[slot] {
            index = known
        } else {
            index = ValueIndex()
            for key in state.live { index.set(key, to: encoding(key, slot)) }
            state.valueIndexes[slot] = index
        }
        var out: [ManagedObject] = []
        func add(_ hash: UInt64) {
            index.keysByValue[hash]?.forEach { key in
                if let object = byKey[key], !object.isDeleted { out.append(object) }
            }
        }
        // A key holds one value per slot, so distinct hashes never yield one key twice.
        if points.count < 2 {
            for point in points { add(ValueIndex.hash(point)) }
        } else {
            for hash in Set(points.map(ValueIndex.hash)) { add(hash) }
        }
        return out
    }

    /// The objects here of one of `kinds` that are not deleted, in no order.
    func liveObjects(of kinds: Set<UInt32>) -> [ManagedObject] {
        var out: [ManagedObject] = []
        for kind in kinds {
            guard let state = self.kinds[kind] else { continue }
            trackLive(state)
            for key in state.live {
                if let object = byKey[key], !object.isDeleted { out.append(object) }
            }
        }
        return out
    }

    /// Whether any object here, deleted or not, is of one of `kinds`.
    func containsAny(of kinds: Set<UInt32>) -> Bool {
        kinds.contains { self.kinds[$0] != nil }
    }

    /// The keys of the objects here of one of `kinds`, deleted ones included.
    func keys(of kinds: Set<UInt32>) -> Set<UInt64> {
        guard containsAny(of: kinds) else { return [] }
        var out = Set<UInt64>()
        for (key, _) in byKey where kinds.contains(PrimaryKey.entity(of: key)) { out.insert(key) }
        return out
    }
}
