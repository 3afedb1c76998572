// Store+SyncSupport: what the device side of sync (the DocStoreSync module) needs from a store,
// at package level — an app never calls it. Sync keeps its own state (global IDs, cursors, the
// clock) in the tree `docstore.sync` (Format/sync.md § Device state), reads history with the
// values each save stored (history format 2), and writes its state in the same engine
// transactions as the changes it applies.
//
//   SS1 a store that has the sync tree records values and links in history (format 2) from
//       the moment the tree exists: `enableSyncCapture` creates it and sets the flag under
//       the same write, so no save after it misses its values.
//   SS2 history after the retention hold (the last token the server acknowledged) is never
//       purged (Store+History honours it).

import Foundation
import Synchronization
package import DocStoreEngine

/// One save as sync reads it from history: names instead of IDs.
package struct CapturedTransaction: Sendable {
    package var token: UInt64
    package var timestamp: Date
    package var author: String?
    /// Whether the save recorded its values (format 2); a save made before sync was enabled,
    /// or by a batch operation, did not.
    package var hasValues: Bool
    package var changes: [CapturedChange]
}

/// One object's change in a captured save.
package struct CapturedChange: Sendable {
    package enum Kind: Sendable { case insert, update, delete }
    package var kind: Kind
    package var entity: String
    package var key: UInt64
    /// Changed property names (updates), attributes and relationships.
    package var changedProperties: [String]
    /// The saved values by property name; a to-one as `.reference(key)` or `.null`.
    package var values: [String: StoredValue]
    /// To-many links added (`present`) or removed, by relationship name.
    package var links: [(relationship: String, target: UInt64, present: Bool)]
}

extension Store {
    /// The tree sync keeps its state in (SS1).
    package static let syncTree = "docstore.sync"
    /// The key of the retention hold in the sync tree (SS2): history after this token is kept.
    package static let retentionHoldKey: [UInt8] = Array("retention-hold".utf8)

    /// Creates the sync tree, so that saves record their values from now on (SS1).
    package func enableSyncCapture() throws(DocStoreError) {
        guard !recordsChangeValues.load(ordering: .acquiring) else { return }
        try write { txn in
            try txn.createTreeIfMissing(Store.syncTree)
            // SS2: until the server acknowledges something, all history is held.
            if try txn.get(Store.retentionHoldKey, in: Store.syncTree) == nil { try setRetentionHold(0, txn) }
        }
        recordsChangeValues.store(true, ordering: .releasing)
    }

    /// A read of the store's engine in one snapshot, for sync's state.
    package func syncRead<R>(_ body: (ReadTransaction) throws -> R) throws(DocStoreError) -> R {
        try read(body)
    }

    /// A write transaction on the store's engine, for sync's state alone.
    package func syncWrite<R>(_ body: (WriteTransaction) throws -> R) throws(DocStoreError) -> R {
        try write(body)
    }

    /// The saves after `token`, oldest first, at most `limit` of them, with names for IDs.
    package func capturedHistory(after token: UInt64, limit: Int) throws(DocStoreError) -> [CapturedTransaction] {
        let raw = try recordedTransactions(after: token, limit: limit)
        return raw.map { lsn, t in
            CapturedTransaction(token: lsn, timestamp: t.timestamp, author: t.author, hasValues: t.hasValues,
                                changes: t.changes.compactMap { captured($0) })
        }
    }

    private func captured(_ c: RecordedChange) -> CapturedChange? {
        guard let entity = model.entity(ofKey: c.key) else { return nil }
        func property(_ field: UInt32) -> PropertyInfo? {
            guard Int(field) < entity.slotForField.count, entity.slotForField[Int(field)] >= 0 else { return nil }
            return entity.properties[entity.slotForField[Int(field)]]
        }
        let kind: CapturedChange.Kind = switch c.kind {
        case .insert: .insert
        case .update: .update
        case .delete: .delete
        }
        var values: [String: StoredValue] = [:]
        for (field, value) in c.values { if let p = property(field) { values[p.name] = value } }
        return CapturedChange(
            kind: kind, entity: entity.name, key: c.key,
            changedProperties: c.fields.compactMap { property($0)?.name },
            values: values,
            links: c.links.compactMap { link in property(link.fieldID).map { ($0.name, link.target, link.present) } })
    }

