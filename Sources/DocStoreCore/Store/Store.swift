// Store: an open DocStore file with its schema — Core Data's persistent store coordinator. It
// owns the engine, the catalog (Format/schema.md) and the key sequences, and is shared by every
// context; it is Sendable (its mutable state is behind a lock).
//
// Opening: the schema is checked (Schema.validate), then compared with the catalog. A new store
// gets a catalog and its trees in one transaction; a store whose catalog holds the same schema
// opens without writing anything; a different schema is refused with `.schemaMismatch` naming
// each difference (migrations are a later feature), and the file is left as it was.

import Foundation
import Synchronization
public import DocStoreEngine

/// An open store: a DocStore file (or memory) and the schema its objects follow.
///
/// ```swift
/// let store = try Store(url: URL(fileURLWithPath: "Notes.docstore"), schema: schema)
/// let context = Context(store: store)
/// ```
///
/// ## Topics
/// - ``init(url:schema:)``
/// - ``inMemory(schema:)``
/// - ``identifier``
/// - ``schema``
public final class Store: Sendable {
    /// The store's identity (fixed when the file was created); object IDs and URIs carry it.
    public let identifier: UUID
    /// The schema the store was opened with.
    public let schema: Schema
    /// Where the store lives; nil in memory.
    public let url: URL?
    /// The engine; replaced only by ``reopen()``.
    private let engineBox: Locked<Engine>
    var engine: Engine { engineBox.withLock { $0 } }
    let catalog: Catalog
    let model: StoreModel
    /// The next sequence number by entity ID (0 for an entity that has handed out none). An
    /// array, not a `[UInt32: UInt64]`: entity IDs are small (1…`PrimaryKey.maxEntityID`, most
    /// stores a handful), and the first dictionary keyed by UInt32 costs a new process a scan of
    /// every conformance record, on the path of opening a store.
    private let sequences: Locked<[UInt64]>
    /// Records below the contexts (RowCache.swift).
    let rows = RowCache()
    /// The last commit whose rows the row cache has forgotten (a save's or a batch's, set at
    /// the end of its `onCommit`), with how many times the store was reopened (its LSNs may
    /// then repeat). A context made now reads no row older than it (Context+Conflicts K6).
    private let settled: Locked<StoreMoment>
    /// Where commits are announced (ChangeHub.swift).
    let changeHub = ChangeHub()
    /// Set once a save made the history tree (Store+History SH1).
    let historyTreeExists = Atomic<Bool>(false)
    /// Whether saves record their values and links in history (format 2): set while the store
    /// has the sync tree (Store+SyncSupport.swift), from open on.
    let recordsChangeValues = Atomic<Bool>(false)

    /// Opens (or creates) the store at `url` for `schema`.
    ///
    /// - Throws: ``DocStoreError/Code/invalidSchema``; ``DocStoreError/Code/schemaMismatch``
    ///   when the file holds a different schema (its ``DocStoreError/problems`` name each
    ///   difference); ``DocStoreError/Code/storage`` for engine errors (locked, corrupt, I/O);
    ///   ``DocStoreError/Code/corrupt`` for a damaged catalog.
    public convenience init(url: URL, schema: Schema, durability: Durability = .full, readOnly: Bool = false) throws(DocStoreError) {
        var options = EngineOptions()
        options.durability = durability
        options.readOnly = readOnly
        try self.init(path: url.filePath, url: url, schema: schema, classes: [:], options: options)
    }

    /// Opens (or creates) the store at `url` for these @Model classes.
    ///
    /// ```swift
    /// let store = try Store(url: url, models: [Folder.self, Note.self, Tag.self])
    /// ```
    ///
    /// - Throws: as ``init(url:schema:durability:)``.
    /// With `readOnly`, the store is opened without the writer's lock, as of its latest commit,
    /// while another process may have it open for writing (saves throw); reopen it to see later
    /// commits — README § Another process.
    public convenience init(url: URL, models: [ManagedObject.Type], durability: Durability = .full, readOnly: Bool = false) throws(DocStoreError) {
        var options = EngineOptions()
        options.durability = durability
        options.readOnly = readOnly
        try self.init(path: url.filePath, url: url, schema: Schema(models: models), classes: Store.classes(models), options: options)
    }

