// RecordLookup: records read by primary key inside one read transaction, through one cursor per
// records tree kept between lookups. Queries read candidates this way: a key within the leaf the
// cursor is on is found by a binary search in that leaf, so candidates in (or near) key order —
// an index range over values that grew with the keys, a sorted set of linked objects — cost no
// descent from the root each. Reads the transaction's snapshot only (never the row cache).

internal import DocStoreEngine

struct RecordLookup {
    private let txn: Transaction
    private var tree = ""
    private var cursor: Cursor?

    init(_ txn: Transaction) { self.txn = txn }

    /// The stored record of `key` (an object of `entity`), or nil when there is none.
    mutating func record(_ key: UInt64, _ entity: EntityInfo) throws -> [UInt8]? {
        if cursor == nil || tree != entity.recordsTree {
            guard try txn.treeExists(entity.recordsTree) else { return nil }
            cursor = try txn.cursor(in: entity.recordsTree)
            tree = entity.recordsTree
        }
        return try cursor?.value(forKey: PrimaryKey.bytes(key))
    }
}
