// WriteTransaction: the one writer's view — the committed state plus its own changes, made
// copy-on-write in a PageWorkspace and logged as WAL operations as they happen.
//
// Nothing it does is visible to others until Engine.write commits it: then its pages are sealed
// and installed, its record appended to the WAL, and the new state published in one step. If the
// body throws, or `rollback()` is called, the workspace is discarded whole (including its copy
// of the free space and any blob files it wrote).

/// A read-write transaction. Get one from ``Engine/write(_:)``.
///
/// ```swift
/// try engine.write { txn in
///     try txn.createTreeIfMissing("notes")
///     try txn.put(Array("n1".utf8), Array("hello".utf8), in: "notes")
/// }
/// ```
public final class WriteTransaction: Transaction {
    let ws: PageWorkspace
    var log = WALPayloadBuilder()
    var rolledBack = false
    /// Consecutive puts into one tree, applied in key order before anything reads the tree.
    private var buffer = PutBuffer()
    /// Consecutive deletes from one tree, applied in key order likewise (never both at once).
    private var deletes = DeleteBuffer()
    /// How much memory buffered puts or deletes may take (PutBuffer.bytes, DeleteBuffer.bytes)
    /// before they are applied: each application of unsorted puts to a tree larger than the
    /// spill limit reads back and rewrites pages the one before wrote, so fewer, longer runs are
    /// faster (EngineOptions.putBufferBytes; tests lower it).
    var bufferedPutBytes = 256 << 20

    init(engine: Engine, lsn: LSN, catalogRoot: PageNumber, workspace: PageWorkspace) {
        self.ws = workspace
        super.init(engine: engine, lsn: lsn, catalogRoot: catalogRoot)
    }

    override var workspace: PageWorkspace? { ws }

    /// The LSN this transaction gets if it commits (one writer at a time: nothing can commit
    /// between its start and its commit).
    public var commitLSN: LSN { lsn.next }

    private func setInfo(_ name: String, _ info: TreeInfo?) throws(EngineError) {
        let state = try state(of: name)
        state.info = info
        state.changed = true
    }

    // MARK: - Trees

    /// Creates an empty tree.
    /// - Throws: `.treeExists`, `.invalidArgument` (bad name), `.transactionClosed`.
    public func createTree(named name: String) throws(EngineError) {
        try TreeInfo.validateUserName(name)
        try checkOpen()
        guard try info(name) == nil else { throw EngineError(.treeExists, "a tree named '\(name)' already exists") }
        try apply(.createTree(name))
    }

    /// Creates the tree unless it exists.
    public func createTreeIfMissing(_ name: String) throws(EngineError) {
        try TreeInfo.validateUserName(name)
        try checkOpen()
        if try info(name) == nil { try apply(.createTree(name)) }
    }

    /// Deletes a tree and everything in it.
    /// - Throws: `.treeNotFound`, `.transactionClosed`.
    public func dropTree(named name: String) throws(EngineError) {
        try TreeInfo.validateUserName(name)
        _ = try requireTree(name)
        try apply(.dropTree(name))
    }

    // MARK: - Entries

    /// Stores `value` under `key`, replacing any value there.
    ///
    /// Values of any size up to 4 GiB - 1 are accepted: small ones sit in the leaf, larger ones
    /// in overflow pages (LZ4-compressed when that shrinks them), and those of at least
    /// ``EngineOptions/blobThreshold`` bytes in external blob files.
    ///
    /// Consecutive puts into one tree are buffered and applied to the tree in key order when the
    /// transaction next reads, deletes, touches another tree or commits, or when they take
    /// ``EngineOptions/putBufferBytes`` — a bulk load in random order runs as fast as a sorted
    /// one. Reads in the transaction always see every put made before them. An error applying them (a damaged page) is thrown by that later call.
    /// - Throws: `.treeNotFound`, `.keyTooLarge`, `.valueTooLarge`, `.transactionClosed`, `.io`;
    ///   `.corrupt` from a page the buffered puts reach, here or at the later call.
    public func put(_ value: [UInt8], for key: [UInt8], in tree: String) throws(EngineError) {
        _ = try requireTree(tree)
        guard key.count <= ws.limits.maxKeySize else {
            throw EngineError(.keyTooLarge, "a key of \(key.count) bytes is longer than the \(ws.limits.maxKeySize) bytes allowed with \(ws.pageSize)-byte pages")
        }
        guard value.count < Int(UInt32.max) else {
            throw EngineError(.valueTooLarge, "a value of \(value.count) bytes is longer than 4 GiB - 1")
        }
        if value.count >= ws.limits.blobThreshold, engine.blobs != nil,
           !BTree.isInline(keyLength: key.count, valueLength: value.count, ws.limits) {
            let id = try ws.writeBlob(value)
            try apply(.putBlob(tree: tree, key: key, blob: id, length: value.count))
        } else {
            // Buffered (PutBuffer): applied in key order before the next read, delete, other
            // operation or the commit; logged now, in call order.
            try checkOpen()
            if !deletes.isEmpty || buffer.tree.map({ $0 != tree }) == true { try applyBuffered() }
            buffer.append(key, value, tree: tree)
            log.append(.put(tree: tree, key: key, value: value))
            // Applied in runs, so that a long series of puts holds neither all its entries nor
            // all its pages (the spill runs after each run).
            if buffer.bytes >= bufferedPutBytes { try applyBuffered() }
        }
    }

