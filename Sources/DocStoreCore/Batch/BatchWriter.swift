// BatchWriter: the object-graph bookkeeping of one batch operation inside its engine write
// transaction — records, index entries and links written without managed objects, the
// inverse side of every link kept in step, and the history the batch records.
//
//   B1  a batch is one engine transaction: everything it writes commits together or not at
//       all; a batch that changes nothing writes nothing (not even history).
//   B2  the request's own objects are written first (records and index entries through a
//       WriteBatch, so uniqueness is checked against the store and within the batch before
//       anything is put); then the neighbours — existing objects whose to-many links or
//       to-one values changed because of them — are rewritten once each with their next row
//       version (as a save's rule W3), their changed relationship names recorded in history.
//   B3  history lists each object once, in primary-key order (H2): a neighbour that is also
//       one of the request's objects has its changed properties merged into one update.
//   B4  a neighbour deleted by the same batch is not rewritten: its own deletion removes its
//       record and links.
//   B5  a one-to-one relationship whose target is given to a second object loses its first
//       partner, as a context's edit would: the old partner's side is cleared.
//   B6  deletes of whole entries (a deleted object's record, links and index entries) are
//       collected per tree and applied in key order at `finish`, before the puts; nothing the
//       batch reads meanwhile depends on them being gone.
//   B7  a neighbour left without the object of a required to-one (its partner given to
//       another object, or deleted with the rule nullify) refuses the batch, as a save refuses it.
//   B8  an ordered to-many's list is read once per batch when links leave it (its members'
//       keys kept and updated as the batch adds and removes links), not once per link: a
//       batch removing many members of one list stays linear.

import Foundation
internal import DocStoreEngine

final class BatchWriter {
    let model: StoreModel
    /// The schema version records are written with.
    let schemaVersion: UInt32
    let txn: WriteTransaction
    /// The request's own objects' puts (B2).
    var batch = WriteBatch()
    /// The request's own objects' changes, in the order made.
    var changes: [RecordedChange] = []
    /// Existing objects changed only through their relationships (B2).
    private var neighbors: [UInt64: Neighbor] = [:]
    /// Objects this batch deletes (B4). A batch delete may add a root given by ID before it
    /// knows the object is stored (Store+BatchDelete BD2): a key that is not stored is as good
    /// as deleted for every check made of this set.
    var deleted: Set<UInt64> = []
    /// Ordered links: the next free position per links tree and source.
    private var nextPositions: [String: [UInt64: UInt64]] = [:]
    /// Whether each target key exists, by key (relationship targets are checked once each).
    private var existing: [UInt64: Bool] = [:]
    /// How many times the batch has been put into the transaction's trees: a cursor kept over a
    /// tree the batch writes to is made again after a flush (a cursor must not outlive a change
    /// to its tree).
    private(set) var flushes = 0
    /// Keys to delete, by tree, applied sorted at `finish` (B6).
    /// A short list, searched by comparing names: a batch deletes from a few trees, whose names
    /// share storage, so a comparison is mostly one check (hashing the name of each key's tree
    /// was a tenth of a batch delete's own work).
    private var doomed: [(tree: String, keys: DeleteKeys)] = []
    /// Ordered lists read by `deleteLink`, by tree and owner: each member's link key (B8).
    private var orderedLinks: [String: [UInt64: [UInt64: [UInt8]]]] = [:]

    /// A neighbour's pending changes: the relationship field IDs that changed, and new to-one
    /// values by slot.
    struct Neighbor {
        var fields: Set<UInt32> = []
        var toOne: [Int: StoredValue] = [:]
    }

    init(model: StoreModel, schemaVersion: UInt32, txn: WriteTransaction) {
        self.model = model
        self.schemaVersion = schemaVersion
        self.txn = txn
    }

    // MARK: - Targets

    /// Whether the object `key` is stored (and not deleted by this batch).
    func exists(_ key: UInt64) throws -> Bool {
        if deleted.contains(key) { return false }
        if let known = existing[key] { return known }
        guard let entity = model.entity(ofKey: key) else { return false }
        let found = try txn.treeExists(entity.recordsTree) && txn.contains(PrimaryKey.bytes(key), in: entity.recordsTree)
        existing[key] = found
        return found
    }

    /// The stored values and row version of the object `key`, by slot; nil when there is none.
    func storedValues(_ key: UInt64, _ entity: EntityInfo) throws -> (values: [StoredValue], rowVersion: UInt64)? {
        guard let bytes = try txn.get(PrimaryKey.bytes(key), in: entity.recordsTree) else { return nil }
        return try entity.values(ofRecord: bytes, key: key)
    }

