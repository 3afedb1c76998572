// Recovery: opening a store — creating it, choosing the checkpoint, replaying the WAL.
//
// Invariants enforced here:
//   I3  Of the two meta slots, the valid one (rules M1-M6) with the higher generation wins.
//   I5  WAL records are replayed in LSN order only while rules R1-R7 hold (WALReader); the first
//       failure ends the log and the bytes after it are cut before anything new is appended.
//   I6  Replay writes nothing but that cut: recovering twice from the same files gives the same
//       state, so a crash during recovery is harmless.
//   I7  Blob files that no tree references (written by a transaction that never became durable)
//       are removed after replay.
//   I11 Reopening after a failure (Engine.reopenAfterFailure) keeps exactly the acknowledged
//       commits: WAL records after them are cut, and a meta page whose sync failed is undone
//       (discardCheckpoint).
// A new store is created under a temporary name and renamed into place after it is synced, so a
// crash during creation leaves either no store or a whole one.

import Foundation

enum Recovery {
    static func open(paths: Engine.Paths, options: EngineOptions) throws(EngineError) -> Engine {
        let fs = options.fileSystem
        guard EngineOptions.isValidPageSize(options.pageSize) else {
            throw EngineError(.invalidArgument, "page size \(options.pageSize) is not a power of two from 4096 to 65536")
        }
        if !fs.fileExists(paths.pageFile) {
            guard options.createIfMissing, !options.readOnly else {
                throw EngineError(.notFound, "no store at this path", file: paths.pageFile)
            }
            try create(paths: paths, options: options)
        }
        let file = try fs.openFile(paths.pageFile, create: false, readOnly: options.readOnly)
        do {
            if !options.readOnly { try file.lockExclusive(waitingUpTo: options.lockTimeout) }
            return try recover(file: file, paths: paths, options: options)
        } catch {
            file.close()
            throw error
        }
    }

    /// Writes an empty store: generation-1 meta in slot 1, slot 0 zero (Format/page-file.md).
    static func create(paths: Engine.Paths, options: EngineOptions) throws(EngineError) {
        let fs = options.fileSystem
        let temp = paths.pageFile + "-new"
        let meta = MetaPage(
            pageSize: options.pageSize, generation: Generation(1), checkpointLSN: options.continuing?.lastLSN ?? .zero, walGeneration: 1,
            pageCount: 2, catalogRoot: .none, freeListHead: .none, freeListCount: 0,
            storeID: options.continuing?.storeID ?? options.storeIDForTesting ?? UUID())
        var bytes = [UInt8](repeating: 0, count: 2 * options.pageSize)
        let encoded = meta.encode()
        bytes.replaceSubrange(options.pageSize..<(options.pageSize + encoded.count), with: encoded)
        let file = try fs.openFile(temp, create: true, readOnly: false)
        do {
            try file.truncate(to: 0)
            try file.write(bytes, at: 0)
            try file.sync()
            file.close()
        } catch {
            file.close()
            throw error
        }
        try fs.renameFile(from: temp, to: paths.pageFile)
        try fs.syncDirectory(paths.directory)
    }

