// BTree+Insert: putting a key and value into a copy-on-write B+tree (Format/page-file.md).
//
// The descent records the path; the leaf is made writable (copied unless this transaction owns
// it), the cell is placed, and the walk back up copies each ancestor so it points at the new
// child. A full page splits: leaves at the byte midpoint — or, when appending at the end of the
// rightmost leaf (sequential inserts), with the old cells left full — and the parent gets the
// shortest separator between the halves. A root split grows the tree by one level. Before
// splitting, a full leaf shares its cells with a sibling that has room (redistribute); when the
// sibling is full too, the two pages' cells are spread over three (a B*-tree 2-to-3 split), so
// random inserts leave pages about 2/3 full at worst instead of 1/2.

enum ValuePlacement {
    /// Sizes that decide where a value goes, derived from the page size and options.
    struct Limits {
        let pageSize: Int
        /// Longest key: a page must hold at least four maximal cells.
        let maxKeySize: Int
        /// Largest cell kept inline in a leaf.
        let maxInlineCell: Int
        /// Values of at least this many bytes go to blob files (Int.max: never).
        let blobThreshold: Int

        init(pageSize: Int, blobThreshold: Int) {
            self.pageSize = pageSize
            self.maxInlineCell = (pageSize - PageHeader.size) / 4 - 2
            self.maxKeySize = maxInlineCell - LeafCell.maxHeaderSize - LeafCell.overflowPayloadSize
            self.blobThreshold = blobThreshold
        }
    }
}

extension BTree {
    /// Inserts or replaces `key`. Returns the new root and whether the key is new.
    static func put(
        _ key: [UInt8], _ value: ValueToStore, root: PageNumber, in ws: PageWorkspace
    ) throws(EngineError) -> (root: PageNumber, added: Bool) {
        if root == .none {
            let leaf = ws.newPage(.leaf)
            let cell = try makeLeafCell(key, value, ws)
            _ = insertCell(cell, into: leaf, at: 0, appendingRightmost: true, ws: ws)
            return (leaf.number, true)
        }
        var path: [(page: Page, position: Int)] = []
        var page = try ws.page(root)
        var rightmost = true
        let found: Bool
        let index: Int
        (index, found) = try withRawBytes(key) { (k) throws(EngineError) -> (Int, Bool) in
            while page.type == .branch {
                guard path.count < maxDepth else { throw .corrupt("tree deeper than \(maxDepth)", page: page.number) }
                let pos = page.childPosition(for: k)
                if pos != page.count { rightmost = false }
                path.append((page, pos))
                page = try ws.page(page.child(at: pos))
            }
            guard page.type == .leaf else { throw .corrupt("tree reaches a non-node page", page: page.number) }
            return leafSearch(page, k)
        }
        let leaf = ws.writable(page)
        if found {
            try freeValue(of: leaf, at: index, ws)
            leaf.removeSlot(at: index)
        }
        let cell = try makeLeafCell(key, value, ws)
        let appending = rightmost && index == leaf.count

        // A full leaf first tries to share its cells with a sibling that has room (the
        // separator between them moves); when both are full, their cells go to three pages
        // (one new) instead of the leaf splitting in two. This keeps pages fuller under random
        // inserts (B*-tree style) and the file smaller.
        if !appending, !fits(cell, in: leaf), let parentEntry = path.last,
           let shared = try rebalance(cell, at: index, leaf: leaf, parent: parentEntry.page, position: parentEntry.position, ws: ws) {
            // The parent's children leftPosition ..< leftPosition + replaced become `pages`.
            path.removeLast()
            let parent = ws.writable(parentEntry.page)
            parent.setChild(at: shared.leftPosition, shared.pages[0])
            for _ in 1..<shared.replaced { parent.removeSlot(at: shared.leftPosition) }
            var split = insertSeparators(
                Array(zip(shared.separators, shared.pages.dropFirst())), into: parent, at: shared.leftPosition, ws: ws)
            return finishPut(from: parent.number, split: &split, path: path, added: !found, ws: ws)
        }
        var split = insertCell(cell, into: leaf, at: index, appendingRightmost: appending, ws: ws)
        return finishPut(from: leaf.number, split: &split, path: path, added: !found, ws: ws)
    }

