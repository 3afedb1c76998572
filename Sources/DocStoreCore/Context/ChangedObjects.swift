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
// So a fetch costs what the unsaved objects it could return cost, not what the context holds:
// fetching and deleting 50 000 objects one at a time in one context is linear, not quadratic.

/// The changed objects of a context, by primary key (Context.swift's `changed`).
struct ChangedObjects: Sequence, ExpressibleByDictionaryLiteral {
    private(set) var byKey: [UInt64: ManagedObject] = [:]
    private var live: [UInt32: Set<UInt64>] = [:]
    private var counts: [UInt32: Int] = [:]

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
        }
    }

    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> ManagedObject? {
        guard let object = byKey.removeValue(forKey: key) else { return nil }
        let kind = PrimaryKey.entity(of: key)
        live[kind]?.remove(key)
        counts[kind, default: 1] -= 1
        if counts[kind] == 0 { counts.removeValue(forKey: kind) }
        return object
    }

    /// `object`, here, was just marked deleted.
    mutating func noteDeleted(_ object: ManagedObject) {
        live[PrimaryKey.entity(of: object.key)]?.remove(object.key)
    }

    /// `object` was just brought back from deletion; it counts as live if it is here.
    mutating func noteUndeleted(_ object: ManagedObject) {
        guard byKey[object.key] != nil else { return }
        live[PrimaryKey.entity(of: object.key), default: []].insert(object.key)
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
