// Engine: an open store — the page file, its WAL and blob directory — and the transactions on it.
//
// Files: `X.docstore` (pages), `X.docstore-wal` (log), `X.docstore-blobs/` (blob files).
//
// Store states and the functions that move between them:
//
//   (files) --Engine.open: Recovery.recover--> open --close()--> closed
//                                               |  ^
//                           write/sync failure  |  | (reopenAfterFailure, I11)
//                                               v  |
//                                             failed   (reads work; writes throw .failed, I8)
//
//   I11 `write` returns only for a commit that stands: one a failure after it became durable
//       (a checkpoint whose meta page was synced) still returns. Reopening after a failure
//       recovers exactly the commits `write` returned for: a later one, only in the WAL and never
//       acknowledged (its sync failed), is cut from the log, so a caller's retry of it cannot
//       find half of itself (or all of it) already there.
//
// Write transaction: Engine.write takes the writer lock → body runs → commit():
// finish() (catalog) → WAL append → install pages → publish → [auto checkpoint] →
// unlock → GroupCommit.waitDurable (in .full mode, I4). A body that throws rolls back.
//
// Concurrency: one writer at a time (the writer lock); readers take snapshots of the published
// state without blocking it. The engine object is Sendable and may be shared between threads;
// transactions must stay on the thread that runs their closure.

import Foundation

/// An open DocStore storage engine: named B+trees of byte keys and values, with snapshot reads,
/// one writer at a time, a write-ahead log, checkpoints and crash recovery.
///
/// ```swift
/// let engine = try Engine.open(at: "/tmp/Notes.docstore")
/// try engine.write { txn in
///     try txn.createTreeIfMissing("notes")
///     try txn.put(Array("hello".utf8), for: Array("k1".utf8), in: "notes")
/// }
/// let value = try engine.read { try $0.get(Array("k1".utf8), in: "notes") }
/// try engine.close()
/// ```
///
/// ## Topics
/// - ``open(at:options:)``
/// - ``read(_:)``
/// - ``write(_:)``
/// - ``checkpoint()``
/// - ``verify()``
/// - ``close()``
public final class Engine: Sendable {
    /// The paths of a store's files.
    public struct Paths: Sendable {
        public let pageFile: String
        public let wal: String
        public let blobDirectory: String
        public let directory: String

        public init(pageFile: String) {
            self.pageFile = pageFile
            self.wal = pageFile + "-wal"
            self.blobDirectory = pageFile + "-blobs"
            let dir = MemoryFileSystem.parent(of: pageFile)
            self.directory = dir.isEmpty ? "." : dir
        }
    }

    struct Published {
        var lsn: LSN
        var catalogRoot: PageNumber
        /// Open snapshots by their LSN's raw value (not keyed by `LSN`: a dictionary of a key
        /// type the process has not hashed before costs a scan of every conformance record in
        /// the process the first time, and a new process opens its store through this path).
        var snapshots: [UInt64: Int] = [:]
        var closed = false
        /// The newest commit a `write` returned for (I11).
        var acknowledged: LSN

        var oldestSnapshot: LSN? { snapshots.keys.min().map(LSN.init(rawValue:)) }
    }

    public let paths: Paths
    public let options: EngineOptions
    /// The store's identity, fixed at creation.
    public let storeID: UUID
    /// The page size of this store.
    public let pageSize: Int
    let fileSystem: any FileSystem
    let pager: Pager
    let blobs: BlobStore?
    let limits: ValuePlacement.Limits
    let groupCommit: GroupCommit
    let writer: WriterLock
    let published: Locked<Published>
    /// Catalog entries read transactions looked up, for the next ones of the same snapshot.
    let catalogCache = CatalogCache()
    let walFile: (any StorageFile)?

    init(paths: Paths, options: EngineOptions, pager: Pager, meta: MetaPage, walFile: (any StorageFile)?, writerState: WriterState) {
        self.paths = paths
        self.options = options
        self.fileSystem = options.fileSystem
        self.pager = pager
        self.pageSize = meta.pageSize
        self.storeID = meta.storeID
        self.blobs = BlobStore(fileSystem: options.fileSystem, directory: paths.blobDirectory)
        self.limits = ValuePlacement.Limits(pageSize: meta.pageSize, blobThreshold: max(options.blobThreshold, 1))
        self.groupCommit = GroupCommit(durable: meta.checkpointLSN)
        self.writer = WriterLock(writerState)
        self.published = Locked(Published(lsn: meta.checkpointLSN, catalogRoot: meta.catalogRoot, acknowledged: meta.checkpointLSN))
        self.walFile = walFile
    }

