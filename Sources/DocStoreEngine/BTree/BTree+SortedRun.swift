// BTree+SortedRun: putting a run of entries in ascending key order (a write transaction's
// buffered puts, PutBuffer) without a descent from the root for each entry.
//
// Consecutive keys of a sorted run mostly land in the same leaf. After a descent the run keeps
// that leaf and the exclusive upper bound of its key range (the nearest separator to the right
// on the path; none on the rightmost path). The next key lies at or above the previous one, so
// it belongs to the same leaf exactly when it is below that bound; it is placed there directly
// when the leaf is owned by this transaction (created or copied by it: its ancestors already
// point at it, so nothing above changes) and the value is inline: a new key whose cell fits in the
// leaf's free gap, or an existing inline key whose new cell fits over the old one or in the gap.
// When that leaf is full, the entries after it that fall in its range go in together: the leaf's
// cells and theirs, merged, are spread over the leaf and as many new leaves as they fill, and
// the separators go into the parent in one insert (`spreadRun`) — a stretch of entries costs one
// rewrite instead of a split or a rebalance per entry (a batch insert adds thousands of links
// at each of a few points). A short stretch scattered among the leaf's cells is left to `put`,
// whose rebalance keeps random inserts' pages fuller. Anything else — an overflow value or one
// replacing an overflow cell, a committed leaf not copied yet, a stretch `spreadRun` declines
// or cannot take — goes through `put`, and the next entry descends again.
//
// Spilling: past the transaction's page limit the run writes its new pages out between two
// entries (PageWorkspace.spill), so a long run holds no more pages than a short one. Its later
// entries come after them in key order: the run reads back only the leaf it was filling (and the
// path, when branches were written too), where applying it as several shorter runs of unsorted
// input reads back and rewrites most of the tree each time.
//
// Invariant: the resulting tree holds what applying `put` to each entry in order would give.

/// A run of puts in ascending, distinct key order, read in place: a write transaction's drained
/// buffer (arrays) or a bulk write's packed entries in a sorted order.
protocol SortedPutRun {
    var count: Int { get }
    func withEntry<R, E: Error>(_ position: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R
    /// Starts loading what the entries some positions after `position` will read, where they
    /// are not in memory order.
    func prefetch(ahead position: Int)
}

/// Entries as arrays, already in order.
struct ArrayPutRun: SortedPutRun {
    let entries: [(key: [UInt8], value: [UInt8])]
    var count: Int { entries.count }
    @inline(__always)
    func withEntry<R, E: Error>(_ position: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let (key, value) = entries[position]
        let result: Result<R, E> = key.withUnsafeBytes { k in
            value.withUnsafeBytes { v in
                do throws(E) { return .success(try body(k, v)) } catch { return .failure(error) }
            }
        }
        return try result.get()
    }
    func prefetch(ahead position: Int) {}
}

/// Packed entries in the order `order` gives (their own order when nil).
struct PackedPutRun: SortedPutRun {
    let entries: PutEntries
    let order: [Int]?
    var count: Int { order?.count ?? entries.count }
    @inline(__always)
    func withEntry<R, E: Error>(_ position: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try entries.withEntry(order?[position] ?? position, body)
    }
    /// Entries in key order are scattered over the chunks unless they were put in order.
    @inline(__always)
    func prefetch(ahead position: Int) {
        guard let order else { return }
        entries.prefetch(ahead: position, in: order)
    }
}

extension BTree {
    /// Puts the entries of `run` (ascending, distinct keys). Returns the new root and how many
    /// keys were new. Past the transaction's page limit it spills between two entries.
    static func putSorted<Run: SortedPutRun>(
        _ run: Run, root start: PageNumber, in ws: PageWorkspace
    ) throws(EngineError) -> (root: PageNumber, added: Int) {
        var root = start
        var added = 0
        // The leaf the previous entry went to, if the fast path may use it, its upper bound and
        // the branches above it (kept apart, not as a tuple: copying one per entry retained all).
        var leaf: Page?
        var upper: [UInt8]?
        var path: [(page: Page, position: Int)] = []
        var spreadsFailed = 0
        var i = 0
        while i < run.count {
            if ws.shouldSpill {
                // Between two entries nothing holds a page but this loop: let go of the leaf
                // and the path (the next entry descends again) and write the new pages out, so
                // a long run holds no more pages than a short one. The run's later entries come
                // after these in key order, so the pages written are seldom needed again.
                leaf = nil
                upper = nil
                path.removeAll(keepingCapacity: true)
                try ws.spill()
            }
            run.prefetch(ahead: i)
            let consumed = try run.withEntry(i) { (key, value) throws(EngineError) -> Int in
                if leaf == nil, root != .none {
                    let (found, bound) = try locate(key, root: root, in: ws, path: &path)
                    if ws.isOwned(found) { leaf = found; upper = bound }
                }
                if let current = leaf, isInline(keyLength: key.count, valueLength: value.count, ws.limits) {
                    switch placeInLeaf(key, value, current, below: upper) {
                    case .added:
                        added += 1
                        return 1
                    case .replaced:
                        return 1
                    case .notPlaced:
                        break
                    }
                    // The leaf is full: it and the entries after this one that fall in its range
                    // go to new leaves together, instead of a split or a rebalance each. A few
                    // entries go through `put`, whose rebalance keeps pages fuller. (A stretch
                    // that cannot go this way — keys near the longest — is rare, and after a few
                    // the run stops trying.)
                    if spreadsFailed < 4, isBelow(key, upper) {
                        switch try spreadRun(run, from: i, over: current, below: upper, path: path, root: root, ws: ws) {
                        case .spread(let newRoot, let consumed, let new):
                            root = newRoot
                            added += new
                            leaf = nil
                            upper = nil
                            return consumed
                        case .declined:
                            break
                        case .failed:
                            spreadsFailed += 1
                        }
                    }
                }
                let result = try put(Array(key), .bytes(Array(value)), root: root, in: ws)
                root = result.root
                if result.added { added += 1 }
                leaf = nil
                upper = nil
                return 1
            }
            i += consumed
        }
        return (root, added)
    }

