// RecordLookup: records read by primary key inside one read transaction, through one cursor per
// records tree kept between lookups. Queries read candidates this way: a key within the leaf the
// cursor is on is found by a binary search in that leaf, so candidates in (or near) key order —
// an index range over values that grew with the keys, a sorted set of linked objects — cost no
// descent from the root each; a record stored in its leaf is handed over in place, not copied.
// Reads the transaction's snapshot only (never the row cache).

internal import DocStoreEngine

struct RecordLookup {
    private let txn: Transaction
    private var tree = ""
    private var cursor: Cursor?
    /// The key looked up, rewritten in place for each lookup (no array made per candidate).
    private var keyBytes = [UInt8](repeating: 0, count: 8)
    /// The key a prefetch asks for (`prefetch`), rewritten in place.
    private var aheadBytes = [UInt8](repeating: 0, count: 8)

    init(_ txn: Transaction) { self.txn = txn }

    /// Calls `body` with the stored record of `key` (an object of `entity`) in place, without
    /// copying it out of its page; nil when there is none.
    mutating func withRecord<R>(_ key: UInt64, _ entity: EntityInfo, _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard try place(key, entity) else { return nil }
        return try cursor?.withValue(forKey: keyBytes, body)
    }

    /// Calls `body` with the stored record of `key` in place, as `withRecord` does; whether
    /// there is one. Not generic: the engine's lookup runs specialized (a query's per-candidate
    /// path).
    mutating func visitRecord(_ key: UInt64, _ entity: EntityInfo, _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        guard try place(key, entity) else { return false }
        return try cursor?.visitValue(forKey: keyBytes, body) ?? false
    }

    /// Starts loading the leaf that holds `key`'s record (Cursor.prefetchLeaf), when the
    /// cursor is on `entity`'s records tree already: for a lookup of sorted keys, a few ahead.
    mutating func prefetch(_ key: UInt64, _ entity: EntityInfo) {
        guard tree == entity.recordsTree else { return }
        aheadBytes.withUnsafeMutableBytes { $0.storeBytes(of: key.bigEndian, as: UInt64.self) }
        cursor?.prefetchLeaf(forKey: aheadBytes)
    }

    /// Readies the cursor of `entity`'s records tree and the key bytes of `key`; false when
    /// the tree does not exist.
    private mutating func place(_ key: UInt64, _ entity: EntityInfo) throws -> Bool {
        if tree != entity.recordsTree {   // (`tree` is "" until a cursor is made)
            guard try txn.treeExists(entity.recordsTree) else { return false }
            cursor = try txn.cursor(in: entity.recordsTree)
            tree = entity.recordsTree
        }
        keyBytes.withUnsafeMutableBytes { $0.storeBytes(of: key.bigEndian, as: UInt64.self) }
        return true
    }
}
