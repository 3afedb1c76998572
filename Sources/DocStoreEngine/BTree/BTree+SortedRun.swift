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
// Anything else — a full leaf (split or rebalance), an overflow value or one replacing an
// overflow cell, a committed leaf not copied yet — goes through `put`, and the next entry
// descends again.
//
// Invariant: the resulting tree holds what applying `put` to each entry in order would give.

/// A run of puts in ascending, distinct key order, read in place: a write transaction's drained
/// buffer (arrays) or a bulk write's packed entries in a sorted order.
protocol SortedPutRun {
    var count: Int { get }
    func withEntry<R, E: Error>(_ position: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R
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
}

extension BTree {
    /// Puts the entries of `run` (ascending, distinct keys). Returns the new root and how many
    /// keys were new.
    static func putSorted<Run: SortedPutRun>(
        _ run: Run, root start: PageNumber, in ws: PageWorkspace
    ) throws(EngineError) -> (root: PageNumber, added: Int) {
        var root = start
        var added = 0
        // The leaf the previous entry went to, if the fast path may use it, and its upper bound
        // (kept apart, not as a tuple: copying one per entry retained both).
        var leaf: Page?
        var upper: [UInt8]?
        for i in 0..<run.count {
            try run.withEntry(i) { (key, value) throws(EngineError) in
                if leaf == nil, root != .none {
                    let (found, bound) = try locate(key, root: root, in: ws)
                    if ws.isOwned(found) { leaf = found; upper = bound }
                }
                if let current = leaf, isInline(keyLength: key.count, valueLength: value.count, ws.limits) {
                    switch placeInLeaf(key, value, current, below: upper) {
                    case .added:
                        added += 1
                        return
                    case .replaced:
                        return
                    case .notPlaced:
                        break
                    }
                }
                let result = try put(Array(key), .bytes(Array(value)), root: root, in: ws)
                root = result.root
                if result.added { added += 1 }
                leaf = nil
                upper = nil
            }
        }
        return (root, added)
    }

    /// The leaf whose key range holds `key`, and the exclusive upper bound of that range (nil
    /// on the rightmost path).
    static func locate(_ key: [UInt8], root: PageNumber, in ws: PageWorkspace) throws(EngineError) -> (Page, [UInt8]?) {
        try withRawBytes(key) { (k) throws(EngineError) in try locate(k, root: root, in: ws) }
    }

    static func locate(_ k: UnsafeRawBufferPointer, root: PageNumber, in ws: PageWorkspace) throws(EngineError) -> (Page, [UInt8]?) {
        var page = try ws.page(root)
        var upper: [UInt8]?
        var depth = 0
        while page.type == .branch {
            depth += 1
            guard depth <= maxDepth else { throw .corrupt("tree deeper than \(maxDepth)", page: page.number) }
            let pos = page.childPosition(for: k)
            if pos < page.count { upper = Array(page.branchKey(pos)) }
            page = try ws.page(page.child(at: pos))
        }
        guard page.type == .leaf else { throw .corrupt("tree reaches a non-node page", page: page.number) }
        return (page, upper)
    }

    /// What `placeInLeaf` did.
    private enum Placement { case added, replaced, notPlaced }

    /// Places an inline cell for `key` in `leaf` if `key` is below `upper`: a new key when the
    /// cell fits in the leaf's gap; an existing key whose cell is inline by writing the new cell
    /// over the old one when it is no larger (a record rewritten with a value of the same
    /// length, a batch update's common case), or else into the gap.
    private static func placeInLeaf(_ k: UnsafeRawBufferPointer, _ value: UnsafeRawBufferPointer, _ leaf: Page, below upper: [UInt8]?) -> Placement {
        let size = LeafCell.headerSize(keyLength: k.count, valueLength: value.count) + k.count + value.count
        if let upper, upper.withUnsafeBytes({ compareKeys(k, $0) }) >= 0 { return .notPlaced }
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
    /// Deletes `keys` (ascending, distinct) without a descent from the root for each: a key in
    /// the owned leaf the previous one was in (below its upper bound) is removed in place unless
    /// it is the leaf's last cell or holds an overflow or blob value; anything else goes through
    /// `delete`, and the next key descends again. Returns the new root and the keys removed (in
    /// order), as applying `delete` to each key in order would.
    static func deleteSorted(_ keys: [[UInt8]], root start: PageNumber, in ws: PageWorkspace) throws(EngineError) -> (root: PageNumber, removed: [[UInt8]]) {
        var root = start
        var removed: [[UInt8]] = []
        removed.reserveCapacity(keys.count)
        // The leaf and bound of the previous key, kept apart (see putSorted).
        var leaf: Page?
        var upper: [UInt8]?
        for i in keys.indices {
            guard root != .none else { break }
            if leaf == nil {
                let (found, bound) = try locate(keys[i], root: root, in: ws)
                if ws.isOwned(found) { leaf = found; upper = bound }
            }
            if let current = leaf {
                let inPlace: Bool? = keys[i].withUnsafeBytes { k in
                    if let upper, upper.withUnsafeBytes({ compareKeys(k, $0) }) >= 0 { return nil }
                    let (index, found) = leafSearch(current, k)
                    guard found else { return false }
                    guard current.count > 1, current.leafStorage(index) == .inline else { return nil }
                    current.removeSlot(at: index)
                    return true
                }
                if inPlace == true { removed.append(keys[i]); continue }
                if inPlace == false { continue }     // not in the tree
            }
            let result = try delete(keys[i], root: root, in: ws)
            root = result.root
            if result.removed { removed.append(keys[i]) }
            leaf = nil
            upper = nil
        }
        return (root, removed)
    }
}
