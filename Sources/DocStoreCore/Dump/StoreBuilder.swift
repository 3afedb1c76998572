// StoreBuilder: makes a new store file from objects given one at a time, each with its key —
// what loading a dump (and salvaging a damaged store) writes with. The objects keep their
// keys, so object IDs and URIs are those of the store they came from.
//
//   SB1 the store is built beside its destination (StoreFileSwap's staging files), without
//       syncs, and renamed into place only when complete, synced and checked (as a backup is,
//       BK3): an error or a crash never leaves a partial store at the destination.
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
    let path: String
    let catalog: Catalog
    let model: StoreModel
    private let engine: Engine
    private let fs: any FileSystem
    private var batch = WriteBatch()
    private var pending = 0
    private var highest: [UInt32: UInt64] = [:]
    private var closed = false
    /// Objects per transaction (SB3).
    var chunk = 5000

    /// Starts a store at `path` (nothing may exist there) with `catalog`, the identity
    /// `storeID`, and commits that follow `lastLSN`.
    init(path: String, catalog: Catalog, storeID: UUID, lastLSN: UInt64, fileSystem: any FileSystem = FoundationFileSystem()) throws(DocStoreError) {
        self.path = path
        self.catalog = catalog
        self.fs = fileSystem
        model = StoreModel(catalog: catalog, classes: [:])
        guard !fs.fileExists(path) else {
            throw DocStoreError(.storage, "a file exists at \(path) already; a store is loaded into a new path")
        }
        let bytes = try catalog.encoded()
        let trees = model.treeNames
        do {
            try StoreFileSwap.removeStaging(path, fs)
            var options = EngineOptions()
            options.fileSystem = fs
            options.durability = .off
            options.continuing = (storeID, LSN(lastLSN))
            engine = try Engine.open(at: StoreFileSwap.staging(path), options: options)
        } catch {
            throw Store.storageError(error)
        }
        do {
            try Store.write(engine) { txn in
                try txn.createTree(named: Catalog.tree)
                try txn.put(bytes, for: Catalog.catalogKey, in: Catalog.tree)
                for tree in trees { try txn.createTreeIfMissing(tree) }
            }
        } catch {
            abandon()
            throw error
        }
    }

    /// Adds the object `key` of `entity` with its values by slot (its to-ones among them) and
    /// its to-many targets by slot, in order (SB2).
    func add(_ key: UInt64, _ entity: EntityInfo, values: [StoredValue], toMany: [(slot: Int, targets: [UInt64])]) throws(DocStoreError) {
        batch.put(entity.record(values, rowVersion: 1, schemaVersion: catalog.schemaVersion),
                  for: PrimaryKey.bytes(key), in: entity.recordsTree)
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
        let waiting = batch
        batch = WriteBatch()
        pending = 0
        try Store.write(engine) { txn in
            if let clash = try waiting.uniqueClashes(txn).first { throw clash.error }
            try waiting.apply(txn)
        }
    }

    /// Writes the key sequences (SB4), checks the graph (SB2) and puts the store in place
    /// (SB1). When the audit finds problems, throws what `refusal` makes of them, with nothing
    /// left behind.
    func finish(sequences: [UInt32: UInt64], refusal: ([String]) -> DocStoreError) throws(DocStoreError) {
        do {
            try flush()
            let highest = self.highest
            try Store.write(engine) { txn in
                for (id, n) in sequences.merging(highest, uniquingKeysWith: max) {
                    try txn.put(Catalog.sequenceValue(n), for: Catalog.sequenceKey(id), in: Catalog.tree)
                }
            }
            let model = self.model
            let problems = try Store.read(engine) { txn in
                var audit = GraphAudit(model: model, txn: txn)
                return try audit.run()
            }
            guard problems.isEmpty else { throw refusal(problems) }
            try engine.checkpoint()
            try engine.close()
            closed = true
            try StoreFileSwap.syncStaging(StoreFileSwap.staging(path), fs)
            try StoreFileSwap.commit(path, fs)
        } catch {
            abandon()
            throw Store.storageError(error)
        }
    }

    /// Drops the unfinished store (SB1).
    func abandon() {
        if !closed { try? engine.close() }
        closed = true
        try? StoreFileSwap.removeStaging(path, fs)
    }
}