    /// The inverse of `p` as a property of the object `target`'s entity.
    func inverse(of p: PropertyInfo, on target: UInt64) -> PropertyInfo? {
        guard p.inverseSlot >= 0, let entity = model.entity(ofKey: target), p.inverseSlot < entity.properties.count else { return nil }
        return entity.properties[p.inverseSlot]
    }

    // MARK: - Links

    /// Writes `source`'s own side of a to-many link to `target` (`position` orders an ordered
    /// one: 0, 1, 2 … for a new object's members). A to-one's own side is its record field.
    func putOwnLink(_ source: UInt64, _ p: PropertyInfo, _ target: UInt64, position: Int) {
        guard p.isToMany else { return }
        if p.isOrdered {
            var k = PrimaryKey.bytes(source)
            PrimaryKey.appendBytes(UInt64(position + 1) << 16, to: &k)
            putOrderedLink(source, target, key: k, in: p.linkTree)
        } else {
            batch.putLink(source, p, target, position: position)
        }
    }

    /// `target` gains `source` in `p`'s inverse (the target's side of a new link): a link
    /// in the inverse's tree, or its to-one set to `source` — the target's previous partner
    /// then loses it (B5).
    func addInverse(of p: PropertyInfo, target: UInt64, source: UInt64) throws {
        guard let q = inverse(of: p, on: target) else { return }
        if q.isToMany {
            if q.isOrdered {
                var k = PrimaryKey.bytes(target)
                PrimaryKey.appendBytes(try nextPosition(q.linkTree, target), to: &k)
                putOrderedLink(target, source, key: k, in: q.linkTree)
            } else {
                batch.put([], for: linkKey(target, source), in: q.linkTree)
            }
            touch(target, field: q.fieldID)
            return
        }
        let old = try toOneValue(of: target, q)
        if case .reference(source) = old { return }
        if case .reference(let partner) = old, !deleted.contains(partner) {
            // The previous partner's side of the link goes (B5).
            if p.isToMany {
                try flush()      // the partner's link may be one of this batch's puts
                try deleteLink(partner, p, target)
                touch(partner, field: p.fieldID)
            } else {
                setToOne(of: partner, p, .null)
            }
        }
        setToOne(of: target, q, .reference(source))
    }

    /// `target` loses `source` from `p`'s inverse (the target's side of a removed link).
    func removeInverse(of p: PropertyInfo, target: UInt64, source: UInt64) throws {
        guard !deleted.contains(target), let q = inverse(of: p, on: target) else { return }
        if q.isToMany {
            try deleteLink(target, q, source)
            touch(target, field: q.fieldID)
        } else if case .reference(source) = try toOneValue(of: target, q) {
            setToOne(of: target, q, .null)
        }
    }

    /// Deletes `key` from `tree` when the batch finishes (B6).
    func deleteLater(_ key: [UInt8], in tree: String) {
        doomedKeys(of: tree) { $0.append(key) }
    }

    /// Deletes `key` (bytes in place, copied) from `tree` when the batch finishes (B6).
    func deleteLater(_ key: UnsafeRawBufferPointer, in tree: String) {
        doomedKeys(of: tree) { $0.append(key) }
    }

    /// Deletes the link `source` → `target` (an unordered link's key) from `tree` when the batch
    /// finishes (B6), with no array made for its key.
    func deleteLinkLater(_ source: UInt64, _ target: UInt64, in tree: String) {
        doomedKeys(of: tree) { $0.append(keyOf: source, target) }
    }

    @inline(__always) private func doomedKeys(of tree: String, _ add: (inout DeleteKeys) -> Void) {
        if let i = doomed.firstIndex(where: { $0.tree == tree }) {
            add(&doomed[i].keys)
        } else {
            var keys = DeleteKeys()
            add(&keys)
            doomed.append((tree, keys))
        }
    }

    /// Deletes every link whose source is `key` from the links tree `tree`, when the batch
    /// finishes (B6).
    func deleteLinksLater(of key: UInt64, in tree: String) throws {
        orderedLinks[tree]?[key] = nil      // the whole list goes (B8)
        let prefix = PrimaryKey.bytes(key)
        var cursor = try txn.cursor(in: tree)
        var entry = try cursor.seek(to: prefix)
        while let (k, _) = entry, k.starts(with: prefix) {
            deleteLater(k, in: tree)
            entry = try cursor.next()
        }
    }