    /// Walks back up `path`, pointing each ancestor at its new child and placing splits; grows
    /// a new root if the old one split.
    static func finishPut(
        from start: PageNumber, split: inout (separator: [UInt8], right: PageNumber)?,
        path: [(page: Page, position: Int)], added: Bool, ws: PageWorkspace
    ) -> (root: PageNumber, added: Bool) {
        var child = start
        for (parentOld, position) in path.reversed() {
            if split == nil && ws.isOwned(parentOld) && parentOld.child(at: position) == child {
                return (path[0].page.number, added)
            }
            let parent = ws.writable(parentOld)
            parent.setChild(at: position, child)
            if let s = split {
                split = insertSeparator(s.separator, child: s.right, into: parent, at: position, ws: ws)
            }
            child = parent.number
        }
        if let s = split {
            let newRoot = ws.newPage(.branch)
            newRoot.link = child
            _ = insertSeparator(s.separator, child: s.right, into: newRoot, at: 0, ws: ws)
            return (newRoot.number, added)
        }
        return (child, added)
    }

    /// Whether a cell fits in a leaf, compacting it if needed.
    static func fits(_ cell: [UInt8], in leaf: Page) -> Bool {
        if leaf.gap >= cell.count + 2 { return true }
        var used = 0
        for i in 0..<leaf.count { used += leaf.leafCellSize(i) + 2 }
        return leaf.size - PageHeader.size - used >= cell.count + 2
    }

    /// Finds a way to place a cell that does not fit in its full leaf without a plain split,
    /// trying in order: the leaf and one sibling over the same two pages (if together they stay
    /// under 99 % full); the leaf and both siblings over four pages (a 3-to-4 split, pages at
    /// least 3/4 full); the leaf and its one sibling over three pages (2-to-3, at least 2/3).
    /// Nil when the leaf has no sibling under its parent.
    static func rebalance(
        _ cell: [UInt8], at index: Int, leaf: Page, parent: Page, position: Int, ws: PageWorkspace
    ) throws(EngineError) -> (leftPosition: Int, replaced: Int, pages: [PageNumber], separators: [[UInt8]])? {
        let capacity = leaf.size - PageHeader.size
        let leafBytes = cell.count + 2 + leaf.leafBytesInUse()
        func sibling(_ p: Int) throws(EngineError) -> (page: Page, bytes: Int)? {
            guard p >= 0 && p <= parent.count else { return nil }
            let page = try ws.page(parent.child(at: p))
            return page.type == .leaf ? (page, page.leafBytesInUse()) : nil
        }
        let right = try sibling(position + 1), left = try sibling(position - 1)
        let siblings = (right: right, left: left)
        func at(_ p: Int) -> (page: Page, bytes: Int)? { p > position ? siblings.right : siblings.left }
        // Worth sharing with one sibling only if the pair ends up no more than 97.5 % full.
        // Measured on 1M random 16-byte keys with 100-byte values, with the 3-to-4 split: 96 %
        // leaves 34 805 leaves and branches, 97.5 % to 99 % all 34 271 (87 % full); above 97.5 %
        // the pair has too little headroom and the next insert shares again (slower loads).
        for p in [position + 1, position - 1] {
            guard let s = at(p), leafBytes + s.bytes <= capacity * 2 * 975 / 1000 else { continue }
            let window = p > position ? [leaf, s.page] : [s.page, leaf]
            if let r = spread(cell, at: index, leaf: leaf, window: window, into: 2, capacity: capacity, ws: ws) {
                return (min(p, position), 2, r.pages, r.separators)
            }
        }
        if let left, let right,
           let r = spread(cell, at: index, leaf: leaf, window: [left.page, leaf, right.page], into: 4, capacity: capacity, ws: ws) {
            return (position - 1, 3, r.pages, r.separators)
        }
        for p in [position + 1, position - 1] {
            guard let s = at(p) else { continue }
            let window = p > position ? [leaf, s.page] : [s.page, leaf]
            if let r = spread(cell, at: index, leaf: leaf, window: window, into: 3, capacity: capacity, ws: ws) {
                return (min(p, position), 2, r.pages, r.separators)
            }
        }
        return nil
    }

