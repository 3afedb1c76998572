// Transaction: what read and write transactions share — lookups, cursors and counts over the
// state they see. A ReadTransaction sees the snapshot taken when it began; a WriteTransaction sees
// that state plus its own changes.
//
// Lifecycle (Engine.swift draws the whole state diagram):
//   open --commit (Engine.write returns)--> committed
//   open --rollback / body throws---------> rolled back
//   open --close (ReadTransaction)--------> closed
// Any call on a transaction that is no longer open throws `.transactionClosed`.

/// What a transaction knows of one tree: its catalog entry (nil: no such tree) and whether the
/// transaction changed it. A class, so that the hot path updates it without re-hashing the name.
final class TreeState {
    var info: TreeInfo?
    var changed = false
    init(info: TreeInfo?) { self.info = info }
}

/// The read operations of a transaction.
///
/// ## Topics
/// - ``get(_:in:)``
/// - ``cursor(in:)``
/// - ``count(in:)``
/// - ``treeNames()``
public class Transaction {
    let engine: Engine
    /// The last committed transaction this transaction's state includes.
    public let lsn: LSN
    var catalogRoot: PageNumber
    /// What this transaction knows of each tree it touched; `lastTree` short-cuts the lookup
    /// when consecutive calls name the same tree (the common case in loops). A write
    /// transaction keeps every tree in `trees` (its commit walks them); a read transaction keeps
    /// its two most recent ones only in `lastTree` and `previousTree` — most reads touch one or
    /// two trees, and hashing each name into a new dictionary was a tenth of a fetch by an
    /// indexed value.
    var trees: [String: TreeState] = [:]
    private var lastTree: (name: String, state: TreeState)?
    private var previousTree: (name: String, state: TreeState)?
    var isOpen = true

    init(engine: Engine, lsn: LSN, catalogRoot: PageNumber) {
        self.engine = engine
        self.lsn = lsn
        self.catalogRoot = catalogRoot
    }

    /// The write workspace (nil for a read transaction).
    var workspace: PageWorkspace? { nil }

    func checkOpen() throws(EngineError) {
        guard isOpen else { throw EngineError(.transactionClosed, "the transaction has already ended") }
    }

    /// Brings the trees up to date before a read: a write transaction applies its buffered puts
    /// (PutBuffer). Nothing to do for a read transaction.
    func settle() throws(EngineError) {}

    /// The catalog entry of `name`, or nil when no such tree exists.
    func info(_ name: String) throws(EngineError) -> TreeInfo? {
        try state(of: name).info
    }

    /// The transaction's record of tree `name`, loaded from the catalog on first use.
    func state(of name: String) throws(EngineError) -> TreeState {
        if let last = lastTree, last.name == name { return last.state }
        if let previous = previousTree, previous.name == name {
            previousTree = lastTree
            lastTree = previous
            return previous.state
        }
        if !trees.isEmpty, let known = trees[name] {
            remember(name, known, isNew: false)
            return known
        }
        let info: TreeInfo?
        if workspace == nil, let cached = engine.catalogCache.entry(name, lsn: lsn, root: catalogRoot) {
            info = cached
        } else {
            info = try catalogEntry(name)
            if workspace == nil { engine.catalogCache.remember(name, info, lsn: lsn, root: catalogRoot) }
        }
        let state = TreeState(info: info)
        remember(name, state, isNew: true)
        return state
    }

    /// Makes `name` the most recent tree; a new one goes into `trees` (a write transaction's
    /// always, a read transaction's once two more recent ones hold the short-cuts).
    private func remember(_ name: String, _ state: TreeState, isNew: Bool) {
        if workspace != nil {
            if isNew { trees[name] = state }
        } else if let previous = previousTree, let last = lastTree, last.name != name {
            // A read transaction's third tree: the oldest short-cut moves into the dictionary.
            trees[previous.name] = previous.state
        }
        if let last = lastTree, last.name != name { previousTree = last }
        lastTree = (name, state)
    }

    /// Looks `name` up in the catalog tree.
    private func catalogEntry(_ name: String) throws(EngineError) -> TreeInfo? {
        let key = Array(name.utf8)
        let found: (leaf: Page, index: Int, found: Bool)?
        if let ws = workspace {
            found = try withRawBytes(key) { (k) throws(EngineError) in try BTree.find(k, root: catalogRoot, in: ws) }
        } else {
            found = try withRawBytes(key) { (k) throws(EngineError) in try BTree.find(k, root: catalogRoot, in: engine.pager) }
        }
        var result: TreeInfo?
        if let found, found.found {
            let value = try readValue(found.leaf, found.index)
            result = try TreeInfo.decode(value, name: name, file: engine.pager.path)
        }
        return result
    }

    func requireTree(_ name: String) throws(EngineError) -> TreeInfo {
        try checkOpen()
        guard let info = try info(name) else {
            throw EngineError(.treeNotFound, "no tree named '\(name)'; create it with createTree(named:)")
        }
        return info
    }