    /// Opens the store whose page file is at `path`, creating it if allowed, and recovers it:
    /// the newest valid checkpoint plus every intact WAL record after it.
    ///
    /// - Throws: `.storeLocked` (another process writes it), `.notADocStore`, `.versionTooNew`,
    ///   `.notFound`, `.corrupt`, `.io`.
    public static func open(at path: String, options: EngineOptions = EngineOptions()) throws(EngineError) -> Engine {
        try Recovery.open(paths: Paths(pageFile: path), options: options)
    }

    /// Opens the store at a file URL.
    public static func open(at url: URL, options: EngineOptions = EngineOptions()) throws(EngineError) -> Engine {
        try open(at: url.path, options: options)
    }

    // MARK: - Reading

    /// Begins a snapshot of the latest committed state. Close it when done.
    public func beginRead() throws(EngineError) -> ReadTransaction {
        let (lsn, root) = try published.withLock { (p) throws(EngineError) -> (LSN, PageNumber) in
            guard !p.closed else { throw EngineError(.closed, "the engine is closed") }
            p.snapshots[p.lsn.rawValue, default: 0] += 1
            return (p.lsn, p.catalogRoot)
        }
        return ReadTransaction(engine: self, lsn: lsn, catalogRoot: root)
    }

    func endSnapshot(_ lsn: LSN) {
        published.withLock { p in
            if let n = p.snapshots[lsn.rawValue] {
                if n <= 1 { p.snapshots.removeValue(forKey: lsn.rawValue) } else { p.snapshots[lsn.rawValue] = n - 1 }
            }
        }
    }

    /// Runs `body` with a snapshot of the latest committed state, then ends the snapshot.
    public func read<R>(_ body: (ReadTransaction) throws -> R) throws -> R {
        let txn = try beginRead()
        defer { txn.close() }
        return try body(txn)
    }

    /// The LSN of the latest committed transaction.
    public var lastCommittedLSN: LSN { published.withLock { $0.lsn } }

    // MARK: - Writing

    /// Runs `body` in the write transaction and commits it when `body` returns; if `body` throws
    /// or calls `rollback()`, nothing it did is kept. Only one write transaction runs at a time;
    /// others wait. In `.full` durability this returns once the commit is durable (I4).
    ///
    /// `onCommit`, if given, runs with the commit's LSN once the transaction is visible to new
    /// readers and while the writer lock is still held, so successive calls see commits in LSN
    /// order (the object layer publishes changes to observers from it). It must be quick and must
    /// not write.
    ///
    /// - Throws: what `body` throws; `.readOnly`; `.failed` after an earlier I/O failure (I8);
    ///   `.io`/`.noSpace` if the commit could not be written (the store then enters the failed
    ///   state); `.closed`.
    public func write<R>(onCommit: ((LSN) -> Void)? = nil, _ body: (WriteTransaction) throws -> R) throws -> R {
        guard !options.readOnly else { throw EngineError(.readOnly, "the store was opened read-only") }
        var committed: LSN?
        let result: R = try writer.withLock { state in
            try state.checkWritable()
            let txn = try beginWrite(&state)
            txn.ws.spillPages = max(options.writeSpillBytes / pageSize, 2)
            txn.bufferedPutBytes = max(options.putBufferBytes, 0)
            let r: R
            do {
                r = try body(txn)
            } catch {
                abandon(txn)
                if let failure = txn.ws.ioFailure { enterFailedState(failure, &state) }
                throw error
            }
            if let failure = txn.ws.ioFailure {
                abandon(txn)
                enterFailedState(failure, &state)
                throw failure
            }
            if let failure = txn.applyFailure {
                // Buffered operations failed half-way (a damaged page): nothing of it commits.
                abandon(txn)
                throw failure
            }
            if txn.rolledBack {
                abandon(txn)
                return r
            }
            do {
                committed = try commit(txn, &state, logged: true)
            } catch {
                if txn.isOpen { abandon(txn) }
                // A spill that failed while the commit applied the last puts (I8).
                if let failure = txn.ws.ioFailure { enterFailedState(failure, &state) }
                throw error
            }
            if let lsn = committed { onCommit?(lsn) }
            return r
        }
        if let lsn = committed, options.durability == .full {
            try groupCommit.waitDurable(lsn) { () throws(EngineError) in
                do throws(EngineError) { try walFile?.sync() } catch {
                    writer.markFailed(error)
                    throw error
                }
            }
        }
        if let lsn = committed { published.withLock { $0.acknowledged = max($0.acknowledged, lsn) } }
        return result
    }

