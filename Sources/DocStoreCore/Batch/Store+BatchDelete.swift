// Store+BatchDelete: running a BatchDeleteRequest — the chosen objects and everything their
// cascade rules reach, deleted in one write transaction with every delete rule applied through
// the links, without managed objects (BatchWriter B1–B5).
//
//   BD1 the objects are chosen inside the write transaction (by predicate with the fetch
//       planner, or by ID; IDs of objects that are gone are passed over).
//   BD2 the set to delete is closed over cascade rules first (a worklist, so cycles and long
//       chains end), reading the record and links of each object whose entity has cascade or
//       deny rules once; any other object's record is read once, at BD4.
//   BD3 then deny rules are checked against the whole set: a deny relationship that reaches an
//       object outside it refuses the batch with `deleteDenied`, naming each such object (the
//       first 100), and nothing is written.
//   BD4 each deleted object's record, index entries and own links go; a nullify rule removes it
//       from its related objects' side (their link, or their to-one set to nil, with their next
//       row version: B2); noAction leaves their side pointing at it, as a context's delete does.
//   BD5 history records a delete per object, with its `.preserveValueOnDeletion` values.

import Foundation
internal import DocStoreEngine

extension Store {
    /// Deletes the request's objects, applying delete rules, in one transaction recorded in
    /// history.
    ///
    /// - Throws: ``DocStoreError/Code/unknownProperty`` for an unknown entity;
    ///   ``DocStoreError/Code/invalidQuery`` for a predicate that does not fit the schema;
    ///   ``DocStoreError/Code/deleteDenied`` when a deny rule holds (its
    ///   ``DocStoreError/problems`` name the objects); ``DocStoreError/Code/storage``.
    ///   Nothing is written when it throws.
    public func execute(_ request: BatchDeleteRequest, transactionAuthor: String? = nil) throws(DocStoreError) -> BatchResult {
        try executeDelete(request, author: transactionAuthor, contextName: nil, origin: 0)
    }

    func executeDelete(_ request: BatchDeleteRequest, author: String?, contextName: String?, origin: UInt64) throws(DocStoreError) -> BatchResult {
        if let name = request.entityName, model.entity(named: name) == nil {
            throw DocStoreError(.unknownProperty, "the schema has no entity \"\(name)\"", entity: name)
        }
        if request.entityName == nil && request.objectIDs == nil {
            throw DocStoreError(.unknownProperty, "a batch delete names an entity or object IDs")
        }
        let context = Context(store: self)
        return try runBatch(author: author, contextName: contextName, origin: origin, resultType: request.resultType) { writer in
            context.batchTransaction = writer.txn
            defer { context.batchTransaction = nil }
            var roots: [UInt64] = []
            if let ids = request.objectIDs {
                for id in ids where id.storeIdentifier == identifier && model.entity(ofKey: id.primaryKey) != nil {
                    roots.append(id.primaryKey)
                }
            }
            if let name = request.entityName {
                var fetch = FetchRequest<ManagedObject>(entityName: name, predicate: request.predicate)
                fetch.includesPendingChanges = false
                fetch.includesSubentities = request.includesSubentities
                roots += try context.fetchKeys(fetch)
            }
            return try BatchDeleter(store: self, writer: writer).delete(roots)
        }
    }
}

/// What deleting an object of one entity walks: its relationships with their delete rules, and
/// the record fields that needs.
private struct DeletionPlan {
    let relationships: [(property: PropertyInfo, rule: DeleteRule)]
    let cascades: Bool
    let denies: Bool
    let readMap: [Int]

    init(_ entity: EntityInfo) {
        relationships = entity.properties.compactMap { p in p.relationship.map { (p, $0.deleteRule) } }
        cascades = relationships.contains { $0.rule == .cascade }
        denies = relationships.contains { $0.rule == .deny }
        readMap = entity.slotForFieldOnDeletion
    }
}

/// Deletes a set of objects with their delete rules (BD2–BD5).
struct BatchDeleter {
    let store: Store
    let writer: BatchWriter
    var model: StoreModel { store.model }

