// BTree+Delete: removing a key from a copy-on-write B+tree.
//
// The leaf is made writable and the cell removed (its overflow pages or blob released). A leaf
// that becomes empty is freed and removed from its parent; a branch left with no children is
// removed the same way; a root branch left with one child is replaced by that child, so the tree
// shrinks a level. All leaves stay at one depth. Underfull (but non-empty) pages are left as they
// are: lookups stay correct, and later inserts refill them.

extension BTree {
    /// Removes `key`. Returns the new root and whether the key was there.
    static func delete(_ key: [UInt8], root: PageNumber, in ws: PageWorkspace) throws(EngineError) -> (root: PageNumber, removed: Bool) {
        guard root != .none else { return (root, false) }
        var path: [(page: Page, position: Int)] = []
        var page = try ws.page(root)
        let (index, found) = try withRawBytes(key) { (k) throws(EngineError) -> (Int, Bool) in
            while page.type == .branch {
                guard path.count < maxDepth else { throw .corrupt("tree deeper than \(maxDepth)", page: page.number) }
                let pos = page.childPosition(for: k)
                path.append((page, pos))
                page = try ws.page(page.child(at: pos))
            }
            guard page.type == .leaf else { throw .corrupt("tree reaches a non-node page", page: page.number) }
            return leafSearch(page, k)
        }
        guard found else { return (root, false) }
        let leaf = ws.writable(page)
        try freeValue(of: leaf, at: index, ws)
        leaf.removeSlot(at: index)
        var child: PageNumber? = leaf.number
        if leaf.count == 0 {
            ws.release(leaf.number)
            child = nil
        }
        for (parentOld, position) in path.reversed() {
            if let c = child, ws.isOwned(parentOld), parentOld.child(at: position) == c {
                return (path[0].page.number, true)
            }
            let parent = ws.writable(parentOld)
            if let c = child {
                parent.setChild(at: position, c)
            } else if parent.count == 0 {
                ws.release(parent.number)
                continue
            } else if position == 0 {
                parent.link = parent.child(at: 1)
                parent.removeSlot(at: 0)
            } else {
                parent.removeSlot(at: position - 1)
            }
            child = parent.number
        }
        guard var newRoot = child else { return (.none, true) }
        var top = try ws.page(newRoot)
        while top.type == .branch && top.count == 0 {
            ws.release(top.number)
            newRoot = top.link
            top = try ws.page(newRoot)
        }
        return (newRoot, true)
    }

    /// Frees every page of a tree (and its overflow chains and blobs), for dropping it.
    static func freeAll(root: PageNumber, in ws: PageWorkspace) throws(EngineError) {
        guard root != .none else { return }
        var stack = [root]
        while let n = stack.popLast() {
            let page = try ws.page(n)
            if page.type == .branch {
                for p in 0..<page.childCount { stack.append(page.child(at: p)) }
            } else {
                for i in 0..<page.count { try freeValue(of: page, at: i, ws) }
            }
            ws.release(n)
        }
    }
}
