// RecordScan: the records of one entity (not its sub-entities) in key order — the keys of its
// hierarchy's records tree whose top 16 bits are its entity ID (Format/record.md § Primary
// keys), from entityID << 48 on. Fetches and the store summary read entities this way.

internal import DocStoreEngine

extension Transaction {
    /// Calls `body` with each record of `entity`, in primary-key order, as an array of its own
    /// (for a caller that keeps it; `forEachRecordInPlace` copies nothing).
    func forEachRecord(of entity: EntityInfo, _ body: (UInt64, [UInt8]) throws -> Void) throws {
        try forEachRecordInPlace(of: entity) { key, bytes in try body(key, Array(bytes)) }
    }

    /// Calls `body` with the primary key of each record of `entity`, in order (its bytes are not
    /// copied).
    func forEachRecordKey(of entity: EntityInfo, _ body: (UInt64) throws -> Void) throws {
        try forEachRecordInPlace(of: entity) { key, _ in try body(key) }
    }
}

extension Transaction {
    /// Calls `body` with each record of `entity` in primary-key order, in place in its page (the
    /// bytes are valid only inside `body`): a scan that tests records copies none of them.
    func forEachRecordInPlace(of entity: EntityInfo, _ body: (UInt64, UnsafeRawBufferPointer) throws -> Void) throws {
        guard try treeExists(entity.recordsTree) else { return }
        // The range ends where the keys' entity ID changes (not at the next ID's first key:
        // after the largest ID, 0xFFFF, that key does not fit in 64 bits).
        var cursor = try cursor(in: entity.recordsTree)
        var more = try cursor.move(to: PrimaryKey.bytes(PrimaryKey.make(entity: entity.id, sequence: 0)))
        while more {
            var inRange = false
            let atEntry = try cursor.visitCurrent { (k, bytes) in
                guard let key = PrimaryKey.read(k), PrimaryKey.entity(of: key) == entity.id else { return }
                inRange = true
                try body(key, bytes)
            }
            guard atEntry, inRange else { return }
            more = try cursor.advance()
        }
    }
}