    /// Deletes `roots` and what cascades from them; returns the roots that existed.
    func delete(_ roots: [UInt64]) throws -> [UInt64] {
        // Per entity, made once: its relationships with their delete rules and the fields a
        // deletion decodes (each object's were looked up through its properties, per object).
        var plans: [UInt32: DeletionPlan] = [:]
        func plan(_ entity: EntityInfo) -> DeletionPlan {
            if let known = plans[entity.id] { return known }
            let made = DeletionPlan(entity)
            plans[entity.id] = made
            return made
        }
        /// The values of the deleted object `key` that deleting it needs (a partial decode).
        func neededValues(_ key: UInt64, _ entity: EntityInfo, _ bytes: UnsafeRawBufferPointer) throws -> [StoredValue] {
            var values = entity.defaults
            _ = try RecordCoding.decode(bytes, key: key, into: &values, slotForField: plan(entity).readMap, partial: true)
            return values
        }
        func neededValues(_ key: UInt64, _ entity: EntityInfo, _ bytes: [UInt8]) throws -> [StoredValue] {
            try bytes.withUnsafeBytes { try neededValues(key, entity, $0) }
        }

        // BD2: the set to delete (`writer.deleted`), closed over cascade rules. An object whose
        // entity has cascade or deny rules keeps a copy of its record, read again by BD2 and
        // BD3; any other's record is read only at BD4, in place (a batch of 500 000 notes copied
        // each into a dictionary, and read each twice). A root of such an entity goes into the
        // set unread: at BD4 one that is not stored is passed over, and left out of the result.
        // (A key in the set that is not stored is as good as deleted for every later check.)
        var kept: [UInt64: [UInt8]] = [:]
        var present: [UInt64] = []
        var reached: [UInt64] = []
        var work: [UInt64] = []
        // The roots' records through one cursor (fetched roots come in key order: then no descent
        // from the root each); nothing is written before BD4.
        var lookup = RecordLookup(writer.txn)
        writer.deleted.reserveCapacity(roots.count)
        for key in roots where !writer.deleted.contains(key) {
            guard let entity = model.entity(ofKey: key) else { continue }
            if plan(entity).cascades || plan(entity).denies {
                guard let bytes = try lookup.withRecord(key, entity, { Array($0) }) else { continue }
                kept[key] = bytes
                work.append(key)
            }
            writer.deleted.insert(key)
            present.append(key)
        }
        var links = LinkReader(writer: writer)
        while let key = work.popLast() {
            guard let entity = model.entity(ofKey: key), let bytes = kept[key], plan(entity).cascades else { continue }
            let values = try neededValues(key, entity, bytes)
            for (p, rule) in plan(entity).relationships where rule == .cascade {
                for target in try links.targets(of: key, p, values) where !writer.deleted.contains(target) {
                    guard let targetEntity = model.entity(ofKey: target) else { continue }
                    // Only a target that is kept is copied; any other is only checked for.
                    let targetKey = PrimaryKey.bytes(target)
                    if plan(targetEntity).cascades || plan(targetEntity).denies {
                        guard let targetBytes = try writer.txn.get(targetKey, in: targetEntity.recordsTree) else { continue }
                        kept[target] = targetBytes
                        work.append(target)
                    } else {
                        guard try writer.txn.contains(targetKey, in: targetEntity.recordsTree) else { continue }
                    }
                    writer.deleted.insert(target)
                    reached.append(target)
                }
            }
        }
        // (Sorting roots that are in key order already is a pass over them.)
        let doomed = reached.isEmpty ? present.sorted() : (present + reached).sorted()

        // BD3: deny rules against the whole set.
        var denied: [DocStoreError.Problem] = []
        for key in doomed {
            guard let entity = model.entity(ofKey: key), plan(entity).denies, let bytes = kept[key] else { continue }
            let values = try neededValues(key, entity, bytes)
            for (p, rule) in plan(entity).relationships where rule == .deny {
                for target in try links.targets(of: key, p, values) where !writer.deleted.contains(target) {
                    if try writer.exists(target), denied.count < 100 {
                        denied.append(.init(entity: "\(entity.name)/\(key & PrimaryKey.sequenceMask)", property: p.name,
                                            "cannot be deleted while \(p.name) still reaches \(model.entity(ofKey: target)?.name ?? "?")/\(target & PrimaryKey.sequenceMask) (delete rule deny)"))
                    }
                }
            }
        }
        if !denied.isEmpty {
            throw DocStoreError(.deleteDenied, "batch delete refused: \(denied[0].entity).\(denied[0].property ?? "") still reaches an object that is not being deleted (delete rule deny); nothing was deleted",
                                entity: denied[0].entity, property: denied[0].property, problems: denied)
        }

        // BD4, BD5: records, index entries, links and the other side of nullified links. Records
        // not kept are read in key order through one cursor, made again after a flush of the
        // batch (a nullify may flush it; what it deletes is only what was handled already).
        var reader = RecordLookup(writer.txn)
        var flushes = writer.flushes
        var missing = Set<UInt64>()
        for key in doomed {
            guard let entity = model.entity(ofKey: key) else { continue }
            let values: [StoredValue]
            if let bytes = kept[key] {
                values = try neededValues(key, entity, bytes)
            } else {
                if flushes != writer.flushes {
                    reader = RecordLookup(writer.txn)
                    flushes = writer.flushes
                }
                guard let read = try reader.withRecord(key, entity, { try neededValues(key, entity, $0) }) else {
                    missing.insert(key)     // a root given by ID that is not stored
                    continue
                }
                values = read
            }
            try IndexEntries.remove(key: key, entity, values: values, writer.txn, deleter: writer.deleteLater)
            writer.deleteLater(PrimaryKey.bytes(key), in: entity.recordsTree)
            for (p, rule) in plan(entity).relationships {
                // A to-one's target is its field; a to-many's links are read once: their keys
                // go, and their targets are nullified.
                if p.isToOne {
                    guard rule == .nullify, p.slot < values.count, case .reference(let target) = values[p.slot],
                          !writer.deleted.contains(target) else { continue }
                    try writer.removeInverse(of: p, target: target, source: key)
                    continue
                }
                var targets: [UInt64] = []
                try links.forEachLink(of: key, p) { link, target in
                    writer.deleteLater(link, in: p.linkTree)
                    if rule == .nullify, let target, !writer.deleted.contains(target) { targets.append(target) }
                }
                // (After the walk: a nullify may flush the batch, which ends the walk's cursor.)
                for target in targets { try writer.removeInverse(of: p, target: target, source: key) }
            }
            var change = RecordedChange(kind: .delete, key: key)
            for slot in entity.recordSlots where slot < values.count && !values[slot].isNull {
                let p = entity.properties[slot]
                if p.attribute?.preservesValueOnDeletion == true { change.tombstone.append((p.fieldID, values[slot])) }
            }
            writer.changes.append(change)
        }
        return missing.isEmpty ? present : present.filter { !missing.contains($0) }
    }

}

