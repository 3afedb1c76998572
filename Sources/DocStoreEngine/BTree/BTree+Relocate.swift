// BTree+Relocate: moving a tree's pages that lie at or beyond a page number toward the front of
// the file — the step of online compaction (Engine+Compact.swift). Nothing in the tree's
// contents changes; only where its pages are.
//
// A page at or beyond `boundary` is copied (copy-on-write: the workspace allocates the lowest
// free page number) and its parent is made to point at the copy, which copies the parent too;
// overflow chains with a page at or beyond the boundary are copied whole, and their leaf cell
// made to point at the new first page. Each step moves at most `budget` pages, so a step's
// memory is bounded; the caller repeats steps until nothing is left beyond the boundary.

extension BTree {
    /// Relocates the pages of the tree at `root` that lie at or beyond `boundary`, spending at
    /// most `budget` page copies (decremented); returns the tree's root afterwards.
    static func relocate(root: PageNumber, beyond boundary: UInt64, merge: Bool, budget: inout Int, in ws: PageWorkspace) throws(EngineError) -> PageNumber {
        guard root != .none else { return root }
        return try relocate(root, beyond: boundary, merge: merge, budget: &budget, depth: 0, in: ws)
    }

    private static func relocate(_ number: PageNumber, beyond boundary: UInt64, merge: Bool, budget: inout Int, depth: Int,
                                 in ws: PageWorkspace) throws(EngineError) -> PageNumber {
        guard depth < maxDepth else { throw .corrupt("tree deeper than \(maxDepth)", page: number) }
        let page = try ws.page(number)
        var copy: Page?
        // The page made writable (copied unless this transaction owns it); its cost is counted
        // once, at the end.
        func mine() -> Page {
            if let copy { return copy }
            let c = ws.writable(page)
            copy = c
            return c
        }
        defer { if let copy, copy !== page { budget -= 1 } }
        switch page.type {
        case .branch:
            if merge, budget > 0, page.childCount > 1, try ws.page(page.child(at: 0)).type == .leaf {
                try mergeLeaves(of: page, mine: mine, budget: &budget, in: ws)
            }
            for i in 0..<(copy ?? page).childCount where budget > 0 {
                let child = (copy ?? page).child(at: i)
                let moved = try relocate(child, beyond: boundary, merge: merge, budget: &budget, depth: depth + 1, in: ws)
                if moved != child { mine().setChild(at: i, moved) }
            }
        case .leaf:
            for i in 0..<page.count where budget > 0 && page.leafStorage(i) == .overflow {
                let payload = (copy ?? page).leafPayload(i)
                let first = PageNumber(payload.u64(0))
                let chain = try OverflowPage.pages(of: ws, first: first, storedLength: Int(payload.u32(8)), file: ws.file)
                guard chain.contains(where: { $0.rawValue >= boundary }) else { continue }
                var previous: Page?
                var newFirst = first
                for p in chain {
                    let original = try ws.page(p)
                    let moved = ws.writable(original)
                    if moved !== original { budget -= 1 }
                    if let previous { previous.link = moved.number } else { newFirst = moved.number }
                    previous = moved
                }
                let leaf = mine()
                leaf.bytes.setU64(leaf.leafValueInfo(i).payloadStart, newFirst.rawValue)
            }
        default:
            throw .corrupt("tree reaches a page that is neither a branch nor a leaf", page: number)
        }
        if copy == nil, number.rawValue >= boundary, budget > 0 { _ = mine() }
        return copy?.number ?? number
    }

    /// Merges neighbouring leaves under one branch whose cells fit in one page together (deletes
    /// leave leaves underfull: BTree+Delete): the right one's cells move into a copy of the left
    /// one, the right one is freed and its slot removed from the branch. Overflow and blob cells
    /// move as they are (their chains belong to the cell, not the page).
    private static func mergeLeaves(of branch: Page, mine: () -> Page, budget: inout Int, in ws: PageWorkspace) throws(EngineError) {
        var parent = branch
        var i = 0
        while i + 1 < parent.childCount && budget > 0 {
            let left = try ws.page(parent.child(at: i))
            let right = try ws.page(parent.child(at: i + 1))
            guard left.type == .leaf, right.type == .leaf else { i += 1; continue }
            var run = CellRun()
            run.appendLeafCells(of: left, 0..<left.count)
            run.appendLeafCells(of: right, 0..<right.count)
            guard run.pageBytes(0..<run.count) <= left.size - PageHeader.size else { i += 1; continue }
            parent = mine()
            let target = ws.writable(left)
            run.write(0..<run.count, into: target, type: .leaf, link: left.link)
            ws.release(right.number)
            parent.setChild(at: i, target.number)
            parent.removeSlot(at: i)      // the separator before child i + 1, and that child
            budget -= 1
        }
    }
}
