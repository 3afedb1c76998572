// MigrationEdits: the relationship changes a custom stage's handlers make that touch more than
// the record being written — a to-many set, a one-to-one — kept on disk while the records are
// copied and applied afterwards to the complete new graph, both sides at once, as a batch
// applies them (BatchWriter).
//
//   ME1 an edit is "object `source`'s relationship `p` is now `targets`" (none or one for a
//       to-one), recorded in handler order in the scratch tree `docstore.migration-edits` of the
//       new store file; memory does not grow with the number of edits.
//   ME2 edits are applied in the order recorded, after the links pass, in transactions of
//       `chunk` edits: each sees the graph as the edits before it left it. A to-many becomes
//       exactly its targets (an ordered one in the order given): links gone are removed on both
//       sides, links new added on both sides; a to-one moves its inverse; a target that already
//       had a partner in a one-to-one, or a to-one whose inverse is to-many, loses it (B5).
//   ME3 a target that is not in the new store, or not of the relationship's destination, is a
//       problem naming the object; so is an object left without a required to-one (B7). The
//       migration then fails and the old store stays.
//   ME4 the scratch tree is dropped when the edits are applied: a finished store never has it.

import Foundation
internal import DocStoreEngine

extension MigrationCopier {
    /// The scratch tree of edits (ME1).
    static let editsTree = "docstore.migration-edits"

    /// Records that `source`'s relationship `p` becomes `targets` (ME1).
    func recordEdit(_ source: UInt64, _ p: PropertyInfo, _ targets: [UInt64], _ batch: inout WriteBatch, _ state: inout CopyState) {
        var value = PrimaryKey.bytes(source)
        PrimaryKey.appendBytes(UInt64(p.slot), to: &value)
        for target in targets { PrimaryKey.appendBytes(target, to: &value) }
        batch.put(value, for: PrimaryKey.bytes(state.edits), in: Self.editsTree)
        state.edits += 1
    }

    /// Applies the recorded edits in order (ME2, ME3) and drops the scratch tree (ME4).
    func applyEdits(_ state: CopyState) throws {
        guard custom != nil else { return }
        var next: UInt64 = 0
        while next < state.edits {
            let start = next
            var problems: [DocStoreError.Problem] = []
            try new.write { txn in
                let writer = BatchWriter(model: newModel, schemaVersion: newCatalog.schemaVersion, txn: txn)
                var cursor = try txn.cursor(in: Self.editsTree)
                var entry = try cursor.seek(to: PrimaryKey.bytes(next))
                var edits: [[UInt8]] = []
                while let (_, value) = entry, edits.count < chunk {
                    edits.append(value)
                    entry = try cursor.next()
                }
                for value in edits {
                    next += 1
                    try apply(edit: value, writer, &problems)
                }
                guard problems.isEmpty else { txn.rollback(); return }
                do {
                    _ = try writer.finish(author: nil, contextName: nil)
                } catch let error as DocStoreError {
                    problems += error.problems.isEmpty ? [.init(entity: error.entity ?? "?", property: error.property, error.message)] : error.problems
                    txn.rollback()
                }
            }
            if !problems.isEmpty { throw Self.failure(problems) }
            if next == start { break }      // nothing more to read
        }
        try new.write { txn in
            if try txn.treeExists(Self.editsTree) { try txn.dropTree(named: Self.editsTree) }
        }
    }

    /// Applies one edit (ME2), or notes why it cannot be (ME3).
    private func apply(edit value: [UInt8], _ writer: BatchWriter, _ problems: inout [DocStoreError.Problem]) throws {
        guard value.count >= 16, value.count % 8 == 0, let source = PrimaryKey.read(value), let slotNumber = PrimaryKey.read(value, at: 8),
              let entity = newModel.entity(ofKey: source), Int(slotNumber) < entity.properties.count else {
            throw DocStoreError(.corrupt, "a migration edit of \(value.count) bytes in \(Self.editsTree) does not decode")
        }
        let p = entity.properties[Int(slotNumber)]
        var targets: [UInt64] = []
        for offset in stride(from: 16, to: value.count, by: 8) {
            guard let target = PrimaryKey.read(value, at: offset) else { continue }
            targets.append(target)
        }
        let name = "\(entity.name)/\(source & PrimaryKey.sequenceMask)"
        let destination = newModel.entities[p.destination]
        for target in targets {
            guard destination.kindIDs.contains(PrimaryKey.entity(of: target)) else {
                problems.append(.init(entity: name, property: p.name, "\(p.name) leads to \(destination.name), not to \(newModel.entity(ofKey: target)?.name ?? "entity \(PrimaryKey.entity(of: target))")"))
                return
            }
            guard try writer.exists(target) else {
                problems.append(.init(entity: name, property: p.name, "\(newModel.entity(ofKey: target)?.name ?? "?")/\(target & PrimaryKey.sequenceMask) is not in the migrated store"))
                return
            }
        }
        if p.isToMany {
            try writer.flush()      // the links as the edits before this one left them
            let current = try links(of: source, p, writer.txn)
            let wanted = Set(targets), had = Set(current)
            let removed = current.filter { !wanted.contains($0) }
            let added = targets.filter { !had.contains($0) }
            if p.isOrdered {
                guard current != targets else { return }
                try writer.deleteLinksLater(of: source, in: p.linkTree)
                for (i, target) in targets.enumerated() { writer.putOwnLink(source, p, target, position: i) }
            } else {
                for target in removed { try writer.deleteLink(source, p, target) }
                for target in added { writer.putOwnLink(source, p, target, position: 0) }
            }
            for target in removed { try writer.removeInverse(of: p, target: target, source: source) }
            for target in added { try writer.addInverse(of: p, target: target, source: source) }
        } else {
            let new: StoredValue = targets.first.map { .reference($0) } ?? .null
            let before = try writer.toOneValue(of: source, p)
            guard before != new else { return }
            if case .reference(let old) = before { try writer.removeInverse(of: p, target: old, source: source) }
            writer.setToOne(of: source, p, new)
            if case .reference(let target) = new { try writer.addInverse(of: p, target: target, source: source) }
        }
    }
}
