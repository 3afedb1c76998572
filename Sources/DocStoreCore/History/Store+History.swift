// Store+History: persistent history — appending a save's transaction to the history tree, and
// reading and purging it (Core Data's NSPersistentHistoryChangeRequest). Format/history.md
// specifies the bytes; HistoryTransaction.swift the values readers get.
//
//   SH1  the history tree is made by the first save that needs it, in that save's transaction,
//        so opening a store never writes and stores from before history read as having none.
//   SH2  reading history takes one snapshot: a reader sees whole transactions only.
//   SH3  purging deletes whole transactions, oldest first, in one write transaction; it is not
//        itself recorded.

import Foundation
internal import DocStoreEngine

extension Store {
    /// Appends `history` as the transaction `txn` commits (Format/history.md, SH1).
    func appendHistory(_ history: RecordedTransaction, _ txn: WriteTransaction) throws {
        if !historyTreeExists.load(ordering: .acquiring) {
            try txn.createTreeIfMissing(HistoryCoding.tree)
        }
        let lsn = txn.commitLSN.rawValue
        for (n, chunk) in HistoryCoding.encode(history).enumerated() {
            guard n <= Int(UInt16.max) else {
                throw DocStoreError(.storage, "a save of \(history.changes.count) changes needs more than 65 536 history chunks; save in smaller parts")
            }
            try txn.put(chunk, for: HistoryCoding.key(lsn: lsn, chunk: UInt16(n)), in: HistoryCoding.tree)
        }
    }

    /// Notes that the history tree exists once a save that made it committed.
    func historyTreeCommitted() { historyTreeExists.store(true, ordering: .releasing) }

    /// The transactions committed after `token` (all of them when nil), oldest first (SH2).
    ///
    /// ```swift
    /// let transactions = try store.history(after: lastToken, entities: ["Note"])
    /// for t in transactions { for change in t.changes { … } }
    /// lastToken = transactions.last?.token ?? lastToken
    /// ```
    ///
    /// - Parameters:
    ///   - entities: only changes of these entities (and their sub-entities); transactions
    ///     without any are left out.
    ///   - author: only transactions saved by a context with this ``Context/transactionAuthor``.
    ///   - contextName: only transactions saved by a context with this ``Context/name``.
    /// - Throws: ``DocStoreError/Code/invalidQuery`` for an unknown entity name;
    ///   ``DocStoreError/Code/corrupt`` for damaged history; ``DocStoreError/Code/storage``.
    public func history(after token: HistoryToken? = nil, entities: [String]? = nil, author: String? = nil,
                        contextName: String? = nil) throws(DocStoreError) -> [HistoryTransaction] {
        let kinds = try entityKinds(entities)
        let raw = try recordedTransactions(after: token?.value, limit: Int.max)
        var result: [HistoryTransaction] = []
        for (lsn, t) in raw {
            if let author, t.author != author { continue }
            if let contextName, t.contextName != contextName { continue }
            var recorded = t
            if let kinds {
                recorded.changes = t.changes.filter { kinds.contains(PrimaryKey.entity(of: $0.key)) }
                if recorded.changes.isEmpty { continue }
            }
            result.append(HistoryTransaction(recorded, lsn: lsn, origin: 0, model: model, storeID: identifier))
        }
        return result
    }

    /// The transactions committed after `token` (all when nil), oldest first, at most `limit`,
    /// read in one snapshot (SH2).
    func recordedTransactions(after token: UInt64?, limit: Int) throws(DocStoreError) -> [(UInt64, RecordedTransaction)] {
        try read { txn in
            guard try txn.treeExists(HistoryCoding.tree) else { return [] }
            var out: [(UInt64, RecordedTransaction)] = []
            var cursor = try txn.cursor(in: HistoryCoding.tree)
            let start = token.map { HistoryCoding.key(lsn: $0 &+ 1, chunk: 0) } ?? []
            var entry = token == UInt64.max ? nil : try cursor.seek(to: start)
            var chunks: [[UInt8]] = []
            var current: UInt64?
            while let (k, v) = entry {
                guard let (lsn, chunk) = HistoryCoding.parseKey(k) else {
                    throw DocStoreError(.corrupt, "the history tree holds a key of \(k.count) bytes, not 10")
                }
                if lsn != current {
                    if let done = current {
                        out.append((done, try HistoryCoding.decode(chunks, lsn: done)))
                        chunks = []
                        if out.count >= limit { return out }
                    }
                    current = lsn
                    guard chunk == 0 else { throw DocStoreError(.corrupt, "history transaction \(lsn) lacks its first chunk") }
                } else if Int(chunk) != chunks.count {
                    throw DocStoreError(.corrupt, "history transaction \(lsn) skips from chunk \(chunks.count - 1) to \(chunk)")
                }
                chunks.append(v)
                entry = try cursor.next()
            }
            if let done = current { out.append((done, try HistoryCoding.decode(chunks, lsn: done))) }
            return out
        }
    }

