// MigrationCopier: a migration that rewrites the objects (MigrationPlanner MP4) — every record
// of the old store read from one snapshot, turned into the new version's record (IDs and keys
// kept, so object IDs and URIs survive), run through the custom stage's handlers, validated,
// and written to a new store file in transactions of `chunk` objects, so memory stays bounded
// whatever the store's size. The new file replaces the old one only when complete
// (MigrationSwap); until then the old store is untouched.
//
//   MC1 a value moves by field ID: a renamed property keeps it; a removed one drops it; a new
//       one gets its default. A changed type converts numbers exactly (Context's widening) and
//       fails, naming the object, where it cannot — unless a custom handler sets the value.
//   MC2 to-one ↔ to-many: a to-one's target becomes the only link; a to-many with one link
//       becomes a to-one, with none a nil, with more a failure naming the object. Links of a
//       to-many kept as such are copied (re-keyed when it becomes ordered or unordered); links
//       to or from objects of removed entities are dropped.
//   MC3 a custom handler's to-one change whose inverse is to-many moves the inverse link as
//       the record is written; objects it inserts are written with the object being migrated.
//       Its other relationship changes — a to-many set, a one-to-one — are edits (MigrationEdits
//       ME1–ME4), applied to the complete new graph after the links pass, both sides at once.
//   MC4 every written object is validated as a save would (required values, types, ranges,
//       counts of to-one); unique entries are checked as a save checks them. The first 100
//       problems are reported and nothing replaces the store.

import Foundation
internal import DocStoreEngine

struct MigrationCopier {
    let old: Engine
    let oldCatalog: Catalog
    let oldModel: StoreModel
    let new: Engine
    let newCatalog: Catalog
    let newModel: StoreModel
    let storeID: UUID
    let custom: CustomMigration?
    /// Objects written so far (progress).
    let progress: (Int) -> Void
    var chunk = 2000

    /// Copies everything; throws the problems found (MC4).
    func run() throws {
        let snapshot = try old.beginRead()
        defer { snapshot.close() }
        // The new store's catalog, trees and key sequences.
        try new.write { txn in
            try txn.createTree(named: Catalog.tree)
            try txn.put(try newCatalog.encoded(), for: Catalog.catalogKey, in: Catalog.tree)
            for tree in newModel.treeNames { try txn.createTreeIfMissing(tree) }
            if custom != nil { try txn.createTreeIfMissing(Self.editsTree) }
            if try snapshot.treeExists(Catalog.tree) {
                var cursor = try snapshot.cursor(in: Catalog.tree)
                var entry = try cursor.seek(to: Array("seq.".utf8))
                while let (k, v) = entry, k.starts(with: Array("seq.".utf8)) {
                    try txn.put(v, for: k, in: Catalog.tree)
                    entry = try cursor.next()
                }
            }
        }
        var state = CopyState()
        var problems: [DocStoreError.Problem] = []
        for oldEntity in oldModel.entities where !oldEntity.description.isAbstract {
            guard let newEntity = newModel.entity(id: oldEntity.id), !newEntity.description.isAbstract else { continue }
            var start = PrimaryKey.make(entity: oldEntity.id, sequence: 0)
            guard try snapshot.treeExists(oldEntity.recordsTree) else { continue }
            while true {
                // One chunk: read `chunk` records, then write them in one transaction.
                var rows: [(UInt64, [UInt8])] = []
                var cursor = try snapshot.cursor(in: oldEntity.recordsTree)
                var entry = try cursor.seek(to: PrimaryKey.bytes(start))
                // The entity's keys end where their entity ID changes (the next ID's first key
                // does not fit in 64 bits after the largest ID, 0xFFFF).
                while let (k, v) = entry, let key = PrimaryKey.read(k), PrimaryKey.entity(of: key) == oldEntity.id, rows.count < chunk {
                    rows.append((key, v))
                    entry = try cursor.next()
                }
                guard let last = rows.last?.0 else { break }
                start = last &+ 1
                try new.write { txn in
                    var batch = WriteBatch()
                    for (key, bytes) in rows {
                        try copyObject(key, bytes, oldEntity, newEntity, snapshot, txn, &batch, &state, &problems)
                    }
                    if problems.isEmpty, let clash = try batch.uniqueClashes(txn).first {
                        problems.append(.init(entity: newEntity.name, clash.error.message))
                    }
                    guard problems.isEmpty else { txn.rollback(); return }
                    try batch.apply(txn)
                }
                state.written += rows.count
                progress(state.written)
                if !problems.isEmpty { throw Self.failure(problems) }
                if last == .max { break }   // the last key there can be: `start` wrapped
            }
        }
        try copyLinks(snapshot, state)
        try applyEdits(state)
        try copyHistory(snapshot)
    }