    /// Stores every entry of `entries` in `tree`, as putting them one by one in order would (for
    /// a key given twice, the later value wins), applied to the tree in key order at once — the
    /// bulk form of ``put(_:for:in:)`` for a batch that holds its entries already: it skips the
    /// per-put bookkeeping, and the sort when the entries come in ascending order.
    /// - Throws: as ``put(_:for:in:)``; nothing is put when a key or value is too large.
    public func put(entries: [(key: [UInt8], value: [UInt8])], in tree: String) throws(EngineError) {
        var packed = PutEntries()
        for (key, value) in entries { packed.append(key: key, value: value) }
        try put(entries: packed, in: tree)
    }

    /// ``put(entries:in:)`` for entries packed in a ``PutEntries``: what a save of many objects
    /// builds, so that its puts are not an array or two each.
    public func put(entries: PutEntries, in tree: String) throws(EngineError) {
        _ = try requireTree(tree)
        try checkOpen()
        var external = false
        if entries.hasOversizedEntry {
            throw EngineError(.valueTooLarge, "a value of 4 GiB or more cannot be stored")
        }
        for i in 0..<entries.count {
            let (keyCount, valueCount) = entries.sizes(i)
            guard keyCount <= ws.limits.maxKeySize else {
                throw EngineError(.keyTooLarge, "a key of \(keyCount) bytes is longer than the \(ws.limits.maxKeySize) bytes allowed with \(ws.pageSize)-byte pages")
            }
            if valueCount >= ws.limits.blobThreshold, engine.blobs != nil { external = true }
        }
        if external {
            // A value bound for a blob file takes the one-by-one path (it is logged as a blob).
            for i in 0..<entries.count {
                try entries.withEntry(i) { (key, value) throws(EngineError) in try put(Array(value), for: Array(key), in: tree) }
            }
            return
        }
        try applyBuffered()
        guard !entries.isEmpty, var info = try info(tree) else { return }
        let run = PackedPutRun(entries: entries, order: entries.keyOrder())
        let (root, added) = try BTree.putSorted(run, root: info.root, in: ws)
        info.root = root
        info.count += UInt64(added)
        try setInfo(tree, info)
        log.appendPuts(tree: tree, run, byteCount: entries.byteCount)
        try spillIfNeeded()
    }

    /// Tells the transaction that every entry of `batches` is about to be put. When logging
    /// them cannot fit in one WAL record, the transaction stops building its record now — it
    /// will commit by checkpoint, as it would once its log passed the limit — instead of copying
    /// entries into a log it would then drop. Values bound for blob files are not counted
    /// (their log entry is a reference). Nothing else changes; the puts are made as usual.
    public func expectPuts(_ batches: [PutEntries]) {
        guard !log.overflowed else { return }
        let external = engine.blobs != nil ? ws.limits.blobThreshold : Int.max
        var bytes = 0
        for entries in batches {
            if entries.longestValue < external {
                bytes += entries.byteCount
                continue
            }
            for i in 0..<entries.count {
                let (keyCount, valueCount) = entries.sizes(i)
                bytes += keyCount + (valueCount < external ? valueCount : 0)
            }
        }
        log.expect(bytes)
    }

    /// Removes `key`; returns whether it was there.
    ///
    /// Consecutive deletes from one tree are buffered and applied to the tree in key order when
    /// the transaction next reads, puts, touches another tree or commits, or when
    /// ``EngineOptions/putBufferBytes`` of them are buffered — each only after a lookup that
    /// says whether the key is there, so the result is known at once. Reads in the transaction
    /// always see every delete made before them.
    /// - Throws: `.treeNotFound`, `.transactionClosed`; `.corrupt` or `.io` from a page the
    ///   lookup or the buffered deletes reach (or a spill), here or at the later call — after
    ///   which the transaction cannot commit.
    @discardableResult
    public func delete(_ key: [UInt8], in tree: String) throws(EngineError) -> Bool {
        _ = try requireTree(tree)
        try checkOpen()
        // Buffered puts, deletes from another tree, and a buffered delete that may be of this
        // key go in first: then a look, changing nothing, says whether the key is there, and
        // only a key that is there is buffered and logged (D1).
        if !buffer.isEmpty || deletes.tree.map({ $0 != tree }) == true || deletes.mayContain(key) { try applyBuffered() }
        let root = try requireTree(tree).root
        let found = try withRawBytes(key) { (k) throws(EngineError) in try BTree.find(k, root: root, in: ws)?.found ?? false }
        guard found else {
            try spillIfNeeded()   // the look may have read spilled pages back
            return false
        }
        deletes.append(key, tree: tree)
        log.append(.delete(tree: tree, key: key))
        if deletes.bytes >= bufferedPutBytes { try applyBuffered() }
        try spillIfNeeded()
        return true
    }

