// A context's changed objects — inserted, updated or deleted, not yet saved — by primary key,
// with per-entity-kind indexes a fetch uses to find the unsaved objects it must consider (F2)
// without walking all of them.
//
// Invariants:
// - `live[kind]` holds exactly the keys of the objects here of that kind that are not deleted,
//   as their deleted flag stood at their last `subscript` set or at the last
//   `noteDeleted`/`noteUndeleted` of them. Code that flips the flag of an object that is here
//   says so through those two; setting an object again re-reads its flag.
// - `counts[kind]` is how many objects here are of that kind, deleted ones included.
// - A value index (kind, slot) maps, for every live object of the kind, the slot's value as its
//   index encodes it (Context.indexValue) to the object's key. It is made the first time a fetch
//   looks up by that attribute and kept current lazily: a key whose values may have changed —
//   set, removed, deleted, undeleted, or told through `noteValuesMayChange` (every attribute or
//   to-one write calls `willChange` first, which tells) — is `stale` for its kind's indexes and
//   re-encoded before the next lookup reads them.
// So a fetch costs what the unsaved objects it could return cost, not what the context holds:
// fetching and deleting 50 000 objects one at a time in one context is linear, not quadratic,
// and so is finding-or-creating 50 000 objects by an indexed attribute.

/// The changed objects of a context, by primary key (Context.swift's `changed`).
struct ChangedObjects: Sequence, ExpressibleByDictionaryLiteral {
    private(set) var byKey: [UInt64: ManagedObject] = [:]
    private var live: [UInt32: Set<UInt64>] = [:]
    private var counts: [UInt32: Int] = [:]
    /// Per (kind, slot): the live objects by their value's index encoding (file comment).
    private var valueIndexes: [ValueIndexKey: ValueIndex] = [:]
    /// The slots of each kind that have a value index.
    private var indexedSlots: [UInt32: [Int]] = [:]
    /// Per kind with value indexes: the keys to re-encode before a lookup.
    private var stale: [UInt32: Set<UInt64>] = [:]

    struct ValueIndexKey: Hashable {
        let kind: UInt32
        let slot: Int
    }

    struct ValueIndex {
        var keysByValue: [[UInt8]: Set<UInt64>] = [:]
        var valueOfKey: [UInt64: [UInt8]] = [:]

        mutating func set(_ key: UInt64, to value: [UInt8]?) {
            let old = valueOfKey[key]
            if old == value { return }
            if let old {
                keysByValue[old]?.remove(key)
                if keysByValue[old]?.isEmpty == true { keysByValue.removeValue(forKey: old) }
            }
            valueOfKey[key] = value
            if let value { keysByValue[value, default: []].insert(key) }
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
            let kind = PrimaryKey.entity(of: key)
            if byKey.updateValue(object, forKey: key) == nil { counts[kind, default: 0] += 1 }
            if object.isDeleted { live[kind]?.remove(key) } else { live[kind, default: []].insert(key) }
            noteValuesMayChange(key)
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> ManagedObject? {
        guard let object = byKey.removeValue(forKey: key) else { return nil }
        let kind = PrimaryKey.entity(of: key)
        live[kind]?.remove(key)
        counts[kind, default: 1] -= 1
        if counts[kind] == 0 { counts.removeValue(forKey: kind) }
        noteValuesMayChange(key)
        return object
    }

    /// `object`, here, was just marked deleted.
    mutating func noteDeleted(_ object: ManagedObject) {
        live[PrimaryKey.entity(of: object.key)]?.remove(object.key)
        noteValuesMayChange(object.key)
    }

    /// `object` was just brought back from deletion; it counts as live if it is here.
    mutating func noteUndeleted(_ object: ManagedObject) {
        guard byKey[object.key] != nil else { return }
        live[PrimaryKey.entity(of: object.key), default: []].insert(object.key)
        noteValuesMayChange(object.key)
    }

    /// The values of the object with `key` may be about to change, or have changed: its value
    /// index entries are re-encoded before the next lookup.
    mutating func noteValuesMayChange(_ key: UInt64) {
        let kind = PrimaryKey.entity(of: key)
        guard indexedSlots[kind] != nil else { return }
        stale[kind, default: []].insert(key)
    }

    // MARK: - Lookups by value

    /// The live objects a lookup of `kind`'s `slot` would encode now: the stale ones of the kind
    /// (for every value index it has), and every live one if `slot` has no index yet. The caller
    /// loads them (a changed object may still be a fault) before `liveObjects(of:slot:encodedAs:)`.
    func objectsToEncode(kind: UInt32, slot: Int) -> [ManagedObject] {
        let keys: Set<UInt64> = valueIndexes[ValueIndexKey(kind: kind, slot: slot)] == nil ? live[kind] ?? [] : []
        return keys.union(stale[kind] ?? []).compactMap { key in byKey[key].flatMap { $0.isDeleted ? nil : $0 } }
    }

    /// The live objects of `kind` whose `slot` encodes, as its index would hold it, to one of
    /// `points`. Objects from `objectsToEncode` must be loaded.
    mutating func liveObjects(of kind: UInt32, slot: Int, encodedAs points: [[UInt8]]) -> [ManagedObject] {
        func encoding(_ key: UInt64, _ slot: Int) -> [UInt8]? {
            guard let object = byKey[key], !object.isDeleted, slot < object.values.count else { return nil }
            return Context.indexValue(object.values[slot])
        }
        // Each index is taken out while it changes, so it is changed in place, never copied.
        if let keys = stale.removeValue(forKey: kind) {
            for s in indexedSlots[kind] ?? [] {
                let k = ValueIndexKey(kind: kind, slot: s)
                guard var index = valueIndexes.removeValue(forKey: k) else { continue }
                for key in keys { index.set(key, to: encoding(key, s)) }
                valueIndexes[k] = index
            }
        }
        let wanted = ValueIndexKey(kind: kind, slot: slot)
        if valueIndexes[wanted] == nil {
            var index = ValueIndex()
            for key in live[kind] ?? [] { index.set(key, to: encoding(key, slot)) }
            valueIndexes[wanted] = index
            indexedSlots[kind, default: []].append(slot)
        }
        var out: [ManagedObject] = []
        var seen = Set<UInt64>()
        for point in points {
            for key in valueIndexes[wanted]?.keysByValue[point] ?? [] where seen.insert(key).inserted {
                if let object = byKey[key], !object.isDeleted { out.append(object) }
            }
        }
        return out
    }

    /// The objects here of one of `kinds` that are not deleted, in no order.
    func liveObjects(of kinds: Set<UInt32>) -> [ManagedObject] {
        var out: [ManagedObject] = []
        for kind in kinds {
            guard let keys = live[kind] else { continue }
            for key in keys {
                if let object = byKey[key], !object.isDeleted { out.append(object) }
            }
        }
        return out
    }

    /// Whether any object here, deleted or not, is of one of `kinds`.
    func containsAny(of kinds: Set<UInt32>) -> Bool {
        kinds.contains { counts[$0] != nil }
    }

    /// The keys of the objects here of one of `kinds`, deleted ones included.
    func keys(of kinds: Set<UInt32>) -> Set<UInt64> {
        guard containsAny(of: kinds) else { return [] }
        var out = Set<UInt64>()
        for (key, _) in byKey where kinds.contains(PrimaryKey.entity(of: key)) { out.insert(key) }
        return out
    }
}