    static func failure(_ problems: [DocStoreError.Problem]) -> DocStoreError {
        DocStoreError(.validation, "the migration was refused: \(problems.count) problem\(problems.count == 1 ? "" : "s") with the objects as the new version would have them; the store was not changed",
                      entity: problems.first?.entity, property: problems.first?.property, problems: Array(problems.prefix(100)))
    }

    /// What the record pass leaves for the links pass.
    struct CopyState {
        var written = 0
        /// Inverse links a handler's to-one change removed: (tree, source, target) not to copy.
        var droppedLinks = Set<LinkRef>()
        /// Relationship edits recorded for the edits pass (ME1).
        var edits: UInt64 = 0
    }

    struct LinkRef: Hashable {
        let tree: String
        let source: UInt64
        let target: UInt64
    }

    private func copyObject(_ key: UInt64, _ bytes: [UInt8], _ oldEntity: EntityInfo, _ newEntity: EntityInfo,
                            _ snapshot: ReadTransaction, _ txn: WriteTransaction, _ batch: inout WriteBatch,
                            _ state: inout CopyState, _ problems: inout [DocStoreError.Problem]) throws {
        let (oldValues, rowVersion) = try oldEntity.values(ofRecord: bytes, key: key)
        let name = "\(newEntity.name)/\(key & PrimaryKey.sequenceMask)"
        var values = newEntity.defaults
        var unconverted = Set<Int>()
        var newLinks: [(source: UInt64, PropertyInfo, [UInt64])] = []
        for p in newEntity.properties {
            let oldSlot = Int(p.fieldID) < oldEntity.slotForField.count ? oldEntity.slotForField[Int(p.fieldID)] : -1
            guard oldSlot >= 0 else { continue }
            let q = oldEntity.properties[oldSlot]
            switch (p.kind, q.kind) {
            case (.attribute(let a), .attribute):
                let v = oldValues[oldSlot]
                if v.isNull { continue }
                if let fitted = v.widened(to: a.type) { values[p.slot] = fitted } else { unconverted.insert(p.slot) }
            case (.toOne, .toOne):
                if case .reference(let target) = oldValues[oldSlot], newModel.entity(ofKey: target) != nil { values[p.slot] = oldValues[oldSlot] }
            case (.toOne, .toMany):
                let targets = try links(of: key, q, snapshot).filter { newModel.entity(ofKey: $0) != nil }
                if targets.count > 1 {
                    problems.append(.init(entity: name, property: p.name, "has \(targets.count) objects in \(q.name), which becomes to-one"))
                } else if let target = targets.first {
                    values[p.slot] = .reference(target)
                }
            case (.toMany, .toOne):
                if case .reference(let target) = oldValues[oldSlot], newModel.entity(ofKey: target) != nil { newLinks.append((key, p, [target])) }
            default:
                break       // to-many kept to-many: the links pass copies them
            }
        }

        let newObject = MigrationObject(entity: newEntity, key: key, storeID: storeID, model: newModel, values: values, isReadOnly: false)
        var inserted: [MigrationObject] = []
        if let custom {
            let oldObject = MigrationObject(entity: oldEntity, key: key, storeID: storeID, model: oldModel, values: oldValues, isReadOnly: true)
            // CM4: to-manys read as the old links, and the new object's as those carried over.
            oldObject.linkLoader = { q in try links(of: key, q, snapshot) }
            newObject.linkLoader = { [newModel] p in
                let oldSlot = Int(p.fieldID) < oldEntity.slotForField.count ? oldEntity.slotForField[Int(p.fieldID)] : -1
                guard oldSlot >= 0 else { return [] }
                let q = oldEntity.properties[oldSlot]
                if q.isToMany { return try links(of: key, q, snapshot).filter { newModel.entity(ofKey: $0) != nil } }
                if case .reference(let target) = oldValues[oldSlot], newModel.entity(ofKey: target) != nil { return [target] }
                return []
            }
            custom.inserter = { entityName in
                guard let entity = newModel.entity(named: entityName), !entity.description.isAbstract else {
                    throw DocStoreError(.unknownProperty, "the new version has no concrete entity \"\(entityName)\"", entity: entityName)
                }
                let key = try nextKey(entity, txn)
                let object = MigrationObject(entity: entity, key: key, storeID: storeID, model: newModel, values: entity.defaults, isReadOnly: false)
                inserted.append(object)
                return object
            }
            defer { custom.inserter = nil }
            for handler in custom.handlers where newModel.entity(named: handler.entity)?.kindIDs.contains(newEntity.id) == true {
                try handler.body(oldObject, newObject)
            }
            problems += oldObject.problems
        }
        for slot in unconverted where newObject.values[slot] == values[slot] {
            let p = newEntity.properties[slot]
            let oldSlot = oldEntity.slotForField[Int(p.fieldID)]
            problems.append(.init(entity: name, property: p.name, "its value \(oldValues[oldSlot]) does not convert to \(p.attribute?.type.description ?? "?")"))
        }
        for object in [newObject] + inserted {
            problems += object.problems
            let objectName = "\(object.entity.name)/\(object.key & PrimaryKey.sequenceMask)"
            for p in object.entity.properties {
                if let rules = p.rules, let message = Context.check(object.values, p.slot, against: rules) {
                    problems.append(.init(entity: objectName, property: p.name, message))
                } else if p.requiresTarget, object.values[p.slot].isNull {
                    problems.append(.init(entity: objectName, property: p.name, Context.missingTarget))
                }
            }
            for (slot, targets) in object.toMany.sorted(by: { $0.key < $1.key }) {
                let p = object.entity.properties[slot]
                if let bounds = p.countBounds, let message = Context.check(count: targets.count, against: bounds) {
                    problems.append(.init(entity: objectName, property: p.name, message))
                }
            }
            guard problems.isEmpty else { continue }
            // The record is written with the values the handler left, except one-to-ones it
            // changed: those keep their old value here and change in the edits pass (MC3).
            var written = object.values
            for slot in object.entity.recordSlots where object.entity.properties[slot].isToOne {
                let p = object.entity.properties[slot]
                let before: StoredValue = object === newObject ? values[slot] : .null
                guard object.values[slot] != before, p.inverseSlot >= 0 else { continue }
                let inverseIsToOne = [before, object.values[slot]].contains { value in
                    if case .reference(let t) = value, let q = inverseProperty(p, t) { return !q.isToMany }
                    return false
                }
                if inverseIsToOne {
                    written[slot] = before
                    let after: [UInt64] = if case .reference(let t) = object.values[slot] { [t] } else { [] }
                    recordEdit(object.key, p, after, &batch, &state)
                    continue
                }
                // A to-one whose inverse is to-many: the inverse link moves now.
                if case .reference(let was) = before, let q = inverseProperty(p, was) {
                    state.droppedLinks.insert(LinkRef(tree: q.linkTree, source: was, target: object.key))
                }
                if case .reference(let target) = object.values[slot], let q = inverseProperty(p, target) {
                    batch.put(q.isOrdered ? PrimaryKey.bytes(object.key) : [], for: q.isOrdered ? orderedKey(target, object.key) : linkKey(target, object.key), in: q.linkTree)
                }
            }
            batch.putRecord(written, of: object.entity, key: object.key, rowVersion: object === newObject ? rowVersion + 1 : 1,
                            schemaVersion: newCatalog.schemaVersion)
            IndexEntries.add(key: object.key, object.entity, values: written, to: &batch)
            for (slot, targets) in object.toMany.sorted(by: { $0.key < $1.key }) {
                recordEdit(object.key, object.entity.properties[slot], targets, &batch, &state)
            }
        }
        guard problems.isEmpty else { return }
        for (source, p, targets) in newLinks {
            for (i, target) in targets.enumerated() { batch.putLink(source, p, target, position: i) }
        }
    }