    /// Reads the two meta slots and returns the valid one with the higher generation (I3).
    static func chooseMeta(file: any StorageFile) throws(EngineError) -> MetaPage {
        var first = [UInt8](repeating: 0, count: MetaPage.size)
        let n = try withMutableRawBytes(&first) { (raw) throws(EngineError) in try file.read(into: raw, at: 0) }
        var candidates: [MetaPage] = []
        var errors: [EngineError] = []
        if n == MetaPage.size {
            do throws(EngineError) { candidates.append(try withRawBytes(first) { (raw) throws(EngineError) in try MetaPage.decode(raw, slot: 0, file: file.path) }) } catch { errors.append(error) }
        }
        // Slot 1 is one page in; its page size is unknown if slot 0 is damaged, so try each.
        let sizes = candidates.first.map { [$0.pageSize] } ?? EngineOptions.validPageSizes.sorted()
        for size in sizes {
            var second = [UInt8](repeating: 0, count: MetaPage.size)
            let m = try withMutableRawBytes(&second) { (raw) throws(EngineError) in try file.read(into: raw, at: UInt64(size)) }
            guard m == MetaPage.size else { continue }
            do throws(EngineError) {
                let meta = try withRawBytes(second) { (raw) throws(EngineError) in try MetaPage.decode(raw, slot: 1, file: file.path) }
                if meta.pageSize == size { candidates.append(meta); break }
            } catch { errors.append(error) }
        }
        // A slot that fails only M3 has a valid checksum: another DocStore wrote it, no torn write
        // can produce it. Refuse even if the other slot is valid: opening that older checkpoint
        // would roll the store back and later overwrite the newer meta (Format/FORMAT.md § Version rules).
        if let other = errors.first(where: { $0.code == .versionTooNew || $0.code == .versionTooOld }) { throw other }
        if let best = candidates.max(by: { $0.generation < $1.generation }) { return best }
        if errors.contains(where: { $0.code == .corrupt }) {
            throw .corrupt("neither meta page is valid: \(errors.map(\.message).joined(separator: "; "))", file: file.path, page: PageNumber(0))
        }
        throw EngineError(.notADocStore, "the file is not a DocStore store (no meta page has the DOCSTORE magic)", file: file.path)
    }

    static func recover(file: any StorageFile, paths: Engine.Paths, options: EngineOptions) throws(EngineError) -> Engine {
        let fs = options.fileSystem
        var meta = try chooseMeta(file: file)
        if let reopening = options.reopening, meta.generation > reopening.durableMeta, !options.readOnly {
            meta = try discardCheckpoint(meta, reopening, file: file)
        }
        let pager = Pager(file: file, pageSize: meta.pageSize, cachePages: options.cacheBytes / meta.pageSize)
        // The free list is read on first need (WriterState.freeSpace): replay, a write, a
        // checkpoint or verify — not to open, nor to read.

        // The WAL.
        var walFile: (any StorageFile)?
        if fs.fileExists(paths.wal) {
            walFile = try fs.openFile(paths.wal, create: false, readOnly: options.readOnly)
        } else if !options.readOnly {
            walFile = try fs.openFile(paths.wal, create: true, readOnly: false)
        }
        var report: WALReadReport?
        if let walFile {
            report = try WALReader.read(file: walFile, expectedGeneration: meta.walGeneration, expectedStart: meta.checkpointLSN.next)
            // A WAL of a later generation than the chosen meta means a later checkpoint made its
            // meta durable (the WAL restarts only after that sync) and that meta is now damaged:
            // opening the older checkpoint would silently lose data, so refuse (I3, I10).
            if let g = report?.generation, g > meta.walGeneration {
                let newerSlot = (meta.generation.rawValue + 1) % 2
                throw .corrupt(
                    "the newest meta page (slot \(newerSlot)) is damaged: the WAL belongs to a checkpoint after generation \(meta.generation.rawValue); the store needs repair from a backup",
                    file: paths.pageFile, page: PageNumber(newerSlot), offset: newerSlot * UInt64(meta.pageSize))
            }
        }
        let state = WriterState(durableMeta: meta, walGeneration: meta.walGeneration, walEnd: UInt64(WALFormat.headerSize))
        let engine = Engine(paths: paths, options: options, pager: pager, meta: meta, walFile: options.readOnly ? nil : walFile, writerState: state)

        // Replay (I5, I6), up to the last acknowledged commit when reopening after a failure (I11).
        var records = report?.records ?? []
        if let keep = options.reopening?.acknowledged, let first = records.firstIndex(where: { $0.lsn > keep }), !options.readOnly {
            report?.validEnd = records[first].offset
            report?.preallocatedBytes = 0
            records.removeSubrange(first...)
        }
        try engine.writer.withLock { (state) throws(EngineError) in
            for record in records {
                let txn = try engine.beginWrite(&state)
                for op in record.operations { try txn.apply(op) }
                _ = try engine.commit(txn, &state, logged: false)
            }
            guard !options.readOnly, let walFile, let report else { return }
            if report.generation == meta.walGeneration && report.startLSN == meta.checkpointLSN.next {
                // Cut the torn tail, if any, before anything is appended after it. Zero bytes
                // after the last record are preallocated space, not a torn tail: keep them.
                if report.tailBytes > 0 {
                    try walFile.truncate(to: report.validEnd)
                    try walFile.sync()
                }
                state.walEnd = report.validEnd
                state.walAllocated = report.validEnd + report.preallocatedBytes
            } else {
                // No usable log (new, torn header, or an older generation): start this one.
                try walFile.truncate(to: 0)
                try walFile.write(WALFormat.Header(generation: meta.walGeneration, startLSN: meta.checkpointLSN.next).encode(), at: 0)
                state.walEnd = UInt64(WALFormat.headerSize)
                state.walAllocated = state.walEnd
                try walFile.sync()
                try fs.syncDirectory(paths.directory)
            }
        }
        engine.groupCommit.markDurable(engine.lastCommittedLSN)
        engine.published.withLock { $0.acknowledged = $0.lsn }     // what recovery found is durable
        if !options.readOnly { try sweepOrphanBlobs(engine) }
        return engine
    }