    /// Deletes the link `source` → `target` from `p`'s links tree (an ordered link is found
    /// by its target among the source's, B8).
    func deleteLink(_ source: UInt64, _ p: PropertyInfo, _ target: UInt64) throws {
        if !p.isOrdered {
            deleteLinkLater(source, target, in: p.linkTree)
            return
        }
        if orderedLinks[p.linkTree]?[source] == nil {
            try flush()      // the list as this batch has left it so far
            var members: [UInt64: [UInt8]] = [:]
            let prefix = PrimaryKey.bytes(source)
            var cursor = try txn.cursor(in: p.linkTree)
            var entry = try cursor.seek(to: prefix)
            while let (k, v) = entry, k.starts(with: prefix) {
                if let member = PrimaryKey.read(v), members[member] == nil { members[member] = k }
                entry = try cursor.next()
            }
            orderedLinks[p.linkTree, default: [:]][source] = members
        }
        if let doomed = orderedLinks[p.linkTree]?[source]?.removeValue(forKey: target) { deleteLater(doomed, in: p.linkTree) }
    }

    /// Puts an ordered link `source` → `target` under `key`, keeping B8's lists in step.
    private func putOrderedLink(_ source: UInt64, _ target: UInt64, key: [UInt8], in tree: String) {
        batch.put(PrimaryKey.bytes(target), for: key, in: tree)
        if orderedLinks[tree]?[source] != nil, orderedLinks[tree]?[source]?[target] == nil { orderedLinks[tree]?[source]?[target] = key }
    }

    /// The position after the last of `source`'s ordered links in `tree`.
    private func nextPosition(_ tree: String, _ source: UInt64) throws -> UInt64 {
        if let next = nextPositions[tree]?[source] {
            nextPositions[tree]?[source] = next + (1 << 16)
            return next
        }
        var last: UInt64 = 0
        let prefix = PrimaryKey.bytes(source)
        var cursor = try txn.cursor(in: tree)
        var entry = try cursor.seek(to: prefix)
        while let (k, _) = entry, k.starts(with: prefix) {
            last = PrimaryKey.read(k, at: 8) ?? last
            entry = try cursor.next()
        }
        let next = ((last >> 16) + 1) << 16
        nextPositions[tree, default: [:]][source] = next + (1 << 16)
        return next
    }

    // MARK: - Neighbours

    /// Notes that `key`'s relationship `field` changed (B2).
    func touch(_ key: UInt64, field: UInt32) {
        neighbors[key, default: Neighbor()].fields.insert(field)
    }

    /// Gives `key`'s to-one `p` the value `value`, written when the batch finishes (B2).
    func setToOne(of key: UInt64, _ p: PropertyInfo, _ value: StoredValue) {
        neighbors[key, default: Neighbor()].toOne[p.slot] = value
        neighbors[key, default: Neighbor()].fields.insert(p.fieldID)
    }

    /// A to-one's value as this batch has left it so far.
    func toOneValue(of key: UInt64, _ p: PropertyInfo) throws -> StoredValue {
        if let pending = neighbors[key]?.toOne[p.slot] { return pending }
        guard let entity = model.entity(ofKey: key), let (values, _) = try storedValues(key, entity), p.slot < values.count else { return .null }
        return values[p.slot]
    }

    // MARK: - Finishing

    /// Puts what the batch holds so far (after checking its unique entries), so that the
    /// transaction's reads see it.
    func flush() throws {
        flushes += 1
        for (tree, keys) in doomed.sorted(by: { $0.tree < $1.tree }) { try txn.delete(keys, in: tree) }
        doomed = []
        if let clash = try batch.uniqueClashes(txn).first { throw clash.error }
        try batch.apply(txn)
        batch = WriteBatch()
    }