    /// The newest commit a `write` returned for: what reopening after a failure keeps (I11).
    public var lastAcknowledgedLSN: LSN { published.withLock { $0.acknowledged } }

    /// After an I/O failure (writes throw `.failed`, I8): closes this engine and opens the store
    /// again, recovering exactly the commits `write` returned for (I11). Use the engine this
    /// returns; this one is closed. Snapshots open on this one end with `.closed`.
    ///
    /// - Throws: what ``open(at:options:)`` throws, when the fault has not cleared.
    public func reopenAfterFailure() throws(EngineError) -> Engine {
        try? close()     // a store that has not failed checkpoints here: read what is durable after
        let durableMeta = writer.withLock { $0.durableMeta.generation }
        let keep = lastAcknowledgedLSN
        var options = options
        options.reopening = EngineOptions.Reopening(acknowledged: keep, durableMeta: durableMeta)
        return try Recovery.open(paths: paths, options: options)
    }

    func beginWrite(_ state: inout WriterState) throws(EngineError) -> WriteTransaction {
        let (lsn, root, oldest) = try published.withLock { (p) throws(EngineError) in
            guard !p.closed else { throw EngineError(.closed, "the engine is closed") }
            return (p.lsn, p.catalogRoot, p.oldestSnapshot)
        }
        let freeSpace = try state.freeSpace(pager)
        reclaim(&state, freeSpace, oldestSnapshot: oldest)
        let ws = PageWorkspace(
            pager: pager, freeSpace: freeSpace, lsn: lsn.next, limits: limits,
            blobs: blobs, durableBlobs: options.durability != .off)
        let txn = WriteTransaction(engine: self, lsn: lsn, catalogRoot: root, workspace: ws)
        txn.log.limit = walRecordLimit
        return txn
    }

    /// The largest payload a commit writes as a WAL record; larger transactions commit by
    /// checkpoint (the record length field is 32 bits, Format/wal.md).
    var walRecordLimit: Int { min(options.checkpointWALBytes, WALFormat.maxPayload) }

    /// Discards a transaction that will not commit: its pages go back, its blob files are removed.
    func abandon(_ txn: WriteTransaction) {
        txn.rollback()
        txn.ws.rollBackAllocations()
        txn.ws.discardBlobs()
    }

    /// Returns freed pages and blob files to use once nothing can reach them (I7, I9).
    func reclaim(_ state: inout WriterState, _ freeSpace: FreeSpace, oldestSnapshot: LSN?) {
        let durable = state.durableMeta.checkpointLSN
        let dropped = freeSpace.release(oldestSnapshot: oldestSnapshot, durableCheckpoint: durable)
        if !dropped.isEmpty { pager.drop(dropped) }
        let limit = min(oldestSnapshot ?? durable, durable)
        while let first = state.pendingBlobDeletes.first, first.lsn <= limit {
            for id in first.blobs { try? blobs?.remove(id) }
            state.pendingBlobDeletes.removeFirst()
        }
    }

    /// Payloads up to this size are written with their header in one write.
    static let joinedRecordLimit = 64 << 10

    /// Makes a finished transaction the new committed state. `logged` is false during replay.
    func commit(_ txn: WriteTransaction, _ state: inout WriterState, logged: Bool) throws(EngineError) -> LSN? {
        guard txn.hasChanges || txn.relocated else {
            abandon(txn)
            return nil
        }
        let lsn = txn.lsn.next
        let root = try txn.finish()
        // A transaction larger than the checkpoint threshold is not logged: it commits by
        // checkpoint instead (its pages and a new meta page become durable together), which
        // writes its bytes once instead of twice. Its durability point is the meta write (I2, I3).
        // So does one that only moved pages (compaction): it has nothing to log. Pages it spilled
        // into the file (PageWorkspace.spill) change neither: the log replays the transaction
        // from the durable checkpoint, which does not use them.
        let commitByCheckpoint = logged && (txn.log.overflowed || txn.log.byteCount >= walRecordLimit || !txn.hasChanges)
        if logged && !commitByCheckpoint {
            guard let walFile else { throw EngineError(.readOnly, "the store was opened read-only") }
            let record = WALFormat.frame(payload: txn.log.takePayload(), lsn: lsn, generation: state.walGeneration)
            do {
                try preallocateWAL(walFile, through: state.walEnd + UInt64(record.count), &state)
                // A small record in one write; a large one as header and payload, so its payload
                // is not copied behind the header (the two writes land before the sync).
                if record.stored.count <= Self.joinedRecordLimit {
                    try walFile.write(record.bytes, at: state.walEnd)
                } else {
                    try walFile.write(record.header, at: state.walEnd)
                    try walFile.write(record.stored, at: state.walEnd + UInt64(record.header.count))
                }
            } catch {
                abandon(txn)
                enterFailedState(error, &state)
                throw error
            }
            state.walEnd += UInt64(record.count)
        }
        pager.install(txn.ws.ownedPages)
        let spilled = txn.ws.spilled
        if !spilled.isEmpty {
            // The file holds them (the next checkpoint syncs them instead of writing them); no
            // stale copy of those numbers may stay in the cache.
            pager.drop(spilled)
            state.spilledSinceCheckpoint.formUnion(spilled)
        }
        txn.ws.finishAllocations(at: lsn)
        if !txn.ws.blobsFreed.isEmpty { state.pendingBlobDeletes.append((lsn, txn.ws.blobsFreed)) }
        txn.isOpen = false
        published.withLock { p in
            p.lsn = lsn
            p.catalogRoot = root
        }
        do {
            if commitByCheckpoint {
                try checkpoint(&state)
            } else if logged {
                groupCommit.didAppend(lsn)
                if state.walEnd >= UInt64(options.checkpointWALBytes) {
                    try checkpoint(&state)
                }
            }
        } catch {
            // I11: a checkpoint that failed after its meta page was synced made this commit
            // durable; it stands (the store is failed for the next write, I8).
            guard state.durableMeta.checkpointLSN >= lsn else { throw error }
            groupCommit.markDurable(lsn)
        }
        return lsn
    }

