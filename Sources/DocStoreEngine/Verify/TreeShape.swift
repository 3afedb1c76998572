// TreeShape: one B+tree's shape for `docstore inspect --tree NAME` — how deep it is, how many
// pages each level has, how many children a branch has (fan-out), how full its pages are, and
// where its large values live (overflow chains, blob files). Read from the published state of
// the tree, through the page cache, within the writer lock's snapshot of the catalog; nothing
// is changed.
//
//   TS1 levels are listed root first; a tree's leaves are all on the last level (T1).
//   TS2 fill is the bytes a level's cells and slots use over what its pages offer (the page
//       size minus the 32-byte header), so holes left by deletes count as empty.

/// The shape of one tree.
public struct TreeShape: Sendable {
    /// One level of the tree.
    public struct Level: Sendable {
        public var pages = 0
        /// Cells: entries on the leaf level, separators on a branch level.
        public var cells = 0
        /// The fewest and most cells a page of this level has.
        public var minCells = Int.max
        public var maxCells = 0
        /// Bytes used by cells and slots (TS2).
        public var usedBytes = 0
        /// Whether this is the leaf level.
        public var isLeaf = false

        /// Used bytes over the bytes the level's pages offer (TS2), 0…1.
        public func fill(pageSize: Int) -> Double {
            pages == 0 ? 0 : Double(usedBytes) / Double(pages * (pageSize - PageHeader.size))
        }

        /// Children per branch page on average (branch levels only; 0 for the leaf level).
        public var fanOut: Double { isLeaf || pages == 0 ? 0 : Double(cells + pages) / Double(pages) }
    }

    public var name: String
    public var root: PageNumber
    /// Entries, as the catalog counts them.
    public var entries: UInt64
    public var pageSize: Int
    /// Root first (TS1); empty for an empty tree.
    public var levels: [Level]
    /// Values stored in overflow chains, and the pages of those chains.
    public var overflowValues = 0
    public var overflowPages = 0
    /// Values stored as blob files.
    public var blobValues = 0
    /// Inline values' bytes, and the keys' bytes.
    public var keyBytes = 0
    public var inlineValueBytes = 0

    /// Levels: 1 when the root is a leaf, 0 for an empty tree.
    public var depth: Int { levels.count }
    public var pages: Int { levels.reduce(0) { $0 + $1.pages } + overflowPages }
}

extension Engine {
    /// The shape of the tree `name` (TS1, TS2); nil when there is no such tree.
    public func treeShape(_ name: String) throws(EngineError) -> TreeShape? {
        try readInternal { (txn) throws(EngineError) -> TreeShape? in
            guard let info = try txn.info(name) else { return nil }
            var shape = TreeShape(name: name, root: info.root, entries: info.count, pageSize: pageSize, levels: [])
            var level: [PageNumber] = info.root == .none ? [] : [info.root]
            while !level.isEmpty {
                guard shape.levels.count <= BTree.maxDepth else {
                    throw .corrupt("tree \(name) is deeper than \(BTree.maxDepth) levels", file: paths.pageFile, page: info.root)
                }
                var summary = TreeShape.Level()
                var next: [PageNumber] = []
                for n in level {
                    let page = try pager.page(n)
                    summary.pages += 1
                    summary.cells += page.count
                    summary.minCells = min(summary.minCells, page.count)
                    summary.maxCells = max(summary.maxCells, page.count)
                    if page.type == .leaf {
                        summary.isLeaf = true
                        summary.usedBytes += page.leafBytesInUse()
                        for i in 0..<page.count {
                            shape.keyBytes += page.leafKey(i).count
                            let value = page.leafValueInfo(i)
                            switch value.storage {
                            case .inline: shape.inlineValueBytes += value.valueLength
                            case .blob: shape.blobValues += 1
                            case .overflow:
                                shape.overflowValues += 1
                                let payload = page.leafPayload(i)
                                shape.overflowPages += OverflowPage.pagesNeeded(Int(payload.u32(8)), pageSize: pageSize)
                            }
                        }
                    } else {
                        for i in 0..<page.count { summary.usedBytes += 2 + page.branchCellSize(i) }
                        for p in 0..<page.childCount { next.append(page.child(at: p)) }
                    }
                }
                if summary.pages == 0 { summary.minCells = 0 }
                shape.levels.append(summary)
                level = next
            }
            return shape
        }
    }
}