    /// I11: the newest meta page was written by a checkpoint whose sync failed, so it may or may
    /// not be on disk, and its commits were never acknowledged. The older slot's checkpoint (the
    /// last durable one) still holds — pages freed after it are not reused until a checkpoint is
    /// durable (I2) — and the WAL it expects was not reset yet. Its slot wins; the newer slot is
    /// zeroed and synced first, so a later crash cannot bring it back.
    static func discardCheckpoint(_ newer: MetaPage, _ reopening: EngineOptions.Reopening, file: any StorageFile) throws(EngineError) -> MetaPage {
        let newerSlot = newer.generation.rawValue % 2, olderSlot = 1 - newerSlot
        var raw = [UInt8](repeating: 0, count: MetaPage.size)
        let n = try withMutableRawBytes(&raw) { (r) throws(EngineError) in try file.read(into: r, at: olderSlot * UInt64(newer.pageSize)) }
        let older: MetaPage
        do throws(EngineError) {
            guard n == MetaPage.size else { throw EngineError.corrupt("the older meta page is short", file: file.path, page: PageNumber(olderSlot)) }
            older = try withRawBytes(raw) { (r) throws(EngineError) in try MetaPage.decode(r, slot: Int(olderSlot), file: file.path) }
        } catch {
            throw EngineError(.corrupt, "the checkpoint whose sync failed cannot be undone: the older meta page is not valid (\(error.message))", file: file.path)
        }
        guard older.generation == reopening.durableMeta, older.checkpointLSN <= reopening.acknowledged else {
            throw EngineError(.corrupt, "the checkpoint whose sync failed cannot be undone: the older meta page is not the last durable checkpoint", file: file.path)
        }
        try file.write([UInt8](repeating: 0, count: MetaPage.size), at: newerSlot * UInt64(newer.pageSize))
        try file.sync()
        return older
    }

    /// Removes blob files no tree references (I7).
    static func sweepOrphanBlobs(_ engine: Engine) throws(EngineError) {
        guard let blobs = engine.blobs else { return }
        let present = try blobs.list()
        guard !present.isEmpty else { return }
        let referenced: Set<BlobID> = try engine.readInternal { (txn) throws(EngineError) in
            guard let info = try txn.info(TreeInfo.blobTreeName) else { return [] }
            var cursor = Cursor(source: engine.pager, root: info.root, blobs: nil, file: engine.pager.path)
            var ids = Set<BlobID>()
            var e = try cursor.first()
            while let entry = e {
                if entry.key.count == 8 { ids.insert(BlobID(entry.key.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) })) }
                e = try cursor.next()
            }
            return ids
        }
        var removed = false
        for id in present where !referenced.contains(id) {
            try blobs.remove(id)
            removed = true
        }
        if removed { try engine.fileSystem.syncDirectory(blobs.directory) }
    }
}

extension Engine {
    /// A snapshot read with typed throws, for the engine's own use.
    func readInternal<R>(_ body: (ReadTransaction) throws(EngineError) -> R) throws(EngineError) -> R {
        let txn = try beginRead()
        defer { txn.close() }
        return try body(txn)
    }
}