    /// Extends the WAL with zero bytes so that appends up to `end` overwrite allocated space.
    func preallocateWAL(_ walFile: any StorageFile, through end: UInt64, _ state: inout WriterState) throws(EngineError) {
        let step = UInt64(options.walPreallocationBytes)
        guard step > 0, end > state.walAllocated else { return }
        let target = (end + step - 1) / step * step
        let start = max(state.walAllocated, state.walEnd)
        if target > start {
            try walFile.write([UInt8](repeating: 0, count: Int(target - start)), at: start)
        }
        state.walAllocated = target
    }

    /// I8: after a failed write or sync the open store refuses writes until it is reopened.
    func enterFailedState(_ error: EngineError, _ state: inout WriterState) {
        if state.failed == nil { state.failed = error }
        groupCommit.fail(error)
    }

    // MARK: - Checkpoint and close

    /// Writes every change since the last checkpoint into the page file, makes it the durable
    /// checkpoint and starts a new WAL generation. Runs automatically when the WAL grows past
    /// ``EngineOptions/checkpointWALBytes``.
    ///
    /// - Throws: `.readOnly`, `.failed`, `.io`, `.noSpace` (then the store is failed, I8).
    public func checkpoint() throws(EngineError) {
        guard !options.readOnly else { throw EngineError(.readOnly, "the store was opened read-only") }
        try writer.withLock { (state) throws(EngineError) in
            try state.checkWritable()
            try checkpoint(&state)
        }
    }

    /// Checkpoints (unless read-only or failed), then closes the files. Later calls throw `.closed`.
    public func close() throws(EngineError) {
        var firstError: EngineError?
        if !options.readOnly {
            do {
                try writer.withLock { (state) throws(EngineError) in
                    if state.failed == nil && !state.closed { try checkpoint(&state) }
                    state.closed = true
                }
            } catch { firstError = error }
        }
        let wasOpen = published.withLock { p in
            defer { p.closed = true }
            return !p.closed
        }
        if wasOpen {
            walFile?.close()
            pager.file.close()
        }
        if let firstError { throw firstError }
    }

    /// Statistics about the open store.
    public func statistics() -> EngineStatistics {
        let (pageCount, free, walBytes, generation, checkpointLSN) = writer.withLock { s in
            (s.pageFigures.pageCount, s.pageFigures.free, s.walEnd, s.durableMeta.generation, s.durableMeta.checkpointLSN)
        }
        return EngineStatistics(
            pageSize: pageSize, pageCount: pageCount, freePages: free, walBytes: walBytes,
            checkpointGeneration: generation, checkpointLSN: checkpointLSN, lastLSN: lastCommittedLSN)
    }
}

/// Figures about an open store.
public struct EngineStatistics: Sendable, Equatable {
    public var pageSize: Int
    /// Pages in the page file (meta pages included).
    public var pageCount: UInt64
    /// Pages free for reuse (now or once snapshots end).
    public var freePages: Int
    /// Bytes in the WAL.
    public var walBytes: UInt64
    public var checkpointGeneration: Generation
    public var checkpointLSN: LSN
    public var lastLSN: LSN
}