    /// The leaf whose key range holds `k`, and the exclusive upper bound of that range (nil on
    /// the rightmost path); the branches descended through, with the child position taken in
    /// each, from the root down, in `path`.
    static func locate(_ k: UnsafeRawBufferPointer, root: PageNumber, in ws: PageWorkspace,
                       path: inout [(page: Page, position: Int)]) throws(EngineError) -> (Page, [UInt8]?) {
        path.removeAll(keepingCapacity: true)
        var page = try ws.page(root)
        var upper: [UInt8]?
        while page.type == .branch {
            guard path.count < maxDepth else { throw .corrupt("tree deeper than \(maxDepth)", page: page.number) }
            let pos = page.childPosition(for: k)
            if pos < page.count { upper = Array(page.branchKey(pos)) }
            path.append((page, pos))
            page = try ws.page(page.child(at: pos))
        }
        guard page.type == .leaf else { throw .corrupt("tree reaches a non-node page", page: page.number) }
        return (page, upper)
    }

    /// The most new leaves one `spreadRun` makes: their separators must fit, with the parent's
    /// cells, in the two pages a branch split gives.
    static let spreadLeavesAtMost = 32

    /// Puts the entries of `run` from `first` on that fall in `leaf`'s range (below `upper`)
    /// together with the leaf's cells over the leaf and as many new leaves as they fill, and
    /// the separators between them into the parent — one rewrite for a stretch of entries,
    /// where putting them one by one into a full leaf rebalanced or split it again and again.
    /// The merged cells are the leaf's, each entry's replacing an inline cell of its key; the
    /// stretch ends before an entry that is not inline, replaces a cell that is not, or would
    /// make the leaves or their separators too many. `leaf` must be owned by the transaction
    /// and `path` the branches above it.
    ///
    /// How the pages are cut: in order, each full, when the stretch appends past the end of the
    /// tree or is a block (new keys between the same two cells, the cells after it kept on one
    /// page); evenly, to 9/10 of a page, otherwise (room for later inserts). A stretch among
    /// the leaf's cells that would grow it by less than half a page is declined unless it is a
    /// block of a sixteenth of a page or more: `put`'s rebalance with a sibling keeps pages
    /// fuller than a split of the leaf in two would.
    ///
    /// Returns the new root, how many entries went in and how many keys were new; or declined,
    /// or failed (the stretch would not fit the separators' room, or not split into pages) —
    /// then nothing was written and the caller puts the first entry.
    static func spreadRun<Run: SortedPutRun>(
        _ run: Run, from first: Int, over leaf: Page, below upper: [UInt8]?,
        path: [(page: Page, position: Int)], root: PageNumber, ws: PageWorkspace
    ) throws(EngineError) -> SpreadOutcome {
        let capacity = leaf.size - PageHeader.size
        // Appending past the end of the tree: the rightmost leaf, and a first key after its last
        // (the run ascends, so every key of the stretch is). Pages are filled in order then —
        // the leaf stays full, and the next run's keys go to the last page.
        let appends = upper == nil && leaf.count > 0
            && run.withEntry(first, { key, _ in compareKeys(key, leaf.leafKey(leaf.count - 1)) > 0 })
        // A block: new keys that all fall between the same two cells of the leaf (or after its
        // last), none replacing one — a range that grows at its end, with the next range's
        // first cells after it in the leaf (a folder's notes by date, a tag's links). Its pages
        // are filled in order too, and the cells after it kept together on one page.
        var block = false
        if !appends {
            // Less than half a page of new cells among the leaf's goes through `put` (its
            // rebalance keeps pages fuller), unless it is a block of a sixteenth of a page or more.
            // Counted: the growth of the leaf's bytes, up to an entry that is not inline.
            var growth = 0, j = first, gap: Int?
            block = true
            while j < run.count, growth < capacity / 2 {
                run.prefetch(ahead: j)
                let step: (growth: Int, gap: Int, found: Bool)? = run.withEntry(j) { key, value in
                    guard isInline(keyLength: key.count, valueLength: value.count, ws.limits),
                          isBelow(key, upper) else { return nil }
                    let size = LeafCell.inlineSize(keyLength: key.count, valueLength: value.count) + 2
                    let (at, found) = leafSearch(leaf, key)
                    return (found ? max(0, size - leaf.leafCellSize(at) - 2) : size, at, found)
                }
                guard let step else { break }
                growth += step.growth
                if step.found || (gap.map { $0 != step.gap } ?? false) { block = false }
                gap = step.gap
                j += 1
            }
            if growth < capacity / 2 && !(block && growth >= capacity / 16) { return .declined }
        }
        // The separators go into the parent, which a branch split halves: the new leaves are
        // as many as half a page of separators as long as the longest key allows. The merged
        // cells stop one leaf short of that, for an even split's slack.
        var longestKey = 0, rest = 0
        for i in 0..<leaf.count {
            longestKey = max(longestKey, leaf.leafKeyLength(i))
            rest += leaf.leafCellSize(i) + 2
        }
        func leavesAllowed(longestKey: Int) -> Int { min(spreadLeavesAtMost, 1 + (capacity / 2) / (BranchCell.headerSize + longestKey + 2)) }
        var merged = CellRun(capacity: 2 * leaf.size)
        var next = first, cell = 0, added = 0
        var stop = false, overBudget = false
        while !stop, next < run.count {
            run.prefetch(ahead: next)
            run.withEntry(next) { key, value in
                guard isInline(keyLength: key.count, valueLength: value.count, ws.limits),
                      isBelow(key, upper) else {
                    stop = true
                    return
                }
                var order = 1
                while cell < leaf.count {
                    order = compareKeys(leaf.leafKey(cell), key)
                    guard order < 0 else { break }
                    merged.append(leaf.leafCell(cell))
                    rest -= leaf.leafCellSize(cell) + 2
                    cell += 1
                    if next > first { block = false }
                }
                let replaces = cell < leaf.count && order == 0
                if replaces && leaf.leafStorage(cell) != .inline { stop = true; return }
                let size = LeafCell.inlineSize(keyLength: key.count, valueLength: value.count)
                // What is left of the leaf's cells comes after: it must fit too.
                let longest = max(longestKey, key.count)
                let budget = capacity * 9 / 10 * (leavesAllowed(longestKey: longest) - 1)
                let restAfter = rest - (replaces ? leaf.leafCellSize(cell) + 2 : 0)
                guard merged.pageBytes(0..<merged.count) + size + 2 + restAfter <= budget else {
                    stop = true
                    overBudget = true
                    return
                }
                if replaces {
                    rest = restAfter
                    cell += 1
                    block = false
                } else {
                    added += 1
                }
                merged.appendInlineLeafCell(key: key, value: value)
                longestKey = longest
                next += 1
            }
        }
        guard next > first else { return overBudget ? .failed : .declined }
        merged.appendLeafCells(of: leaf, cell..<leaf.count)

        // Appended cells and a block fill pages in order (the next stretch appends to the last),
        // a block's following cells kept together (so they move once, not a piece each time);
        // cells among the leaf's are shared evenly, to 9/10 of a page. (`block` was cleared when
        // the merge met a leaf cell between two entries or replaced one.)
        var bounds: [Int]?
        if appends {
            bounds = merged.greedySplit(pageCapacity: capacity)
        } else if block {
            bounds = merged.greedySplit(pageCapacity: capacity, keepingTogetherFrom: merged.count - (leaf.count - cell))
        }
        if let b = bounds, b.count - 1 > leavesAllowed(longestKey: longestKey) { bounds = nil }
        var parts = bounds.map { $0.count - 1 } ?? max(1, (merged.pageBytes(0..<merged.count) + capacity * 9 / 10 - 1) / (capacity * 9 / 10))
        while bounds == nil && parts <= min(merged.count, leavesAllowed(longestKey: longestKey)) {
            bounds = merged.evenSplit(parts: parts, pageCapacity: capacity)
            if bounds == nil { parts += 1 }
        }
        guard let bounds else { return .failed }

        var pages = [leaf]
        for _ in 1..<parts { pages.append(ws.newPage(.leaf)) }
        for (k, page) in pages.enumerated() {
            merged.write(bounds[k]..<bounds[k + 1], into: page, type: .leaf, link: .none)
        }
        guard parts > 1 else { return .spread(root: root, consumed: next - first, added: added) }
        let separators = (1..<parts).map { k in
            (shortestSeparator(pages[k - 1].leafKey(pages[k - 1].count - 1), pages[k].leafKey(0)), pages[k].number)
        }
        var above = path
        var split: (separator: [UInt8], right: PageNumber)?
        let top: PageNumber
        if let parentEntry = above.popLast() {
            let parent = ws.writable(parentEntry.page)
            parent.setChild(at: parentEntry.position, leaf.number)
            split = insertSeparators(separators, into: parent, at: parentEntry.position, ws: ws)
            top = parent.number
        } else {
            // The leaf was the root: a new root above the leaves.
            let newRoot = ws.newPage(.branch)
            newRoot.link = leaf.number
            split = insertSeparators(separators, into: newRoot, at: 0, ws: ws)
            top = newRoot.number
        }
        let newRoot = finishPut(from: top, split: &split, path: above, added: added > 0, ws: ws).root
        return .spread(root: newRoot, consumed: next - first, added: added)
    }

