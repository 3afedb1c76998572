// StoreBuilder: makes a new store file from objects given one at a time, each with its key —
// what loading a dump (and salvaging a damaged store) writes with. The objects keep their
// keys, so object IDs and URIs are those of the store they came from.
//
//   SB1 it writes into an engine on the staging files of StoreFileSwap.build, which renames
//       the store into place only when the build returns (as a backup is, BK3): an error or a
//       crash never leaves a partial store at the destination.
//   SB2 each object is written with its own side of its relationships only: its record (its
//       to-ones) and its to-many links. The other side comes with the other object. When all
//       are written, the graph audit (GraphAudit GA1–GA3) must find both sides agreeing.
//   SB3 objects are written in transactions of `chunk` objects; unique entries are checked
//       against the store and each other (WriteBatch), so a clash names both objects.
//   SB4 each entity's key sequence is at least the highest number written, so objects created
//       later never take a loaded object's number.

import Foundation
internal import DocStoreEngine

final class StoreBuilder {
    let engine: Engine
    let catalog: Catalog
    let model: StoreModel
    private var batch = WriteBatch()
    private var pending = 0
    private var highest: [UInt32: UInt64] = [:]
    /// Objects per transaction (SB3).
    var chunk = 5000

    /// Starts the store in `engine` (new and empty) with `catalog`: the catalog and every tree.
    init(engine: Engine, catalog: Catalog) throws(DocStoreError) {
        self.engine = engine
        self.catalog = catalog
        model = StoreModel(catalog: catalog, classes: [:])
        let bytes = try catalog.encoded()
        let trees = model.treeNames
        try Store.write(engine) { txn in
            try txn.createTree(named: Catalog.tree)
            try txn.put(bytes, for: Catalog.catalogKey, in: Catalog.tree)
            for tree in trees { try txn.createTreeIfMissing(tree) }
        }
    }

    /// Adds the object `key` of `entity` with its values by slot (its to-ones among them) and
    /// its to-many targets by slot, in order (SB2).
    func add(_ key: UInt64, _ entity: EntityInfo, values: [StoredValue], toMany: [(slot: Int, targets: [UInt64])]) throws(DocStoreError) {
        batch.putRecord(values, of: entity, key: key, rowVersion: 1, schemaVersion: catalog.schemaVersion)
        IndexEntries.add(key: key, entity, values: values, to: &batch)
        for (slot, targets) in toMany {
            for (i, target) in targets.enumerated() { batch.putLink(key, entity.properties[slot], target, position: i) }
        }
        highest[entity.id] = max(highest[entity.id] ?? 0, key & PrimaryKey.sequenceMask)
        pending += 1
        if pending >= chunk { try flush() }
    }

    /// Writes what waits in one transaction (SB3).
    private func flush() throws(DocStoreError) {
        guard pending > 0 else { return }
        var waiting = batch
        batch = WriteBatch()
        pending = 0
        try Store.write(engine) { txn in
            if let clash = try waiting.uniqueClashes(txn).first { throw clash.error }
            try waiting.apply(txn)
        }
    }

    /// Writes the last objects and the key sequences (SB4), then checks the graph (SB2):
    /// returns the audit's problems, empty when both sides of every relationship agree.
    func finish(sequences: [UInt32: UInt64]) throws(DocStoreError) -> [String] {
        try flush()
        let highest = self.highest
        try Store.write(engine) { txn in
            for (id, n) in sequences.merging(highest, uniquingKeysWith: max) {
                try txn.put(Catalog.sequenceValue(n), for: Catalog.sequenceKey(id), in: Catalog.tree)
            }
        }
        let model = self.model
        return try Store.read(engine) { txn in
            var audit = GraphAudit(model: model, txn: txn)
            return try audit.run()
        }
    }
}