    /// Applies the request's puts, then rewrites the neighbours (B2–B4); returns what the batch
    /// records in history, in primary-key order.
    func finish(author: String?, contextName: String?) throws -> RecordedTransaction {
        try flush()
        changes.sort { $0.key < $1.key }
        var extra: [RecordedChange] = []
        var second = WriteBatch()
        var orphans: [DocStoreError.Problem] = []
        for key in neighbors.keys.sorted() where !deleted.contains(key) {
            guard let n = neighbors[key], let entity = model.entity(ofKey: key),
                  let (old, version) = try storedValues(key, entity) else { continue }
            var values = old
            for (slot, value) in n.toOne where slot < values.count { values[slot] = value }
            for (slot, value) in n.toOne.sorted(by: { $0.key < $1.key }) where value.isNull && slot < entity.properties.count {
                if case .toOne(let r) = entity.properties[slot].kind, !r.isOptional, !old[slot].isNull {
                    orphans.append(.init(entity: "\(entity.name)/\(key & PrimaryKey.sequenceMask)", property: entity.properties[slot].name,
                                         "is required, and the batch leaves it with no object (B7)"))
                }
            }
            let changedSlots = Set(n.toOne.keys.filter { $0 < values.count && old[$0] != values[$0] })
            if !changedSlots.isEmpty {
                try IndexEntries.remove(key: key, entity, values: old, txn, affected: { $0.intersects(changedSlots) })
                IndexEntries.add(key: key, entity, values: values, to: &second, affected: { $0.intersects(changedSlots) })
            }
            second.putRecord(values, of: entity, key: key, rowVersion: version + 1, schemaVersion: schemaVersion)
            let fields = n.fields.sorted()
            if let i = Self.index(of: key, in: changes) {
                guard changes[i].kind == .update else { continue }     // an insert says it all
                changes[i].fields = Array(Set(changes[i].fields).union(fields)).sorted()
            } else {
                extra.append(RecordedChange(kind: .update, key: key, fields: fields))
            }
        }
        if !orphans.isEmpty {
            throw DocStoreError(.validation, "refused: \(orphans.count) object\(orphans.count == 1 ? " would lose the object" : "s would lose the objects") of a required to-one relationship; nothing was changed",
                                entity: orphans[0].entity, property: orphans[0].property, problems: Array(orphans.prefix(100)))
        }
        if let clash = try second.uniqueClashes(txn).first { throw clash.error }
        try second.apply(txn)
        if !extra.isEmpty {
            changes += extra
            changes.sort { $0.key < $1.key }
        }
        return RecordedTransaction(timestamp: Date(), author: author, contextName: contextName, changes: changes)
    }

    /// The keys whose cached rows the commit makes stale: every object rewritten or deleted.
    var staleKeys: [UInt64] {
        changes.compactMap { $0.kind == .insert ? nil : $0.key }
    }

    /// The position of `key`'s change in `changes` (sorted by key), if any.
    private static func index(of key: UInt64, in changes: [RecordedChange]) -> Int? {
        var lo = 0, hi = changes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if changes[mid].key < key { lo = mid + 1 } else { hi = mid }
        }
        return lo < changes.count && changes[lo].key == key ? lo : nil
    }
}

extension Store {
    /// Runs a batch operation's `body` in one write transaction (B1): its history is appended
    /// and announced as a save's is, and the row cache forgets what it rewrote or deleted.
    /// `body` returns the request's own objects' keys.
    func runBatch(author: String?, contextName: String?, origin: UInt64, resultType: BatchResultType,
                  _ body: (BatchWriter) throws -> [UInt64]) throws(DocStoreError) -> BatchResult {
        final class Outcome {
            var recorded: RecordedTransaction?
            var stale: [UInt64] = []
        }
        let outcome = Outcome()
        let model = self.model
        let storeID = identifier
        let (keys, token): ([UInt64], HistoryToken?) = try write(onCommit: { [self] lsn in
            guard let recorded = outcome.recorded else { return }
            rows.invalidate(outcome.stale)
            historyTreeCommitted()
            changeHub.publish(recorded, lsn: lsn.rawValue, origin: origin, model: model, storeID: storeID)
        }) { txn in
            let writer = BatchWriter(model: model, schemaVersion: catalog.schemaVersion, txn: txn)
            let keys = try body(writer)
            let recorded = try writer.finish(author: author, contextName: contextName)
            guard !recorded.changes.isEmpty else {
                txn.rollback()
                return (keys, nil)
            }
            try appendHistory(recorded, txn)
            outcome.recorded = recorded
            outcome.stale = writer.staleKeys
            return (keys, HistoryToken(txn.commitLSN.rawValue))
        }
        let ids: [ObjectID] = resultType == .objectIDs ? keys.sorted().compactMap { key in
            model.entity(ofKey: key).map { ObjectID(store: storeID, entity: $0.name, key: key) }
        } : []
        return BatchResult(count: keys.count, objectIDs: ids, token: token, recorded: token == nil ? nil : outcome.recorded,
                           model: model, storeID: storeID)
    }
}