    /// Whether `key` lies below a leaf's exclusive upper bound (none on the rightmost path).
    @inline(__always) private static func isBelow(_ key: UnsafeRawBufferPointer, _ upper: [UInt8]?) -> Bool {
        upper.map { u in u.withUnsafeBytes { compareKeys(key, $0) } < 0 } ?? true
    }

    /// What `spreadRun` did.
    enum SpreadOutcome {
        /// The stretch went in: the new root, how many entries went in, how many keys were new.
        case spread(root: PageNumber, consumed: Int, added: Int)
        /// Not worth it here: a short stretch among the leaf's cells that is not a block of a
        /// sixteenth of a page, or a first entry replacing a cell stored outside the leaf.
        case declined
        /// The stretch does not fit the room for separators, or does not split into pages.
        case failed
    }

    /// What `placeInLeaf` did.
    private enum Placement { case added, replaced, notPlaced }

    /// Places an inline cell for `key` in `leaf` if `key` is below `upper`: a new key when the
    /// cell fits in the leaf's gap; an existing key whose cell is inline by writing the new cell
    /// over the old one when it is no larger (a record rewritten with a value of the same
    /// length, a batch update's common case), or else into the gap.
    private static func placeInLeaf(_ k: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ leaf: Page, below upper: [UInt8]?) -> Placement {
        let size = LeafCell.inlineSize(keyLength: k.count, valueLength: value.count)
        if !isBelow(k, upper) { return .notPlaced }
        let (index, found) = leafSearch(leaf, k)
        if found {
            guard leaf.leafStorage(index) == .inline else { return .notPlaced }
            if size <= leaf.leafCellSize(index) {
                writeInlineCell(k, value, into: leaf, at: leaf.slot(index))
                return .replaced
            }
            guard leaf.gap >= size else { return .notPlaced }
            leaf.removeSlot(at: index)
            writeInlineCell(k, value, into: leaf, at: leaf.insertSlot(at: index, cellSize: size))
            return .replaced
        }
        guard leaf.gap >= size + 2 else { return .notPlaced }
        writeInlineCell(k, value, into: leaf, at: leaf.insertSlot(at: index, cellSize: size))
        return .added
    }