    /// Removes every key of `keys` that is in `tree` (any order; each logged as a delete when it
    /// was there), in key order and mostly without a descent per key (BTree.deleteSorted).
    /// Returns how many were there.
    /// - Throws: as ``delete(_:in:)``.
    @discardableResult
    public func delete(keys: [[UInt8]], in tree: String) throws(EngineError) -> Int {
        try delete(DeleteKeys(keys), in: tree)
    }

    /// ``delete(keys:in:)`` for keys packed in a ``DeleteKeys``: what a batch delete builds, so
    /// that its keys are not an array each.
    /// - Throws: `.treeNotFound`, `.transactionClosed`; `.keyTooLarge` (and nothing is deleted)
    ///   for a key of 4 GiB or more.
    @discardableResult
    public func delete(_ keys: DeleteKeys, in tree: String) throws(EngineError) -> Int {
        _ = try requireTree(tree)
        try checkOpen()
        if keys.hasOversizedKey { throw EngineError(.keyTooLarge, "a key of 4 GiB or more cannot be in a tree") }
        try applyBuffered()
        guard var info = try info(tree), !keys.isEmpty else { return 0 }
        // Sorted as PutBuffer sorts its puts, once each.
        let (root, removed) = try BTree.deleteSorted(keys, order: keys.keyOrder(), root: info.root, in: ws)
        guard !removed.isEmpty else { return 0 }
        info.root = root
        info.count -= UInt64(removed.count)
        try setInfo(tree, info)
        var byteCount = 0
        for i in removed { byteCount += keys.withKey(i) { $0.count } + 2 }
        log.appendDeletes(tree: tree, keys, removed, byteCount: byteCount)
        try spillIfNeeded()
        return removed.count
    }

    /// Abandons every change; later calls throw `.transactionClosed`.
    public func rollback() {
        guard isOpen else { return }
        isOpen = false
        rolledBack = true
    }

    /// Whether the transaction changed anything.
    public var hasChanges: Bool { !log.isEmpty }

    /// Pages were moved (compaction): the state is the same, its pages are elsewhere. Such a
    /// transaction commits by checkpoint, having nothing to log (Engine+Compact.swift).
    var relocated = false

    /// Moves every page at or beyond `boundary` (of every tree and the catalog) toward the
    /// front, at most `budget` pages; returns how many moved.
    /// With `merge`, neighbouring leaves that fit in one page are merged on the way.
    func relocatePages(beyond boundary: UInt64, merge: Bool, budget: Int) throws(EngineError) -> Int {
        try checkOpen()
        try applyBuffered()
        var left = budget
        var names: [String] = []
        var cursor = Cursor(source: ws, root: catalogRoot, blobs: nil, file: engine.pager.path)
        var entry = try cursor.first()
        while let e = entry {
            if let name = String(validating: e.key, as: UTF8.self) { names.append(name) }
            entry = try cursor.next()
        }
        for name in names where left > 0 {
            guard var info = try info(name) else { continue }
            let root = try BTree.relocate(root: info.root, beyond: boundary, merge: merge, budget: &left, in: ws)
            if root != info.root {
                info.root = root
                try setInfo(name, info)
            }
        }
        if left > 0 { catalogRoot = try BTree.relocate(root: catalogRoot, beyond: boundary, merge: merge, budget: &left, in: ws) }
        let moved = budget - left
        if moved > 0 { relocated = true }
        return moved
    }

    // MARK: - Applying operations (also used by recovery to replay the WAL)

    override func settle() throws(EngineError) {
        try applyBuffered()
        // Reads bring spilled pages back into memory too: a scan of a tree this transaction
        // built must not gather it all again.
        try spillIfNeeded()
    }

    /// An error applying buffered puts or deletes: they are logged already and may be half
    /// applied (pages copied, their originals freed), so the transaction must not commit even
    /// when the body catches the error and goes on (Engine.write throws it instead of
    /// committing), and a later call that applies buffered operations throws it again.
    private(set) var applyFailure: EngineError?