    func readValue(_ leaf: Page, _ index: Int) throws(EngineError) -> [UInt8] {
        if let ws = workspace {
            return try BTree.value(of: leaf, at: index, in: ws, blobs: engine.blobs, file: engine.pager.path)
        }
        return try BTree.value(of: leaf, at: index, in: engine.pager, blobs: engine.blobs, file: engine.pager.path)
    }

    /// The value stored under `key` in `tree`, or nil.
    ///
    /// - Throws: `.treeNotFound`, `.transactionClosed`, `.corrupt` (a damaged page), `.io`.
    public func get(_ key: [UInt8], in tree: String) throws(EngineError) -> [UInt8]? {
        try settle()
        let root = try requireTree(tree).root
        let found: (leaf: Page, index: Int, found: Bool)?
        if let ws = workspace {
            found = try withRawBytes(key) { (k) throws(EngineError) in try BTree.find(k, root: root, in: ws) }
        } else {
            found = try withRawBytes(key) { (k) throws(EngineError) in try BTree.find(k, root: root, in: engine.pager) }
        }
        guard let found, found.found else { return nil }
        return try readValue(found.leaf, found.index)
    }

    /// Whether `tree` holds `key` (reads no value).
    public func contains(_ key: [UInt8], in tree: String) throws(EngineError) -> Bool {
        try settle()
        let root = try requireTree(tree).root
        if let ws = workspace {
            return try withRawBytes(key) { (k) throws(EngineError) in try BTree.find(k, root: root, in: ws)?.found ?? false }
        }
        return try withRawBytes(key) { (k) throws(EngineError) in try BTree.find(k, root: root, in: engine.pager)?.found ?? false }
    }

    /// The number of entries in `tree`.
    public func count(in tree: String) throws(EngineError) -> Int {
        try settle()
        return Int(try requireTree(tree).count)
    }

    /// Whether a tree with this name exists.
    public func treeExists(_ name: String) throws(EngineError) -> Bool {
        try checkOpen()
        try settle()
        return try info(name) != nil
    }

    /// A cursor over `tree`, positioned nowhere: call `first()`, `last()` or `seek(to:)`.
    public func cursor(in tree: String) throws(EngineError) -> Cursor {
        try settle()
        let root = try requireTree(tree).root
        return Cursor(source: workspace.map { $0 as any PageSource } ?? engine.pager, root: root, blobs: engine.blobs, file: engine.pager.path)
    }

    /// Every entry of `tree` with `range.lowerBound <= key < range.upperBound` (or all), in order.
    public func entries(in tree: String, from start: [UInt8]? = nil, to end: [UInt8]? = nil, reverse: Bool = false) throws(EngineError) -> [(key: [UInt8], value: [UInt8])] {
        var cursor = try self.cursor(in: tree)
        var out: [(key: [UInt8], value: [UInt8])] = []
        func inRange(_ k: [UInt8]) -> Bool {
            if let start, k.lexicographicallyPrecedes(start) { return false }
            if let end, !k.lexicographicallyPrecedes(end) { return false }
            return true
        }
        if !reverse {
            var e: (key: [UInt8], value: [UInt8])?
            if let start { e = try cursor.seek(to: start) } else { e = try cursor.first() }
            while let entry = e, inRange(entry.key) { out.append(entry); e = try cursor.next() }
        } else {
            var e = try cursor.last()
            if let end {
                e = try cursor.seek(to: end)
                e = e == nil ? try cursor.last() : try cursor.previous()
            }
            while let entry = e, inRange(entry.key) { out.append(entry); e = try cursor.previous() }
        }
        return out
    }

    /// The names of the user's trees, in order.
    public func treeNames() throws(EngineError) -> [String] {
        try checkOpen()
        try settle()
        var cursor = Cursor(source: workspace.map { $0 as any PageSource } ?? engine.pager, root: catalogRoot, blobs: nil, file: engine.pager.path)
        var names: [String] = []
        var k = try cursor.first()
        while let entry = k {
            if let name = String(validating: entry.key, as: UTF8.self), !name.hasPrefix("$") { names.append(name) }
            k = try cursor.next()
        }
        return names
    }
}

/// A consistent, read-only view of the store as of one commit (a snapshot, MVCC).
///
/// It never blocks the writer and never sees later commits. End it with ``close()`` (or let
/// ``Engine/read(_:)`` do it): until then the pages it can reach are not reused (I9).
public final class ReadTransaction: Transaction {
    /// Ends the snapshot. Later calls throw `.transactionClosed`. Closing twice is harmless.
    public func close() {
        guard isOpen else { return }
        isOpen = false
        engine.endSnapshot(lsn)
    }

    deinit { if isOpen { engine.endSnapshot(lsn) } }
}
