// Cursor: ordered iteration over one tree of one snapshot, in both directions.
//
// The cursor keeps the path from the root to its leaf (each branch and the child position taken)
// and moves across leaves through that path, so it needs no sibling links (copy-on-write pages
// cannot keep sibling links current). It reads through its transaction's page source; a cursor of
// a write transaction must not be used after that transaction changes the same tree.

internal import CPrefetch

/// A position in a tree's ordered keys.
///
/// ```swift
/// try engine.read { txn in
///     var cursor = try txn.cursor(in: "notes")
///     var entry = try cursor.seek(to: [0x10])        // first key >= 0x10
///     while let (key, value) = entry { print(key, value); entry = try cursor.next() }
/// }
/// ```
public struct Cursor {
    let source: any PageSource
    let root: PageNumber
    let blobs: BlobStore?
    let file: String
    private var path: [(page: Page, position: Int)] = []
    private var leaf: Page? {
        didSet { leafReference = leaf.map { Unmanaged.passUnretained($0) } }
    }
    /// `leaf` unretained, for the per-entry reads (`withCurrent`, `withValue(forKey:)`): read
    /// through `_withUnsafeGuaranteedRef`, the leaf is used without a retain and a release
    /// around each entry — two fifths of an index walk's time. Safe because `leaf` holds it
    /// strongly and cannot change while a read's body runs (the cursor is borrowed `inout`).
    private var leafReference: Unmanaged<Page>?
    private var index = 0
    /// Leaves this cursor stepped onto from a neighbour since it was last placed (`first`,
    /// `last`, `seek`, `move`: one cursor serves many short walks); past `passingAfter` (2 MiB of 4 KiB
    /// pages) it reads further ones in passing (`PageSource.pageInPassing`): a scan of a large
    /// tree leaves the page cache about as it found it, while the index ranges of repeated
    /// queries (a count walks a few hundred leaves) stay cached.
    private var leavesWalked = 0
    static let passingAfter = 512
    /// R1: leaves read ahead, a run of consecutive pages at once, for a long walk forward (in
    /// passing, past `passingAfter` leaves). Stepping from a leaf to the next child of the same
    /// parent, the cursor reads the following children whose page numbers follow one another
    /// (up to `readAheadPages`) with one call (`PageSource.readAhead`) and takes each from the
    /// run as it reaches it, checked then. Only this cursor uses the run (it belongs to this
    /// cursor's snapshot), and no page made from it enters the shared cache.
    private var ahead: ReadAheadRun?
    static let readAheadPages = 16

    init(source: any PageSource, root: PageNumber, blobs: BlobStore?, file: String) {
        self.source = source
        self.root = root
        self.blobs = blobs
        self.file = file
    }

    /// The entry at the cursor, or nil when it is before the first or after the last key.
    public func current() throws(EngineError) -> (key: [UInt8], value: [UInt8])? {
        guard let leaf, index >= 0, index < leaf.count else { return nil }
        return (Array(leaf.leafKey(index)), try BTree.value(of: leaf, at: index, in: source, blobs: blobs, file: file))
    }

    /// The key at the cursor without reading the value.
    public var key: [UInt8]? {
        guard let leaf, index >= 0, index < leaf.count else { return nil }
        return Array(leaf.leafKey(index))
    }

    /// Moves to the first entry.
    @discardableResult
    public mutating func first() throws(EngineError) -> (key: [UInt8], value: [UInt8])? {
        leavesWalked = 0
        try descend(from: root, toLast: false)
        return try skipEmpty(forward: true)
    }

    /// Moves to the last entry.
    @discardableResult
    public mutating func last() throws(EngineError) -> (key: [UInt8], value: [UInt8])? {
        leavesWalked = 0
        try descend(from: root, toLast: true)
        return try skipEmpty(forward: false)
    }