    /// Applies the buffered puts or deletes, in key order (PutBuffer, DeleteBuffer). A failure
    /// stops the transaction for good (`applyFailure`).
    private func applyBuffered() throws(EngineError) {
        if let applyFailure { throw applyFailure }
        do throws(EngineError) {
            try applyBufferedRun()
        } catch {
            applyFailure = error
            throw error
        }
    }

    private func applyBufferedRun() throws(EngineError) {
        if let (tree, keys) = deletes.drain() {
            // Logged as they were made (D3); every key is there (D1).
            guard var info = try info(tree) else { throw .corrupt("deleting from a missing tree '\(tree)'") }
            let (root, removed) = try BTree.deleteSorted(keys, order: keys.keyOrder(), root: info.root, in: ws)
            guard removed.count == keys.count else {
                throw .corrupt("\(keys.count - removed.count) of \(keys.count) keys found in tree '\(tree)' were gone when deleted")
            }
            info.root = root
            info.count -= UInt64(removed.count)
            try setInfo(tree, info)
            try spillIfNeeded()
        }
        guard let (tree, entries) = buffer.drain() else { return }
        guard var info = try info(tree) else { throw .corrupt("writing to a missing tree '\(tree)'") }
        let (root, added) = try BTree.putSorted(ArrayPutRun(entries: entries), root: info.root, in: ws)
        info.root = root
        info.count += UInt64(added)
        try setInfo(tree, info)
        try spillIfNeeded()
    }

    /// Writes owned pages out when the transaction holds more than it may (PageWorkspace.spill).
    /// Called only after an operation is complete: no B+tree code holds a page then.
    private func spillIfNeeded() throws(EngineError) {
        if ws.shouldSpill { try ws.spill() }
    }

    /// Performs one operation on the workspace and logs it (buffered puts first, so that
    /// operations take effect in call order).
    func apply(_ op: WALOperation) throws(EngineError) {
        try checkOpen()
        try applyBuffered()
        switch op {
        case let .createTree(name):
            try setInfo(name, TreeInfo(root: .none, count: 0))
        case let .dropTree(name):
            guard let info = try info(name) else { throw .corrupt("dropping a missing tree '\(name)'") }
            try BTree.freeAll(root: info.root, in: ws)
            try setInfo(name, nil)
        case let .put(tree, key, value):
            try put(.bytes(value), key: key, tree: tree)
        case let .putBlob(tree, key, blob, length):
            try put(.blob(blob, length: length), key: key, tree: tree)
            try registerBlob(blob, length: length)
        case let .delete(tree, key):
            guard var info = try info(tree) else { throw .corrupt("deleting from a missing tree '\(tree)'") }
            let (root, removed) = try BTree.delete(key, root: info.root, in: ws)
            info.root = root
            if removed { info.count -= 1 }
            try setInfo(tree, info)
        }
        log.append(op)
    }

    private func put(_ value: ValueToStore, key: [UInt8], tree: String) throws(EngineError) {
        guard var info = try info(tree) else { throw .corrupt("writing to a missing tree '\(tree)'") }
        let (root, added) = try BTree.put(key, value, root: info.root, in: ws)
        info.root = root
        if added { info.count += 1 }
        try setInfo(tree, info)
    }

    private func registerBlob(_ blob: BlobID, length: Int) throws(EngineError) {
        var info = try info(TreeInfo.blobTreeName) ?? TreeInfo(root: .none, count: 0)
        var v = [UInt8]()
        v.appendU64(UInt64(length))
        let (root, added) = try BTree.put(blob.treeKey, .bytes(v), root: info.root, in: ws)
        info.root = root
        if added { info.count += 1 }
        try setInfo(TreeInfo.blobTreeName, info)
    }

    /// Before commit: unregisters freed blobs and writes changed tree roots into the catalog.
    /// Returns the new catalog root.
    func finish() throws(EngineError) -> PageNumber {
        try applyBuffered()
        let freedBlobs = ws.blobsFreed
        if !freedBlobs.isEmpty, var info = try info(TreeInfo.blobTreeName) {
            for id in freedBlobs {
                let (root, removed) = try BTree.delete(id.treeKey, root: info.root, in: ws)
                info.root = root
                if removed { info.count -= 1 }
            }
            try setInfo(TreeInfo.blobTreeName, info)
        }
        var root = catalogRoot
        for (name, state) in trees.sorted(by: { $0.key < $1.key }) where state.changed {
            let key = Array(name.utf8)
            if let info = state.info {
                root = try BTree.put(key, .bytes(info.encode()), root: root, in: ws).root
            } else {
                root = try BTree.delete(key, root: root, in: ws).root
            }
        }
        catalogRoot = root
        return root
    }
}
