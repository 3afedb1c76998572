// Store+BatchDelete: running a BatchDeleteRequest — the chosen objects and everything their
// cascade rules reach, deleted in one write transaction with every delete rule applied through
// the links, without managed objects (BatchWriter B1–B5).
//
//   BD1 the objects are chosen inside the write transaction (by predicate with the fetch
//       planner, or by ID; IDs of objects that are gone are passed over).
//   BD2 the set to delete is closed over cascade rules first (a worklist, so cycles and long
//       chains end), reading each object's record and links once.
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
        readMap = entity.slotForField(reading: entity.slotsReadOnDeletion)
    }
}

/// Deletes a set of objects with their delete rules (BD2–BD5).
struct BatchDeleter {
    let store: Store
    let writer: BatchWriter
    var model: StoreModel { store.model }

    /// Deletes `roots` and what cascades from them; returns the roots that existed.
    func delete(_ roots: [UInt64]) throws -> [UInt64] {
        // BD2: the closure over cascade rules, each object's record read once.
        var records: [UInt64: [UInt8]] = [:]
        var present: [UInt64] = []
        var work: [UInt64] = []
        // The roots' records through one cursor (they come in key order: no descent from the root
        // each); nothing is written before BD4.
        var lookup = RecordLookup(writer.txn)
        for key in roots where records[key] == nil {
            guard let entity = model.entity(ofKey: key), let bytes = try lookup.withRecord(key, entity, { Array($0) }) else { continue }
            records[key] = bytes
            present.append(key)
            work.append(key)
        }
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
        func neededValues(_ key: UInt64, _ entity: EntityInfo, _ bytes: [UInt8]) throws -> [StoredValue] {
            var values = entity.defaults
            _ = try RecordCoding.decode(bytes, key: key, into: &values, slotForField: plan(entity).readMap, partial: true)
            return values
        }
        while let key = work.popLast() {
            guard let entity = model.entity(ofKey: key), let bytes = records[key], plan(entity).cascades else { continue }
            let values = try neededValues(key, entity, bytes)
            for (p, rule) in plan(entity).relationships where rule == .cascade {
                for target in try targets(of: key, p, values) where records[target] == nil {
                    guard let targetEntity = model.entity(ofKey: target),
                          let targetBytes = try writer.txn.get(PrimaryKey.bytes(target), in: targetEntity.recordsTree) else { continue }
                    records[target] = targetBytes
                    work.append(target)
                }
            }
        }
        writer.deleted = Set(records.keys)
        let doomed = records.keys.sorted()

        // BD3: deny rules against the whole set.
        var denied: [DocStoreError.Problem] = []
        for key in doomed {
            guard let entity = model.entity(ofKey: key), let bytes = records[key], plan(entity).denies else { continue }
            let values = try neededValues(key, entity, bytes)
            for (p, rule) in plan(entity).relationships where rule == .deny {
                for target in try targets(of: key, p, values) where !writer.deleted.contains(target) {
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

        // BD4, BD5: records, index entries, links and the other side of nullified links.
        for key in doomed {
            guard let entity = model.entity(ofKey: key), let bytes = records[key] else { continue }
            let values = try neededValues(key, entity, bytes)
            try IndexEntries.remove(key: key, entity, values: values, writer.txn, deleter: writer.deleteLater)
            writer.deleteLater(PrimaryKey.bytes(key), in: entity.recordsTree)
            for (p, rule) in plan(entity).relationships {
                // A to-many's links are read once: their keys go, and their targets are nullified.
                var linkKeys: [[UInt8]] = []
                let targets = try targets(of: key, p, values, linkKeys: &linkKeys)
                if rule == .nullify {
                    for target in targets where !writer.deleted.contains(target) {
                        try writer.removeInverse(of: p, target: target, source: key)
                    }
                }
                for k in linkKeys { writer.deleteLater(k, in: p.linkTree) }
            }
            var change = RecordedChange(kind: .delete, key: key)
            for slot in entity.recordSlots where slot < values.count && !values[slot].isNull {
                let p = entity.properties[slot]
                if p.attribute?.preservesValueOnDeletion == true { change.tombstone.append((p.fieldID, values[slot])) }
            }
            writer.changes.append(change)
        }
        return present
    }

    /// The objects `key`'s relationship `p` reaches: its to-one field, or its links (whose
    /// keys are appended to `linkKeys`).
    private func targets(of key: UInt64, _ p: PropertyInfo, _ values: [StoredValue]) throws -> [UInt64] {
        var ignored: [[UInt8]] = []
        return try targets(of: key, p, values, linkKeys: &ignored)
    }

    private func targets(of key: UInt64, _ p: PropertyInfo, _ values: [StoredValue], linkKeys: inout [[UInt8]]) throws -> [UInt64] {
        if p.isToOne {
            guard p.slot < values.count, case .reference(let target) = values[p.slot] else { return [] }
            return [target]
        }
        let prefix = PrimaryKey.bytes(key)
        var out: [UInt64] = []
        var cursor = try writer.txn.cursor(in: p.linkTree)
        var entry = try cursor.seek(to: prefix)
        while let (k, v) = entry, k.starts(with: prefix) {
            linkKeys.append(k)
            if k.count == 16, let target = p.isOrdered ? PrimaryKey.read(v) : PrimaryKey.read(k, at: 8) { out.append(target) }
            entry = try cursor.next()
        }
        return out
    }
}
