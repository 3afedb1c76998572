// IndexEntries: an object's entries in its entity's indexes and uniqueness constraints
// (Format/record.md § Index keys, § Compound index keys), added and removed from its values —
// what a context's save and the batch operations do alike, so both keep indexes the same way.
//
//   IE1 a unique entry is removed only while it still names the object (another object may
//       have taken the value in the same transaction); other entries carry the primary key,
//       so they are the object's alone.
//   IE2 new unique entries go through `WriteBatch.putUnique`, which checks them against each
//       other and the store before anything is put.
//   IE3 `affected` limits the work to the indexes whose elements changed: an index none of
//       whose slots changed keeps its entry.

internal import DocStoreEngine

enum IndexEntries {
    /// Removes the entries of the object `key` whose values were `values`, in the indexes
    /// `affected` accepts (given the slots each one reads).
    /// `deleter`, when given, takes each entry to delete instead of deleting it at once (a batch
    /// collects its deletes and applies them sorted).
    static func remove(key: UInt64, _ entity: EntityInfo, values: [StoredValue], _ txn: WriteTransaction,
                       affected: (IndexSlots) -> Bool = { _ in true },
                       deleter: (([UInt8], String) -> Void)? = nil) throws {
        func delete(_ k: [UInt8], _ tree: String) throws {
            if let deleter { deleter(k, tree) } else { _ = try txn.delete(k, in: tree) }
        }
        for p in entity.properties {
            guard let tree = p.indexTree, p.slot < values.count, affected(.one(p.slot)),
                  let k = Context.indexKey(values[p.slot], unique: p.isUnique, key: key) else { continue }
            if p.isUnique {
                if let owner = try txn.get(k, in: tree), PrimaryKey.read(owner) == key { try delete(k, tree) }
            } else {
                try delete(k, tree)
            }
        }
        for index in entity.compoundIndexes where affected(.several(index.slots)) {
            try Context.forEachCompoundEntry(values, index, key: key) { k, checks in
                if checks {
                    if let owner = try txn.get(k, in: index.tree), PrimaryKey.read(owner) == key { try delete(k, index.tree) }
                } else {
                    try delete(k, index.tree)
                }
            }
        }
    }

    /// Adds the entries of the object `key` with `values` to `batch`, in the indexes
    /// `affected` accepts.
    static func add(key: UInt64, _ entity: EntityInfo, values: [StoredValue], to batch: inout WriteBatch,
                    affected: (IndexSlots) -> Bool = { _ in true }) {
        for p in entity.properties {
            guard let tree = p.indexTree, p.slot < values.count, affected(.one(p.slot)),
                  let k = Context.indexKey(values[p.slot], unique: p.isUnique, key: key) else { continue }
            if p.isUnique {
                batch.putUnique(key, for: k, in: tree, UniqueOwner(entity: entity.name, property: p.name, together: false, values: [values[p.slot]]))
            } else {
                batch.put([], for: k, in: tree)
            }
        }
        for index in entity.compoundIndexes where affected(.several(index.slots)) {
            Context.forEachCompoundEntry(values, index, key: key) { k, checks in
                if checks {
                    batch.putUnique(key, for: k, in: index.tree, UniqueOwner(entity: entity.name, property: index.propertyList, together: true,
                                                                           values: index.elements.map { values[$0.slot] }))
                } else {
                    batch.put(primaryKey: key, for: k, in: index.tree)
                }
            }
        }
    }

    /// The slots an index reads: one attribute's, or a compound index's elements'.
    enum IndexSlots {
        case one(Int)
        case several([Int])

        /// Whether any of its slots is in `changed`.
        func intersects(_ changed: Set<Int>) -> Bool {
            switch self {
            case .one(let s): changed.contains(s)
            case .several(let slots): slots.contains { changed.contains($0) }
            }
        }
    }
}