    /// Spreads the cells of `window` (adjacent leaves in key order, `leaf` among them) plus the
    /// new cell over `parts` pages — the window's pages made writable, plus new ones — in even
    /// byte shares. Returns the pages in key order and the separators between them; nil if the
    /// shares do not fit.
    static func spread(
        _ cell: [UInt8], at index: Int, leaf: Page, window: [Page], into parts: Int, capacity: Int, ws: PageWorkspace
    ) -> (pages: [PageNumber], separators: [[UInt8]])? {
        var all = CellRun(capacity: capacity * window.count + cell.count)
        for page in window {
            if page === leaf {
                all.appendLeafCells(of: leaf, 0..<index)
                all.append(cell)
                all.appendLeafCells(of: leaf, index..<leaf.count)
            } else {
                all.appendLeafCells(of: page, 0..<page.count)
            }
        }
        guard let bounds = all.evenSplit(parts: parts, pageCapacity: capacity) else { return nil }
        var pages = window.map { ws.writable($0) }
        while pages.count < parts { pages.insert(ws.newPage(.leaf), at: pages.count - 1) }
        for (k, page) in pages.enumerated() {
            all.write(bounds[k]..<bounds[k + 1], into: page, type: .leaf, link: .none)
        }
        let separators = (1..<pages.count).map { k in
            shortestSeparator(pages[k - 1].leafKey(pages[k - 1].count - 1), pages[k].leafKey(0))
        }
        return (pages.map(\.number), separators)
    }

    // MARK: - Leaf cells

    /// Builds a leaf cell, moving a large value to overflow pages or a blob file.
    static func makeLeafCell(_ key: [UInt8], _ value: ValueToStore, _ ws: PageWorkspace) throws(EngineError) -> [UInt8] {
        switch value {
        case .blob(let id, let length):
            return LeafCell.build(key: key, storage: .blob, valueLength: length, payloadSize: 8) { $0.appendU64(id.rawValue) }
        case .bytes(let v):
            if isInline(keyLength: key.count, valueLength: v.count, ws.limits) {
                return LeafCell.build(key: key, storage: .inline, valueLength: v.count, payloadSize: v.count) { $0 += v }
            }
            // Blob-sized values arrive as .blob: WriteTransaction.put writes the file and logs
            // a putBlob. A replayed put always stays in the page file (Format/wal.md). The stored
            // bytes are LZ4 exactly when they are fewer than the value's (LZ4.compress returns
            // nil unless it shrinks them).
            let compressed = v.count >= 512 ? LZ4.compress(v) : nil
            let stored = compressed ?? v
            let first = writeOverflow(stored, ws)
            return LeafCell.build(key: key, storage: .overflow, valueLength: v.count, payloadSize: 12) {
                $0.appendU64(first.rawValue)
                $0.appendU32(UInt32(stored.count))
            }
        }
    }

    /// Whether a value of this length is stored inline in the leaf (Format/page-file.md § Leaf page).
    @inline(__always) static func isInline(keyLength: Int, valueLength: Int, _ limits: ValuePlacement.Limits) -> Bool {
        LeafCell.inlineSize(keyLength: keyLength, valueLength: valueLength) <= limits.maxInlineCell
    }

    /// Writes bytes to a new chain of overflow pages; returns the first page.
    static func writeOverflow(_ stored: [UInt8], _ ws: PageWorkspace) -> PageNumber {
        let cap = OverflowPage.capacity(pageSize: ws.pageSize)
        let pages = (0..<OverflowPage.pagesNeeded(stored.count, pageSize: ws.pageSize)).map { _ in ws.newPage(.overflow) }
        stored.withUnsafeBytes { src in
            for (i, page) in pages.enumerated() {
                let start = i * cap
                let n = min(cap, stored.count - start)
                page.bytes.baseAddress.map { dst in
                    src.baseAddress.map { (dst + PageHeader.size).copyMemory(from: $0 + start, byteCount: n) }
                }
                page.link = i + 1 < pages.count ? pages[i + 1].number : .none
            }
        }
        return pages.first?.number ?? .none
    }

    /// Releases the overflow pages or blob of leaf cell `index` (before it is replaced or removed).
    static func freeValue(of leaf: Page, at index: Int, _ ws: PageWorkspace) throws(EngineError) {
        switch leaf.leafStorage(index) {
        case .inline: break
        case .overflow:
            let payload = leaf.leafPayload(index)
            for p in try OverflowPage.pages(of: ws, first: PageNumber(payload.u64(0)), storedLength: Int(payload.u32(8)), file: ws.file) {
                ws.release(p)
            }
        case .blob:
            ws.freeBlob(BlobID(leaf.leafPayload(index).u64(0)))
        }
    }

    /// Copies a cell into a page at slot `index`; the caller has checked it fits in the gap.
    static func place(_ cell: UnsafeRawBufferPointer, in page: Page, at index: Int) {
        let offset = page.insertSlot(at: index, cellSize: cell.count)
        if let dst = page.bytes.baseAddress, let src = cell.baseAddress {
            (dst + offset).copyMemory(from: src, byteCount: cell.count)
        }
    }