    /// The current stored values of the object `key` by property name (to-ones as
    /// `.reference`), or nil if it does not exist: what sync pushes for a save that recorded no
    /// values.
    package func currentValues(ofKey key: UInt64) throws(DocStoreError) -> [String: StoredValue]? {
        guard let entity = model.entity(ofKey: key) else { return nil }
        let values: [StoredValue]? = try read { txn in
            guard let bytes = try txn.get(PrimaryKey.bytes(key), in: entity.recordsTree) else { return nil }
            return try entity.values(ofRecord: bytes, key: key).values
        }
        guard let values else { return nil }
        var out: [String: StoredValue] = [:]
        for slot in entity.recordSlots where slot < values.count && !values[slot].isNull {
            out[entity.properties[slot].name] = values[slot]
        }
        return out
    }

    /// Whether the object `key` exists in `txn`'s snapshot (a mapped object may have been
    /// deleted here meanwhile).
    package func objectExists(key: UInt64, _ txn: Transaction) throws -> Bool {
        guard let entity = model.entity(ofKey: key) else { return false }
        return try txn.treeExists(entity.recordsTree) && txn.contains(PrimaryKey.bytes(key), in: entity.recordsTree)
    }

    /// The members of the ordered to-many `relationship` of the object `key` in `txn`'s
    /// snapshot, in order; nil when the object does not exist or the relationship is not an
    /// ordered to-many of its entity (what sync pushes as the order, OR2).
    package func orderedMembers(ofKey key: UInt64, relationship: String, _ txn: Transaction) throws -> [UInt64]? {
        guard let entity = model.entity(ofKey: key), let slot = entity.slotByName[relationship],
              entity.properties[slot].isOrdered, try objectExists(key: key, txn) else { return nil }
        let p = entity.properties[slot]
        guard try txn.treeExists(p.linkTree) else { return [] }
        let prefix = PrimaryKey.bytes(key)
        var out: [UInt64] = []
        var cursor = try txn.cursor(in: p.linkTree)
        var entry = try cursor.seek(to: prefix)
        while let (k, v) = entry, k.count == 16, k.starts(with: prefix) {
            guard let target = PrimaryKey.read(v) else {
                throw DocStoreError(.corrupt, "a link of \(p.name) under key \(key) is malformed", property: p.name)
            }
            out.append(target)
            entry = try cursor.next()
        }
        return out
    }

    /// The ID of the object `key` (whether or not it exists), nil for a key of no entity.
    package func objectID(ofKey key: UInt64) -> ObjectID? {
        model.entity(ofKey: key).map { ObjectID(store: identifier, entity: $0.name, key: key) }
    }

    /// The name of the entity whose object `key` is, if the store has it.
    package func entityName(ofKey key: UInt64) -> String? { model.entity(ofKey: key)?.name }

    /// Hands out a new primary key of `entity` (for an object sync is about to insert, so that
    /// its global ID can be mapped in the same save).
    package func reserveKey(entity name: String) throws(DocStoreError) -> UInt64 {
        guard let entity = model.entity(named: name), !entity.description.isAbstract else {
            throw DocStoreError(.unknownProperty, "the schema has no concrete entity \"\(name)\"", entity: name)
        }
        return nextKey(for: entity)
    }

    /// Sets the retention hold (SS2): history after `token` is kept by every purge.
    package func setRetentionHold(_ token: UInt64, _ txn: WriteTransaction) throws {
        var bytes = [UInt8](repeating: 0, count: 8)
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: token.bigEndian, as: UInt64.self) }
        try txn.put(bytes, for: Store.retentionHoldKey, in: Store.syncTree)
    }

    /// The retention hold, if sync set one (SS2).
    func retentionHold(_ txn: Transaction) throws -> UInt64? {
        guard try txn.treeExists(Store.syncTree),
              let bytes = try txn.get(Store.retentionHoldKey, in: Store.syncTree), bytes.count == 8 else { return nil }
        return bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}

extension Store {
    /// The catalog's schema version number (what a push names its schema by).
    package var schemaVersionNumber: Int { Int(catalog.schemaVersion) }
}

extension Store {
    /// The highest key handed out so far for the entity `name` (0 when none): objects with
    /// keys up to it existed before this call.
    package func highestKey(ofEntity name: String) -> UInt64 {
        guard let entity = model.entity(named: name) else { return 0 }
        return PrimaryKey.make(entity: entity.id, sequence: highestSequence(of: entity.id))
    }
}