    /// The inverse of `p` on the object `target`'s entity, in the new version.
    private func inverseProperty(_ p: PropertyInfo, _ target: UInt64) -> PropertyInfo? {
        guard let entity = newModel.entity(ofKey: target), p.inverseSlot >= 0, p.inverseSlot < entity.properties.count else { return nil }
        return entity.properties[p.inverseSlot]
    }

    /// An ordered link appended at the end: its position comes from the key's low bits, so
    /// links added by a handler keep their objects' order.
    private func orderedKey(_ source: UInt64, _ target: UInt64) -> [UInt8] {
        var k = PrimaryKey.bytes(source)
        PrimaryKey.appendBytes((UInt64(1) << 62) | (target & PrimaryKey.sequenceMask), to: &k)
        return k
    }

    /// The next key of `entity` in the new store, its sequence saved in the same transaction.
    private func nextKey(_ entity: EntityInfo, _ txn: WriteTransaction) throws -> UInt64 {
        let next = Catalog.sequence(from: try txn.get(Catalog.sequenceKey(entity.id), in: Catalog.tree)) + 1
        try txn.put(Catalog.sequenceValue(next), for: Catalog.sequenceKey(entity.id), in: Catalog.tree)
        return PrimaryKey.make(entity: entity.id, sequence: next)
    }