    /// Inserts a leaf cell, compacting or splitting as needed. Returns the split, if any.
    static func insertCell(
        _ cell: [UInt8], into leaf: Page, at index: Int, appendingRightmost: Bool, ws: PageWorkspace
    ) -> (separator: [UInt8], right: PageNumber)? {
        let need = cell.count + 2
        if leaf.gap >= need {
            cell.withUnsafeBytes { place($0, in: leaf, at: index) }
            return nil
        }
        var run = CellRun(capacity: leaf.size + cell.count)
        run.appendLeafCells(of: leaf, 0..<index)
        run.append(cell)
        run.appendLeafCells(of: leaf, index..<leaf.count)
        if run.pageBytes(0..<run.count) <= leaf.size - PageHeader.size {
            run.write(0..<run.count, into: leaf, type: .leaf, link: .none)
            return nil
        }
        let splitAt = appendingRightmost ? run.count - 1 : run.byteMidpoint()
        let right = ws.newPage(.leaf)
        run.write(0..<splitAt, into: leaf, type: .leaf, link: .none)
        run.write(splitAt..<run.count, into: right, type: .leaf, link: .none)
        let separator = shortestSeparator(leaf.leafKey(leaf.count - 1), right.leafKey(0))
        return (separator, right.number)
    }

    /// The shortest key s with left < s <= right.
    static func shortestSeparator(_ left: UnsafeRawBufferPointer, _ right: UnsafeRawBufferPointer) -> [UInt8] {
        var i = 0
        while i < left.count && i < right.count && left[i] == right[i] { i += 1 }
        return Array(right[0..<min(i + 1, right.count)])
    }

    // MARK: - Branch cells

    static func branchCell(_ key: [UInt8], child: PageNumber) -> [UInt8] {
        var cell: [UInt8] = []
        cell.reserveCapacity(BranchCell.headerSize + key.count)
        cell.appendU16(UInt16(key.count))
        cell.appendU64(child.rawValue)
        cell += key
        return cell
    }

    /// Inserts separator cell `index` (its child becomes position index + 1), splitting if full.
    static func insertSeparator(
        _ key: [UInt8], child: PageNumber, into branch: Page, at index: Int, ws: PageWorkspace
    ) -> (separator: [UInt8], right: PageNumber)? {
        insertSeparators([(key, child)], into: branch, at: index, ws: ws)
    }

    /// Inserts separator cells at `index`, `index + 1`, … (each child just right of its key),
    /// splitting the branch if they do not fit. Returns the split, if any.
    static func insertSeparators(
        _ entries: [([UInt8], PageNumber)], into branch: Page, at index: Int, ws: PageWorkspace
    ) -> (separator: [UInt8], right: PageNumber)? {
        let cells = entries.map { branchCell($0.0, child: $0.1) }
        if branch.gap >= cells.reduce(0, { $0 + $1.count + 2 }) {
            for (k, cell) in cells.enumerated() { cell.withUnsafeBytes { place($0, in: branch, at: index + k) } }
            return nil
        }
        var run = CellRun(capacity: branch.size + cells.reduce(0) { $0 + $1.count })
        run.appendBranchCells(of: branch, 0..<index)
        for cell in cells { run.append(cell) }
        run.appendBranchCells(of: branch, index..<branch.count)
        let capacity = branch.size - PageHeader.size
        if run.pageBytes(0..<run.count) <= capacity {
            run.write(0..<run.count, into: branch, type: .branch, link: branch.link)
            return nil
        }
        // Promote cell `mid`: cells before it stay, cells after it move right. Start at the byte
        // midpoint and step toward the heavier side until both halves fit (separators are at most
        // a quarter page, so a few steps at most).
        var mid = max(1, min(run.byteMidpoint(), run.count - 2))
        while mid > 1 && run.pageBytes(0..<mid) > capacity { mid -= 1 }
        while mid < run.count - 2 && run.pageBytes((mid + 1)..<run.count) > capacity { mid += 1 }
        let (promotedKey, promotedChild) = run.withCell(mid) { c in
            (Array(c[BranchCell.headerSize...]), PageNumber(c.u64(BranchCell.childOffset)))
        }
        let right = ws.newPage(.branch)
        let leftmost = branch.link
        run.write(0..<mid, into: branch, type: .branch, link: leftmost)
        run.write((mid + 1)..<run.count, into: right, type: .branch, link: promotedChild)
        return (promotedKey, right.number)
    }
}

/// A value as a write transaction hands it to the tree: bytes to place, or a blob already written.
enum ValueToStore {
    case bytes([UInt8])
    case blob(BlobID, length: Int)
}