    /// A store in memory, for tests and previews: nothing touches the disk.
    public static func inMemory(schema: Schema) throws(DocStoreError) -> Store {
        try Store(path: "/memory.docstore", url: nil, schema: schema, classes: [:], options: memoryOptions)
    }

    /// A store in memory for these @Model classes.
    public static func inMemory(models: [ManagedObject.Type]) throws(DocStoreError) -> Store {
        try Store(path: "/memory.docstore", url: nil, schema: Schema(models: models), classes: classes(models), options: memoryOptions)
    }

    /// A store in memory whose values of `blobThreshold` bytes or more go to (in-memory) blob
    /// files: for the fuzz targets and tests that exercise blobs without megabyte values.
    package static func inMemory(schema: Schema, blobThreshold: Int) throws(DocStoreError) -> Store {
        var options = memoryOptions
        options.blobThreshold = blobThreshold
        return try Store(path: "/memory.docstore", url: nil, schema: schema, classes: [:], options: options)
    }

    private static var memoryOptions: EngineOptions {
        var options = EngineOptions()
        options.fileSystem = MemoryFileSystem()
        options.durability = .off
        options.walPreallocationBytes = 0     // zeros in memory buy no durability, only copying
        return options
    }

    static func classes(_ models: [ManagedObject.Type]) -> [String: ManagedObject.Type] {
        var out: [String: ManagedObject.Type] = [:]
        for model in models { if let name = model._$entityDescription?.name { out[name] = model } }
        return out
    }

    /// `versionIdentifier`: the version number a new store's catalog records (a store created
    /// through a migration plan).
    init(path: String, url: URL?, schema: Schema, classes: [String: ManagedObject.Type], options: EngineOptions,
         versionIdentifier: SchemaVersion? = nil) throws(DocStoreError) {
        try schema.validate()
        let engine: Engine
        do { engine = try Engine.open(at: path, options: options) } catch {
            throw DocStoreError(.storage, "the store at \(path) could not be opened: \(error.message)", underlying: error)
        }
        do {
            let catalog = try Store.loadCatalog(engine: engine, schema: schema, classes: classes, versionIdentifier: versionIdentifier)
            self.catalog = catalog
            self.model = StoreModel(catalog: catalog, classes: classes, storeIdentifier: engine.storeID)
            self.sequences = Locked(try Store.loadSequences(engine: engine, catalog: catalog))
        } catch {
            try? engine.close()
            throw error
        }
        let synced: Bool
        do { synced = try engine.read { try $0.treeExists(Store.syncTree) } } catch {
            try? engine.close()
            throw Store.storageError(error)
        }
        recordsChangeValues.store(synced, ordering: .releasing)
        self.engineBox = Locked(engine)
        self.settled = Locked(StoreMoment(reopenings: 0, lsn: engine.lastCommittedLSN.rawValue))
        self.identifier = engine.storeID
        self.schema = schema
        self.url = url
    }

    /// Opens the store's files again after a save failed on an I/O error (a full disk, EIO):
    /// from then on the store refuses writes (`.storage`, "failed"), because a failed sync may
    /// have lost data the system reported only once. `reopen()` recovers the store to exactly the
    /// saves that succeeded — a save that threw is never half there, nor there at all — and keeps
    /// every context and its unsaved changes, so saving them again retries:
    ///
    /// ```swift
    /// do { try context.save() } catch where error.code == .storage {
    ///     // free some space, then
    ///     try store.reopen()
    ///     try context.save()
    /// }
    /// ```
    ///
    /// Other contexts that merged the failed save's changes when they were announced should be
    /// reset. Reopening a store that has not failed does the same: its state is its last save.
    ///
    /// - Throws: ``DocStoreError/Code/storage`` while the fault lasts (try again later).
    public func reopen() throws(DocStoreError) {
        try engineBox.withLock { (engine) throws(DocStoreError) in
            do throws(EngineError) { engine = try engine.reopenAfterFailure() } catch {
                throw DocStoreError(.storage, "reopening the store failed: \(error.message)", underlying: error)
            }
        }
        rows.removeAll()
        let lsn = engine.lastCommittedLSN.rawValue
        settled.withLock { $0 = StoreMoment(reopenings: $0.reopenings + 1, lsn: lsn) }
        historyTreeExists.store(false, ordering: .releasing)   // looked up again on the next save
    }