    /// Moves to the first entry whose key is >= `key`.
    @discardableResult
    public mutating func seek(to key: [UInt8]) throws(EngineError) -> (key: [UInt8], value: [UInt8])? {
        guard try move(to: key) else { return nil }
        return try current()
    }

    /// Moves to the first entry whose key is >= `key` without reading it; whether there is one.
    /// With `withCurrent` and `advance`, a scan visits entries in place, copying nothing.
    public mutating func move(to key: [UInt8]) throws(EngineError) -> Bool {
        leavesWalked = 0
        try withRawBytes(key) { (k) throws(EngineError) in try descendFromRoot(to: k) }
        return try settle(forward: true)
    }

    /// `move(to:)` for keys visited in ascending order: a `key` within the leaf the cursor is on
    /// is a binary search in that leaf, and one past it a descent from the lowest branch the two
    /// share, not from the root (a batch delete reads each deleted object's links this way).
    public mutating func move(forwardTo key: [UInt8]) throws(EngineError) -> Bool {
        leavesWalked = 0
        try withRawBytes(key) { (k) throws(EngineError) in
            guard let l = leaf, l.count > 0, compareKeys(l.leafKey(0), k) <= 0 else { return try descendFromRoot(to: k) }
            if compareKeys(l.leafKey(l.count - 1), k) >= 0 {
                index = BTree.leafSearch(l, k).0
            } else {
                try descendForward(to: k)
            }
        }
        return try settle(forward: true)
    }

    /// Places the cursor where `k` is or would be, descending from the root.
    private mutating func descendFromRoot(to k: UnsafeRawBufferPointer) throws(EngineError) {
        path.removeAll(keepingCapacity: true)
        leaf = nil
        guard root != .none else { return }
        try descend(from: try source.page(root), to: k)
    }

    /// Places the cursor where `k` is or would be, for a `k` at or after the first key of the
    /// leaf it is on: climbs its path only to the nearest branch whose child holds `k`, and
    /// descends from that child (ascending lookups far apart cost a descent from the branch
    /// they share, not from the root).
    private mutating func descendForward(to k: UnsafeRawBufferPointer) throws(EngineError) {
        var level = path.count - 1
        while level >= 0 {
            let (page, position) = path[level]
            // Child `position` holds the keys below separator `position` (the last child, all).
            if position < page.count && compareKeys(page.branchKey(position), k) > 0 { break }
            level -= 1
        }
        guard level >= 0 else { return try descendFromRoot(to: k) }
        let child = path[level].page.child(at: path[level].position)
        path.removeSubrange((level + 1)...)
        leaf = nil
        try descend(from: try source.page(child), to: k)
    }

    /// Descends from `start` (a page below the path's last branch) to the leaf position of `k`.
    private mutating func descend(from start: Page, to k: UnsafeRawBufferPointer) throws(EngineError) {
        var page = start
        while page.type == .branch {
            guard path.count < BTree.maxDepth else { throw .corrupt("tree deeper than \(BTree.maxDepth)", file: file, page: page.number) }
            let pos = page.childPosition(for: k)
            path.append((page, pos))
            page = try source.page(page.child(at: pos))
        }
        guard page.type == .leaf else { throw .corrupt("tree reaches a non-node page", file: file, page: page.number) }
        leaf = page
        index = BTree.leafSearch(page, k, parent: path.last.map { ($0.page, $0.position) }).0
    }

    /// Moves to the next entry without reading it; whether there is one.
    public mutating func advance() throws(EngineError) -> Bool {
        guard leaf != nil else { return false }
        index += 1
        return try settle(forward: true)
    }