    /// The token of the last committed transaction in history, or nil when there is none.
    public func lastHistoryToken() throws(DocStoreError) -> HistoryToken? {
        try read { txn -> HistoryToken? in
            guard try txn.treeExists(HistoryCoding.tree) else { return nil }
            var cursor = try txn.cursor(in: HistoryCoding.tree)
            guard let (k, _) = try cursor.last(), let (lsn, _) = HistoryCoding.parseKey(k) else { return nil }
            return HistoryToken(lsn)
        }
    }

    /// Deletes the history up to and including `token` (Core Data's `deleteHistory(before:)`
    /// keeps the token's own transaction; DocStore's readers ask for history *after* a token, so
    /// everything up to it is what they have handled). Returns the number of transactions
    /// deleted (SH3). In a synced store, history the server has not acknowledged yet is kept
    /// whatever the token (the retention hold, Store+SyncSupport SS2).
    @discardableResult
    public func deleteHistory(through token: HistoryToken) throws(DocStoreError) -> Int {
        try purgeHistory { lsn, _ in lsn <= token.value }
    }

    /// Deletes the transactions committed before `date`. Returns how many were deleted (SH3).
    @discardableResult
    public func deleteHistory(before date: Date) throws(DocStoreError) -> Int {
        try purgeHistory { _, timestamp in timestamp < date }
    }

    /// Deletes transactions from the oldest on while `isOld` holds for them.
    private func purgeHistory(_ isOld: @escaping (UInt64, Date) -> Bool) throws(DocStoreError) -> Int {
        try write { txn -> Int in
            guard try txn.treeExists(HistoryCoding.tree) else { return 0 }
            // SS2: sync has not had the server acknowledge what comes after its hold.
            let hold = try retentionHold(txn)
            var doomed: [[UInt8]] = []
            var count = 0
            var cursor = try txn.cursor(in: HistoryCoding.tree)
            var entry = try cursor.first()
            var keeping = false
            while let (k, v) = entry, !keeping {
                guard let (lsn, chunk) = HistoryCoding.parseKey(k) else {
                    throw DocStoreError(.corrupt, "the history tree holds a key of \(k.count) bytes, not 10")
                }
                if let hold, lsn > hold { break }
                if chunk == 0 {
                    let header = try HistoryCoding.decodeHeader(v, lsn: lsn)
                    if isOld(lsn, header) { count += 1 } else { keeping = true; break }
                }
                doomed.append(k)
                entry = try cursor.next()
            }
            for k in doomed { _ = try txn.delete(k, in: HistoryCoding.tree) }
            return count
        }
    }

    /// The entity IDs `names` and their sub-entities stand for; nil for all.
    func entityKinds(_ names: [String]?) throws(DocStoreError) -> Set<UInt32>? {
        guard let names else { return nil }
        var kinds = Set<UInt32>()
        for name in names {
            guard let entity = model.entity(named: name) else {
                throw DocStoreError(.invalidQuery, "the schema has no entity \"\(name)\"", entity: name)
            }
            kinds.formUnion(entity.kindIDs)
        }
        return kinds
    }
}

extension HistoryTransaction {
    /// The reader's form of a recorded transaction: keys become object IDs, field IDs names.
    init(_ t: RecordedTransaction, lsn: UInt64, origin: UInt64, model: StoreModel, storeID: UUID) {
        token = HistoryToken(lsn)
        timestamp = t.timestamp
        author = t.author
        contextName = t.contextName
        self.origin = origin
        changes = t.changes.map { c in
            let entity = model.entity(ofKey: c.key)
            func name(_ field: UInt32) -> String {
                guard let entity, Int(field) < entity.slotForField.count, entity.slotForField[Int(field)] >= 0 else { return "#\(field)" }
                return entity.properties[entity.slotForField[Int(field)]].name
            }
            let id = ObjectID(store: storeID, entity: entity?.name ?? "#\(PrimaryKey.entity(of: c.key))", key: c.key)
            let type: HistoryChange.ChangeType = switch c.kind {
            case .insert: .insert
            case .update: .update
            case .delete: .delete
            }
            var tombstone: [String: StoredValue] = [:]
            for (field, value) in c.tombstone { tombstone[name(field)] = value }
            return HistoryChange(changedObjectID: id, changeType: type, updatedProperties: Set(c.fields.map(name)), tombstone: tombstone)
        }
    }
}