    /// Closes the store: checkpoints and releases the file. Contexts must not be used after.
    public func close() throws(DocStoreError) {
        do { try engine.close() } catch {
            throw DocStoreError(.storage, "closing the store failed: \(error.message)", underlying: error)
        }
    }

    /// Runs the full integrity check — the engine's (pages, trees, checksums, blobs), then the
    /// object graph's (records, index entries, both sides of every relationship:
    /// GraphAudit.swift); returns the problems (empty when sound).
    ///
    /// `progress`, when given, is called now and then with what is being checked ("pages", then
    /// "objects"), how many so far and of how many — for a progress bar.
    public func verify(progress: ((_ phase: String, _ done: Int, _ total: Int) -> Void)? = nil) throws(DocStoreError) -> [String] {
        let engineProblems: [String]
        do {
            engineProblems = try engine.verify(progress: progress.map { report in { report("pages", $0, $1) } }).problems.map { "\($0)" }
        } catch {
            throw DocStoreError(.storage, "verify failed: \(error.message)", underlying: error)
        }
        guard engineProblems.isEmpty else { return engineProblems }
        return try verifyGraph(progress: progress.map { report in { report("objects", $0, $1) } })
    }

    /// The object graph's part of ``verify(progress:)`` alone (GraphAudit.swift): every record
    /// decodes, index entries and records agree, both sides of every relationship agree. For a
    /// tool that has already run the engine's check (`docstore verify`).
    public func verifyGraph(progress: ((_ objects: Int, _ total: Int) -> Void)? = nil) throws(DocStoreError) -> [String] {
        try auditGraph(progress: progress)
    }

    // MARK: - Catalog

    private static func loadCatalog(engine: Engine, schema: Schema, classes: [String: ManagedObject.Type],
                                    versionIdentifier: SchemaVersion?) throws(DocStoreError) -> Catalog {
        let stored: [UInt8]?
        do {
            stored = try engine.read { txn -> [UInt8]? in
                guard try txn.treeExists(Catalog.tree) else { return nil }
                return try txn.get(Catalog.catalogKey, in: Catalog.tree)
            }
        } catch let error as EngineError {
            throw DocStoreError(.storage, "reading the catalog failed: \(error.message)", underlying: error)
        } catch {
            throw DocStoreError(.storage, "reading the catalog failed: \(error)")
        }
        if let stored {
            let catalog = try Catalog.decode(stored)
            let differences = schema.differences(from: catalog.schema)
            guard differences.isEmpty else {
                throw DocStoreError(
                    .schemaMismatch,
                    "the store holds another schema (\(differences.count) difference\(differences.count == 1 ? "" : "s")); migrate it or open it with the schema it has",
                    problems: differences.map { DocStoreError.Problem(entity: $0.entity, property: $0.property, $0.change) })
            }
            // Same model, perhaps declared in another order: keep the stored IDs.
            var same = catalog
            same.schema = schema
            return same
        }
        var catalog = Catalog(new: schema)
        catalog.versionIdentifier = versionIdentifier
        let bytes = try catalog.encoded()
        let model = StoreModel(catalog: catalog, classes: classes)
        try write(engine) { txn in
            // The tree may exist without its catalog: a store recovered without one (RC3) keeps
            // its key sequences there.
            try txn.createTreeIfMissing(Catalog.tree)
            try txn.put(bytes, for: Catalog.catalogKey, in: Catalog.tree)
            for tree in model.treeNames { try txn.createTreeIfMissing(tree) }
        }
        return catalog
    }

    private static func loadSequences(engine: Engine, catalog: Catalog) throws(DocStoreError) -> [UInt64] {
        // Catalog.decode checked the schema's entities' IDs to lie in 1…maxEntityID; any other
        // name's ID is no entity's (`nextKey` grows the array for an entity past its end).
        let ids = catalog.entityIDs.values.filter { $0 <= PrimaryKey.maxEntityID }
        var next = [UInt64](repeating: 0, count: Int(ids.max() ?? 0) + 1)
        do {
            try engine.read { txn in
                for id in ids {
                    next[Int(id)] = Catalog.sequence(from: try txn.get(Catalog.sequenceKey(id), in: Catalog.tree)) + 1
                }
            }
        } catch let error as EngineError {
            throw DocStoreError(.storage, "reading key sequences failed: \(error.message)", underlying: error)
        } catch {
            throw DocStoreError(.storage, "reading key sequences failed: \(error)")
        }
        return next
    }