    /// Writes an inline cell (as `LeafCell.build` lays it out) at `offset` of `leaf`, straight
    /// into the page: no cell is built on the heap first.
    @inline(__always) private static func writeInlineCell(_ key: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, into leaf: Page, at offset: Int) {
        guard let base = leaf.bytes.baseAddress else { return }
        var p = base + offset
        func varint(_ v: UInt64) {
            var v = v
            while v >= 0x80 { p.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, as: UInt8.self); p += 1; v >>= 7 }
            p.storeBytes(of: UInt8(v), as: UInt8.self)
            p += 1
        }
        varint(UInt64(key.count) << 2 | UInt64(ValueStorage.inline.rawValue))
        if let k = key.baseAddress { p.copyMemory(from: k, byteCount: key.count) }
        p += key.count
        varint(UInt64(value.count))
        if let src = value.baseAddress { p.copyMemory(from: src, byteCount: value.count) }
    }
}

extension BTree {
    /// Deletes the keys of `keys` in `order` (ascending, distinct; nil: their own order, which
    /// is) without a descent from the root for each: after one descent to an owned leaf, the
    /// keys that follow below its upper bound are removed in place, in a loop of their own,
    /// unless one is the leaf's last cell or holds an overflow or blob value — that one goes
    /// through `delete`; a key past the bound descends again, and so does any key once a leaf
    /// that is not owned was reached (`delete` makes it owned). Returns the new root and the
    /// positions in `keys` of the keys removed (in key order), as applying `delete` to each
    /// key in order would. Past the transaction's page limit it spills between two keys.
    static func deleteSorted(_ keys: DeleteKeys, order: [Int]?, root start: PageNumber, in ws: PageWorkspace) throws(EngineError) -> (root: PageNumber, removed: [Int]) {
        var root = start
        let n = order?.count ?? keys.count
        var removed: [Int] = []
        removed.reserveCapacity(n)
        var path: [(page: Page, position: Int)] = []
        /// What became of a key offered to the leaf in hand.
        enum InPlace { case removed, absent, outside, needsDelete }
        @inline(__always) func position(_ j: Int) -> Int {
            guard let order else { return j }
            keys.entries.prefetch(ahead: j, in: order)
            return order[j]
        }
        var j = 0
        outer: while j < n, root != .none {
            if ws.shouldSpill {
                // Each pass of this loop descends afresh: past the page limit, the new pages go
                // out between two keys, as in `putSorted`.
                path.removeAll(keepingCapacity: true)
                try ws.spill()
            }
            var i = position(j)
            let (found, bound) = try keys.withKey(i) { (k) throws(EngineError) in try locate(k, root: root, in: ws, path: &path) }
            if ws.isOwned(found) {
                // The keys in this leaf's range, one after another, in place.
                var first = true
                inner: while true {
                    let outcome = keys.withKey(i) { k -> InPlace in
                        guard isBelow(k, bound) else { return .outside }
                        let (index, hit) = leafSearch(found, k)
                        guard hit else { return .absent }
                        guard found.count > 1, found.leafStorage(index) == .inline else { return .needsDelete }
                        found.removeSlot(at: index)
                        return .removed
                    }
                    switch outcome {
                    case .removed: removed.append(i)
                    case .absent: break
                    case .outside where !first: continue outer      // past the leaf: descend again
                    case .outside, .needsDelete: break inner
                    }
                    first = false
                    j += 1
                    guard j < n else { break outer }
                    i = position(j)
                }
            }
            // Not an owned leaf, a cell that needs more than a slot removed, or (for a key not
            // below the bound of its own leaf) a descent of its own: `delete` settles it.
            let result = try keys.withKey(i) { (k) throws(EngineError) in try delete(Array(k), root: root, in: ws) }
            root = result.root
            if result.removed { removed.append(i) }
            j += 1
        }
        return (root, removed)
    }
}
