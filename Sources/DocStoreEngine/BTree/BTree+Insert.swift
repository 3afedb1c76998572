// BTree+Insert: putting a key and value into a copy-on-write B+tree (Format/page-file.md).
//
// The descent records the path; the leaf is made writable (copied unless this transaction owns
// it), the cell is placed, and the walk back up copies each ancestor so it points at the new
// child. A full page splits: leaves at the byte midpoint — or, when appending at the end of the
// rightmost leaf (sequential inserts), with the old cells left full — and the parent gets the
// shortest separator between the halves. A root split grows the tree by one level. Before
// splitting, a full leaf shares its cells with a sibling that has room (redistribute).

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
            self.maxKeySize = maxInlineCell - LeafCell.headerSize - LeafCell.overflowPayloadSize
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
        // separator between them moves); only when both are full does it split. This keeps
        // pages fuller under random inserts (B*-tree style) and the file smaller.
        if !appending, !fits(cell, in: leaf), let parentEntry = path.last,
           let shared = try redistribute(cell, at: index, leaf: leaf, parent: parentEntry.page, position: parentEntry.position, ws: ws) {
            path.removeLast()
            let parent = ws.writable(parentEntry.page)
            parent.setChild(at: shared.leftPosition, shared.left)
            parent.removeSlot(at: shared.leftPosition)
            var split = insertSeparator(shared.separator, child: shared.right, into: parent, at: shared.leftPosition, ws: ws)
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

    /// Spreads a full leaf's cells plus the new one over the leaf and its right (or left)
    /// sibling under the same parent, if together they fit in two pages with room to spare.
    /// Returns the two pages' numbers, the parent position of the left one and the separator
    /// between them; nil when neither sibling has room.
    static func redistribute(
        _ cell: [UInt8], at index: Int, leaf: Page, parent: Page, position: Int, ws: PageWorkspace
    ) throws(EngineError) -> (leftPosition: Int, left: PageNumber, right: PageNumber, separator: [UInt8])? {
        let capacity = leaf.size - PageHeader.size
        var leafBytes = cell.count + 2
        for i in 0..<leaf.count { leafBytes += leaf.leafCellSize(i) + 2 }
        for siblingPosition in [position + 1, position - 1] where siblingPosition >= 0 && siblingPosition <= parent.count {
            let siblingOld = try ws.page(parent.child(at: siblingPosition))
            guard siblingOld.type == .leaf else { continue }
            var siblingBytes = 0
            for i in 0..<siblingOld.count { siblingBytes += siblingOld.leafCellSize(i) + 2 }
            // Worth it only if the pair ends up no more than 96 % full (measured: fuller pairs make the
            // next insert redistribute again too often; 96 % keeps bulk loads as fast as 90 %).
            guard leafBytes + siblingBytes <= capacity * 2 * 96 / 100 else { continue }
            var all = CellRun(capacity: leafBytes + siblingBytes)
            if siblingPosition < position { all.appendLeafCells(of: siblingOld, 0..<siblingOld.count) }
            all.appendLeafCells(of: leaf, 0..<index)
            all.append(cell)
            all.appendLeafCells(of: leaf, index..<leaf.count)
            if siblingPosition > position { all.appendLeafCells(of: siblingOld, 0..<siblingOld.count) }
            let at = all.byteMidpoint()
            guard all.pageBytes(0..<at) <= capacity, all.pageBytes(at..<all.count) <= capacity else { continue }
            let sibling = ws.writable(siblingOld)
            let (left, right) = siblingPosition > position ? (leaf, sibling) : (sibling, leaf)
            all.write(0..<at, into: left, type: .leaf, link: .none)
            all.write(at..<all.count, into: right, type: .leaf, link: .none)
            let separator = shortestSeparator(left.leafKey(left.count - 1), right.leafKey(0))
            return (min(position, siblingPosition), left.number, right.number, separator)
        }
        return nil
    }

    // MARK: - Leaf cells

    /// Builds a leaf cell, moving a large value to overflow pages or a blob file.
    static func makeLeafCell(_ key: [UInt8], _ value: ValueToStore, _ ws: PageWorkspace) throws(EngineError) -> [UInt8] {
        var cell: [UInt8] = []
        switch value {
        case .blob(let id, let length):
            cell.reserveCapacity(LeafCell.headerSize + key.count + 8)
            cell.append(ValueStorage.blob.rawValue)
            cell.appendU16(UInt16(key.count))
            cell.appendU32(UInt32(length))
            cell += key
            cell.appendU64(id.rawValue)
        case .bytes(let v):
            let inlineSize = LeafCell.headerSize + key.count + v.count
            if inlineSize <= ws.limits.maxInlineCell {
                cell.reserveCapacity(inlineSize)
                cell.append(ValueStorage.inline.rawValue)
                cell.appendU16(UInt16(key.count))
                cell.appendU32(UInt32(v.count))
                cell += key
                cell += v
            } else {
                // Blob-sized values arrive as .blob: WriteTransaction.put writes the file and logs
                // a putBlob. A replayed put always stays in the page file (Format/wal.md).
                let compressed = v.count >= 512 ? LZ4.compress(v) : nil
                let stored = compressed ?? v
                let first = writeOverflow(stored, ws)
                cell.append(ValueStorage.overflow.rawValue | (compressed != nil ? LeafCell.compressedFlag : 0))
                cell.appendU16(UInt16(key.count))
                cell.appendU32(UInt32(v.count))
                cell += key
                cell.appendU64(first.rawValue)
                cell.appendU32(UInt32(stored.count))
            }
        }
        return cell
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
        let cell = branchCell(key, child: child)
        if branch.gap >= cell.count + 2 {
            cell.withUnsafeBytes { place($0, in: branch, at: index) }
            return nil
        }
        var run = CellRun(capacity: branch.size + cell.count)
        run.appendBranchCells(of: branch, 0..<index)
        run.append(cell)
        run.appendBranchCells(of: branch, index..<branch.count)
        if run.pageBytes(0..<run.count) <= branch.size - PageHeader.size {
            run.write(0..<run.count, into: branch, type: .branch, link: branch.link)
            return nil
        }
        let mid = max(1, min(run.byteMidpoint(), run.count - 2))
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