    /// The targets of `key`'s to-many `p` in the old store.
    func links(of key: UInt64, _ p: PropertyInfo, _ snapshot: Transaction) throws -> [UInt64] {
        guard try snapshot.treeExists(p.linkTree) else { return [] }
        let prefix = PrimaryKey.bytes(key)
        var out: [UInt64] = []
        var cursor = try snapshot.cursor(in: p.linkTree)
        var entry = try cursor.seek(to: prefix)
        while let (k, v) = entry, k.count == 16, k.starts(with: prefix) {
            if let t = p.isOrdered ? PrimaryKey.read(v) : PrimaryKey.read(k, at: 8) { out.append(t) }
            entry = try cursor.next()
        }
        return out
    }

    /// MC2: the links of every to-many kept as one, re-keyed when its order changed.
    private func copyLinks(_ snapshot: ReadTransaction, _ state: CopyState) throws {
        var done = Set<String>()
        for entity in newModel.entities {
            for p in entity.properties where p.isToMany && !done.contains(p.linkTree) {
                done.insert(p.linkTree)
                guard let oldEntity = oldModel.entity(id: entity.id) else { continue }
                let oldSlot = Int(p.fieldID) < oldEntity.slotForField.count ? oldEntity.slotForField[Int(p.fieldID)] : -1
                guard oldSlot >= 0 else { continue }
                let q = oldEntity.properties[oldSlot]
                guard q.isToMany, try snapshot.treeExists(q.linkTree) else { continue }
                var cursor = try snapshot.cursor(in: q.linkTree)
                var entry = try cursor.seek(to: [])
                var pending: [(key: [UInt8], value: [UInt8])] = []
                var lastSource: UInt64 = 0
                var position: UInt64 = 0
                func flush() throws {
                    guard !pending.isEmpty else { return }
                    let batch = pending
                    pending = []
                    try new.write { txn in for (k, v) in batch { try txn.put(v, for: k, in: p.linkTree) } }
                }
                while let (k, v) = entry {
                    entry = try cursor.next()
                    guard k.count == 16, let source = PrimaryKey.read(k),
                          let target = q.isOrdered ? PrimaryKey.read(v) : PrimaryKey.read(k, at: 8),
                          newModel.entity(ofKey: source) != nil, newModel.entity(ofKey: target) != nil,
                          !state.droppedLinks.contains(LinkRef(tree: p.linkTree, source: source, target: target)) else { continue }
                    if p.isOrdered == q.isOrdered {
                        pending.append((k, v))
                    } else if p.isOrdered {
                        position = source == lastSource ? position + 1 : 1
                        lastSource = source
                        var key = PrimaryKey.bytes(source)
                        PrimaryKey.appendBytes(position << 16, to: &key)
                        pending.append((key, PrimaryKey.bytes(target)))
                    } else {
                        pending.append((linkKey(source, target), []))
                    }
                    if pending.count >= chunk * 4 { try flush() }
                }
                try flush()
            }
        }
    }

    /// History is kept: its transactions name objects by key and properties by field ID, which
    /// the migration keeps.
    private func copyHistory(_ snapshot: ReadTransaction) throws {
        guard try snapshot.treeExists(HistoryCoding.tree) else { return }
        try new.write { txn in try txn.createTreeIfMissing(HistoryCoding.tree) }
        var cursor = try snapshot.cursor(in: HistoryCoding.tree)
        var entry = try cursor.seek(to: [])
        var pending: [([UInt8], [UInt8])] = []
        while let (k, v) = entry {
            pending.append((k, v))
            entry = try cursor.next()
            if pending.count >= chunk || entry == nil {
                let batch = pending
                pending = []
                try new.write { txn in for (k, v) in batch { try txn.put(v, for: k, in: HistoryCoding.tree) } }
            }
        }
    }
}