    /// Calls `body` with the key and the value at the cursor, in place in their page (a value
    /// stored outside its leaf — overflow pages, a blob — is read first); nil when the cursor
    /// is at no entry. The bytes are valid only inside `body`. (Mutating only so that a call
    /// borrows the cursor in place rather than copying it.)
    public mutating func withCurrent<R>(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> R) throws -> R? {
        guard let leafReference else { return nil }
        let index = self.index
        return try leafReference._withUnsafeGuaranteedRef { (leaf) throws -> R? in
            guard index >= 0, index < leaf.count else { return nil }
            let key = leaf.leafKey(index)
            if let inline = BTree.inlineValue(of: leaf, at: index) { return try body(key, inline) }
            return try BTree.value(of: leaf, at: index, in: source, blobs: blobs, file: file).withUnsafeBytes { try body(key, $0) }
        }
    }

    /// `withCurrent` for a body that returns nothing: whether the cursor is at an entry (and
    /// `body` ran). Not generic, for the same reason as `visitValue(forKey:_:)`.
    public mutating func visitCurrent(_ body: (_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try withCurrent(body) != nil
    }

    /// Calls `body` with the value stored under exactly `key`, in place in its page when it is
    /// stored there (no copy); nil when there is none. The bytes are valid only inside `body`.
    /// Looking up ascending keys one after another costs little: a key within the leaf the
    /// cursor is on is a binary search in that leaf (the entry after the last one found, a
    /// comparison), and a key past it a descent from the lowest branch the two share, not from
    /// the root.
    public mutating func withValue<R>(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> R) throws -> R? {
        let position = try withRawBytes(key) { (k) throws(EngineError) -> Int? in
            let current = index
            let step: LookupStep = leafReference?._withUnsafeGuaranteedRef { l in
                guard l.count > 0, compareKeys(l.leafKey(0), k) <= 0 else { return .fromRoot }
                let next = current + 1
                if next > 0, next < l.count, compareKeys(l.leafKey(next), k) == 0 {
                    let ahead = next + Self.cellsAhead
                    if ahead < l.count { Self.prefetchCell(ahead, of: l) }
                    return .next(next, nextLeafCell: ahead < l.count ? nil : ahead - l.count)
                }
                if compareKeys(l.leafKey(l.count - 1), k) >= 0 {
                    let (at, found) = BTree.leafSearch(l, k)
                    return .searched(at, found: found)
                }
                return .forward
            } ?? .fromRoot
            switch step {
            case .next(let next, let nextLeafCell):
                index = next
                if let nextLeafCell { prefetchNextLeaf(cell: nextLeafCell) }
                return next
            case .searched(let at, let found):
                index = at
                return found ? at : nil
            case .forward:
                try descendForward(to: k)
            case .fromRoot:
                try descendFromRoot(to: k)
            }
            guard let l = leaf, index < l.count, compareKeys(l.leafKey(index), k) == 0 else { return nil }
            return index
        }
        guard let leafReference, let at = position else { return nil }
        return try leafReference._withUnsafeGuaranteedRef { (l) throws -> R? in
            if let inline = BTree.inlineValue(of: l, at: at) { return try body(inline) }
            return try BTree.value(of: l, at: at, in: source, blobs: blobs, file: file).withUnsafeBytes(body)
        }
    }

    /// Where `withValue(forKey:)` finds a key, judged on the current leaf (read unretained:
    /// `leaf` holds it, and nothing moves the cursor until the judgement is made): the entry
    /// after the current one (and the cell of the next leaf to prefetch, when the one
    /// `cellsAhead` of it lies there), a
    /// binary search's position, or past the leaf (a descent from the shared branch, or from
    /// the root).
    private enum LookupStep {
        case next(Int, nextLeafCell: Int?)
        case searched(Int, found: Bool)
        case forward
        case fromRoot
    }

    /// `withValue(forKey:_:)` for a body that returns nothing: whether `key` was found. Not
    /// generic, so a caller in another module (a query reading one record per candidate) runs
    /// this module's specialized code instead of generic code through value witnesses.
    public mutating func visitValue(forKey key: [UInt8], _ body: (UnsafeRawBufferPointer) throws -> Void) throws -> Bool {
        try withValue(forKey: key, body) != nil
    }

    /// Starts loading the first `prefetchedBytes` of leaf cell `i` (its key and the start of its
    /// value) into the cache. A lookup of the entry after the last one found is a run of
    /// consecutive keys (a count over an index on creation dates reads its notes in key order):
    /// the lookups after it most likely read the cells that follow, and loading one while the
    /// current record is read hides most of the wait for memory (counts of 50 000 notes a query
    /// 2.97 → 2.39 s). `withValue(forKey:)` asks for the cell three ahead: one ahead left a
    /// count's record test waiting on its first field (200 counts 1.31 → 1.24 s at two ahead,
    /// 1.20 → 1.18 s more at three; 1.19 → 1.12 s more when the cells three ahead that lie in
    /// the next leaf are prefetched too, `prefetchNextLeaf`; four ahead bought nothing more).
    @inline(__always)
    private static func prefetchCell(_ i: Int, of leaf: Page) {
        let raw = leaf.raw
        guard let base = raw.baseAddress else { return }
        let start = leaf.slot(i)
        var offset = start
        while offset < min(start + prefetchedBytes, raw.count) {
            docstore_prefetch(base + offset)
            offset += 64
        }
    }

    /// Starts loading the whole leaf that holds `key`, when that leaf is another child of the
    /// branch above the cursor's leaf and the page cache holds it. A lookup of sorted, sparse
    /// keys one after another (a to-many relationship's members' records, each in a leaf of its
    /// own) asks this for the next key, so that the descent to it — from the
    /// branch the two share — finds the leaf's slots and keys in the processor's cache instead
    /// of waiting on each. Moves nothing and reads no file; a key under another branch is let
    /// be (its descent loads what it needs).
    public mutating func prefetchLeaf(forKey key: [UInt8]) {
        guard let (branch, position) = path.last else { return }
        let child: PageNumber? = key.withUnsafeBytes { k in
            // A key after the cursor's and below a separator lies under this branch (past the
            // last one, maybe not): keys past the last separator, most of a sparse lookup's, are
            // let be at one comparison. (A key before the cursor's, out of order, may prefetch
            // a leaf that does not hold it: only time is lost.)
            guard branch.count > 0, compareKeys(branch.branchKey(branch.count - 1), k) > 0 else { return nil }
            let at = branch.childPosition(for: k)
            return at == position ? nil : branch.child(at: at)
        }
        guard let child, let page = source.cachedPage(child), page.type == .leaf, let base = page.raw.baseAddress else { return }
        var offset = 0
        while offset < page.raw.count {
            docstore_prefetch(base + offset)
            offset += 64
        }
    }

    /// How many cells ahead of the entry found `withValue(forKey:)` prefetches (`prefetchCell`).
    static let cellsAhead = 3

    /// Near the end of a run of consecutive keys in one leaf: starts loading the start of the
    /// next leaf, which the run most likely steps onto next, continuing `cellsAhead` cells ahead
    /// across the boundary — cell 0 of the next leaf asks for its header and first slots, cell
    /// 1 for its first two cells (the header is loaded by then), and later cells for themselves.
    /// Nothing here waits for memory but the header read for the cells. Only a page the cache
    /// holds: this reads no file (the descent does, and reports what it finds).
    /// (Mutating only so that the lookup's closure, which holds the cursor `inout`, calls it in
    /// place: as a non-mutating method it copied the whole cursor — its path, leaf and source
    /// retained and released — on every lookup, a tenth of a count's retains.)
    private mutating func prefetchNextLeaf(cell: Int) {
        guard let (branch, position) = path.last, position < branch.count,
              let next = source.cachedPage(branch.child(at: position + 1)),
              let base = next.raw.baseAddress else { return }
        if cell == 0 {
            docstore_prefetch(base)
            docstore_prefetch(base + 64)
        } else if next.type == .leaf {
            if cell == 1, next.count > 0 { Self.prefetchCell(0, of: next) }
            if cell < next.count { Self.prefetchCell(cell, of: next) }
        }
    }

    /// R1: the children of `branch` from `position` on whose page numbers follow one another,
    /// read with one call if there are at least two; nil otherwise.
    private func readAheadRun(of branch: Page, from position: Int) -> ReadAheadRun? {
        let first = branch.child(at: position)
        var n = 1
        while n < Self.readAheadPages, position + n <= branch.count,
              branch.child(at: position + n).rawValue == first.rawValue &+ UInt64(n) {
            n += 1
        }
        return n > 1 ? source.readAhead(from: first, count: n) : nil
    }

    /// How much of the next cell `prefetchCell` asks for: five 64-byte lines, a note of the
    /// benchmark's model (a title, a 200-byte body, dates, a flag) whole.
    private static let prefetchedBytes = 320

    /// Moves to the last entry whose key is <= `key`.
    @discardableResult
    public mutating func seek(atOrBefore key: [UInt8]) throws(EngineError) -> (key: [UInt8], value: [UInt8])? {
        let found = try seek(to: key)
        if let found, found.key == key { return found }
        if found == nil { return try last() }
        return try previous()
    }

    /// Moves to the next entry.
    @discardableResult
    public mutating func next() throws(EngineError) -> (key: [UInt8], value: [UInt8])? {
        guard leaf != nil else { return nil }
        index += 1
        return try skipEmpty(forward: true)
    }

    /// Moves to the previous entry.
    @discardableResult
    public mutating func previous() throws(EngineError) -> (key: [UInt8], value: [UInt8])? {
        guard leaf != nil else { return nil }
        index -= 1
        return try skipEmpty(forward: false)
    }

    private mutating func descend(from start: PageNumber, toLast: Bool, passing: Bool = false) throws(EngineError) {
        if start == root { path.removeAll(keepingCapacity: true) }
        leaf = nil
        guard start != .none else { return }
        var page: Page
        if passing, let run = ahead, run.contains(start) {
            page = try source.pageInPassing(start, from: run)
        } else {
            page = try passing ? source.pageInPassing(start) : source.page(start)
        }
        while page.type == .branch {
            guard path.count < BTree.maxDepth else { throw .corrupt("tree deeper than \(BTree.maxDepth)", file: file, page: page.number) }
            let pos = toLast ? page.count : 0
            path.append((page, pos))
            page = try passing ? source.pageInPassing(page.child(at: pos)) : source.page(page.child(at: pos))
        }
        guard page.type == .leaf else { throw .corrupt("tree reaches a non-node page", file: file, page: page.number) }
        leaf = page
        index = toLast ? page.count - 1 : 0
    }

    /// Steps over leaf boundaries until the index is inside a leaf, or the tree ends.
    private mutating func skipEmpty(forward: Bool) throws(EngineError) -> (key: [UInt8], value: [UInt8])? {
        guard try settle(forward: forward) else { return nil }
        return try current()
    }

    /// Steps over leaf boundaries until the index is inside a leaf (true), or the tree ends.
    private mutating func settle(forward: Bool) throws(EngineError) -> Bool {
        while let l = leaf, index < 0 || index >= l.count {
            // Climb to the nearest ancestor with a sibling in this direction.
            var climbed = false
            while let top = path.last, forward ? top.position >= top.page.count : top.position <= 0 {
                path.removeLast()
                climbed = true
            }
            guard var top = path.popLast() else {
                leaf = nil
                return false
            }
            top.position += forward ? 1 : -1
            path.append(top)
            leavesWalked += 1
            let child = top.page.child(at: top.position)
            let passing = leavesWalked > Cursor.passingAfter
            // R1: in passing, walking forward from a parent of leaves (nothing was climbed), past
            // the run held.
            if passing && forward && !climbed && !(ahead?.contains(child) ?? false) {
                ahead = readAheadRun(of: top.page, from: top.position)
            }
            try descend(from: child, toLast: !forward, passing: passing)
        }
        return leaf != nil
    }
}