/// Reads deleted objects' links: one cursor per links tree, kept from one object to the next
/// (at BD4 they come in key order, so each read is a search in the leaf the last one ended on,
/// or a short descent; an object before the cursor's leaf costs a descent from the root), made
/// again after the batch is flushed (a cursor must not outlive a change to its tree).
private struct LinkReader {
    let writer: BatchWriter
    /// A short list, searched by comparing names (as BatchWriter's `doomed`).
    private var cursors: [(tree: String, cursor: Cursor)] = []
    private var flushes = 0
    /// The source's key, rewritten in place for each read.
    private var prefix = [UInt8](repeating: 0, count: 8)

    init(writer: BatchWriter) {
        self.writer = writer
        flushes = writer.flushes
    }

    /// The objects `key`'s relationship `p` reaches: its to-one field, or its links' targets.
    mutating func targets(of key: UInt64, _ p: PropertyInfo, _ values: [StoredValue]) throws -> [UInt64] {
        if p.isToOne {
            guard p.slot < values.count, case .reference(let target) = values[p.slot] else { return [] }
            return [target]
        }
        var out: [UInt64] = []
        try forEachLink(of: key, p) { _, target in if let target { out.append(target) } }
        return out
    }

    /// Calls `body` with each link of `key` in the to-many `p`'s links tree: its key in place
    /// and its target (nil for a key that is not a link's 16 bytes).
    mutating func forEachLink(of key: UInt64, _ p: PropertyInfo, _ body: (UnsafeRawBufferPointer, UInt64?) throws -> Void) throws {
        if flushes != writer.flushes {
            cursors = []
            flushes = writer.flushes
        }
        let i: Int
        if let known = cursors.firstIndex(where: { $0.tree == p.linkTree }) {
            i = known
        } else {
            cursors.append((p.linkTree, try writer.txn.cursor(in: p.linkTree)))
            i = cursors.count - 1
        }
        prefix.withUnsafeMutableBytes { $0.storeBytes(of: key.bigEndian, as: UInt64.self) }
        guard try cursors[i].cursor.move(forwardTo: prefix) else { return }
        let ordered = p.isOrdered
        while try cursors[i].cursor.withCurrent({ k, v in
            guard PrimaryKey.read(k) == key else { return false }
            let target = k.count != 16 ? nil : ordered ? PrimaryKey.read(v) : PrimaryKey.read(UnsafeRawBufferPointer(rebasing: k[8...]))
            try body(k, target)
            return true
        }) == true {
            guard try cursors[i].cursor.advance() else { return }
        }
    }
}