    // MARK: - Keys

    /// The ID of the object `number` (1, 2, 3, … in insert order) of the entity `entityName`,
    /// as its URI shows it (`docstore://<store>/Note/42`).
    ///
    /// - Throws: ``DocStoreError/Code/invalidObjectID`` for an unknown entity or a number out of range.
    public func objectID(forEntityName entityName: String, number: UInt64) throws(DocStoreError) -> ObjectID {
        guard let entity = model.entity(named: entityName), number > 0, number <= PrimaryKey.sequenceMask else {
            throw DocStoreError(.invalidObjectID, "no object \(number) of entity \(entityName) can exist in this store", entity: entityName)
        }
        return ObjectID(store: identifier, entity: entity.name, key: PrimaryKey.make(entity: entity.id, sequence: number))
    }

    /// Hands out the next primary key of `entity`. Keys are never reused: one handed out and
    /// never saved leaves a gap.
    func nextKey(for entity: EntityInfo) -> UInt64 {
        let sequence = sequences.withLock { s -> UInt64 in
            let id = Int(entity.id)
            if id >= s.count { s += [UInt64](repeating: 0, count: id + 1 - s.count) }
            let n = s[id] == 0 ? 1 : s[id]
            s[id] = n + 1
            return n
        }
        return PrimaryKey.make(entity: entity.id, sequence: sequence)
    }

    /// The highest sequence number handed out for the entity so far (saved with each commit).
    func highestSequence(of entityID: UInt32) -> UInt64 {
        sequences.withLock { s in
            let id = Int(entityID)
            return id < s.count && s[id] != 0 ? s[id] - 1 : 0
        }
    }

    // MARK: - Engine access

    static func write<R>(_ engine: Engine, _ body: (WriteTransaction) throws -> R) throws(DocStoreError) -> R {
        do { return try engine.write(body) } catch { throw storageError(error) }
    }

    func write<R>(_ body: (WriteTransaction) throws -> R) throws(DocStoreError) -> R {
        try Store.write(engine, body)
    }

    /// A write whose `onCommit` runs under the writer lock once it is visible (Engine.write);
    /// `onCommit` makes the row cache forget what the commit changed, and the commit is then the
    /// settled one (`settledMoment`). A write without it leaves the settled commit behind, so
    /// contexts check every row they rewrite again (K6 never trusts a commit it did not see
    /// settle).
    func write<R>(onCommit: @escaping (LSN) -> Void, _ body: (WriteTransaction) throws -> R) throws(DocStoreError) -> R {
        let settled = self.settled
        // A commit of this opening of the files only: one of an engine a reopen replaced never
        // names the settled commit of the next.
        let opening = settled.withLock { $0.reopenings }
        do {
            return try engine.write(onCommit: { lsn in
                onCommit(lsn)
                settled.withLock { if $0.reopenings == opening { $0.lsn = lsn.rawValue } }
            }, body)
        } catch { throw Store.storageError(error) }
    }

    /// The settled commit now (`settled`).
    var settledMoment: StoreMoment { settled.withLock { $0 } }

    func read<R>(_ body: (ReadTransaction) throws -> R) throws(DocStoreError) -> R {
        try Store.read(engine, body)
    }

    static func read<R>(_ engine: Engine, _ body: (ReadTransaction) throws -> R) throws(DocStoreError) -> R {
        do { return try engine.read(body) } catch { throw storageError(error) }
    }

    /// A DocStoreError for what a transaction body or the engine threw.
    static func storageError(_ error: any Error) -> DocStoreError {
        switch error {
        case let error as DocStoreError: error
        case let error as EngineError: DocStoreError(.storage, error.message, underlying: error)
        default: DocStoreError(.storage, "\(error)")
        }
    }
}
