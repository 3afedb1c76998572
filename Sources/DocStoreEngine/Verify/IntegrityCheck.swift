// IntegrityCheck: the full check behind `Engine.verify()` and `docstore verify` (bbolt's
// tx_check.go). Over the latest committed state it checks:
//   - every tree: node types, all leaves at one depth, keys strictly ascending within each page and
//     inside the bounds its parent's separators give, the entry count the catalog records;
//   - every overflow chain: length and page types; every blob reference: registered in "$blobs"
//     and its file present and valid;
//   - page ownership: each page in [2, pageCount) is exactly one of live (reachable once), free
//     (ready or pending), or a durable free-list page — none used twice, none lost;
//   - on-disk checksums of every live page the file holds (I10), when `readingDisk` is true.
// It runs under the writer lock, so the state it sees is not changing.

/// One problem the integrity check found.
public struct IntegrityProblem: Sendable, CustomStringConvertible, Equatable {
    public var tree: String?
    public var page: PageNumber?
    public var message: String
    public var description: String {
        [tree.map { "tree '\($0)'" }, page.map { "page \($0.rawValue)" }, message].compactMap { $0 }.joined(separator: ": ")
    }
}

/// The result of ``Engine/verify(readingDisk:)``.
public struct IntegrityReport: Sendable {
    /// Every problem found; empty when the store is sound.
    public var problems: [IntegrityProblem] = []
    /// Pages reachable from the trees.
    public var livePages = 0
    /// Pages free for reuse.
    public var freePages = 0
    /// Entries per tree (the engine's own trees included).
    public var entries: [String: Int] = [:]
    /// Whether no problem was found.
    public var isClean: Bool { problems.isEmpty }
}

extension Engine {
    /// Checks the whole store (see IntegrityCheck.swift for the list). Problems are reported, not
    /// thrown: the check goes on past the first.
    ///
    /// - Parameters:
    ///   - readingDisk: also re-read every page the file should hold and check its checksum
    ///     (slower; catches corruption behind the cache).
    ///   - progress: called now and then with the pages checked so far and the file's page
    ///     count (for a progress bar; the count may end below the total: free pages are not read).
    /// - Throws: `.closed`; I/O errors reading the file.
    public func verify(readingDisk: Bool = true, progress: ((_ pages: Int, _ total: Int) -> Void)? = nil) throws(EngineError) -> IntegrityReport {
        try writer.withLock { (state) throws(EngineError) -> IntegrityReport in
            var check = IntegrityWalk(engine: self, readingDisk: readingDisk, pinned: pager.cache.withLock { $0.pinned })
            if let progress {
                let total = Int(state.durableMeta.pageCount)
                check.onPage = { pages in if pages % 256 == 0 { progress(pages, total) } }
            }
            let (lsn, catalogRoot) = published.withLock { ($0.lsn, $0.catalogRoot) }
            _ = lsn
            try check.walkTree(name: "$catalog", root: catalogRoot, expectedCount: nil)
            // Each tree named in the catalog.
            var trees: [(String, TreeInfo)] = []
            do throws(EngineError) {
                var cursor = Cursor(source: pager, root: catalogRoot, blobs: nil, file: pager.path)
                var e = try cursor.first()
                while let entry = e {
                    let name = String(decoding: entry.key, as: UTF8.self)
                    do throws(EngineError) {
                        trees.append((name, try TreeInfo.decode(entry.value, name: name, file: pager.path)))
                    } catch {
                        check.problem(tree: "$catalog", page: nil, error.message)
                    }
                    e = try cursor.next()
                }
            } catch {
                check.problem(tree: "$catalog", page: error.page, "cannot list the trees: \(error.message)")
            }
            for (name, info) in trees {
                try check.walkTree(name: name, root: info.root, expectedCount: info.count)
            }
            check.checkBlobs(trees.first { $0.0 == TreeInfo.blobTreeName }?.1)
            progress?(check.owner.count, Int(state.durableMeta.pageCount))

            // Page ownership. The free list is read here if nothing has read it yet (rules F1-F5);
            // a damaged one is a problem of its own, and ownership cannot be checked without it.
            let space: FreeSpace
            do throws(EngineError) {
                space = try state.freeSpace(pager)
            } catch {
                check.problem(tree: nil, page: error.page, "free list: \(error.message)")
                return check.report
            }
            let pageCount = space.pageCount
            var owner: [UInt64: String] = check.owner
            func claim(_ p: UInt64, _ what: String) {
                if p < 2 || p >= pageCount {
                    check.problem(tree: nil, page: PageNumber(p), "\(what) page is outside the file's \(pageCount) pages")
                } else if let other = owner[p] {
                    check.problem(tree: nil, page: PageNumber(p), "page is both \(other) and \(what)")
                } else {
                    owner[p] = what
                }
            }
            let free = space.allFree
            for p in free { claim(p, "free") }
            for p in space.durableFreeListPages { claim(p, "free list") }
            if pageCount > 2 {
                for p in UInt64(2)..<pageCount where owner[p] == nil {
                    check.problem(tree: nil, page: PageNumber(p), "page is neither used nor free (lost)")
                }
            }
            check.report.livePages = check.owner.count
            check.report.freePages = free.count
            return check.report
        }
    }
}

struct IntegrityWalk {
    let engine: Engine
    let readingDisk: Bool
    let pinned: Set<UInt64>
    var report = IntegrityReport()
    var owner: [UInt64: String] = [:]
    var blobRefs: [BlobID: Int] = [:]
    /// Called with the number of pages read so far, after each (a progress bar's feed).
    var onPage: ((Int) -> Void)?

    init(engine: Engine, readingDisk: Bool, pinned: Set<UInt64>) {
        self.engine = engine
        self.readingDisk = readingDisk
        self.pinned = pinned
    }

    mutating func problem(tree: String?, page: PageNumber?, _ message: String) {
        if report.problems.count < 1000 { report.problems.append(IntegrityProblem(tree: tree, page: page, message: message)) }
    }

    /// Reads a page through the cache, and from disk too if asked; a failure is a problem.
    mutating func read(_ n: PageNumber, tree: String) -> Page? {
        if let other = owner[n.rawValue] {
            problem(tree: tree, page: n, "page is reached twice (also by \(other))")
            return nil
        }
        owner[n.rawValue] = tree
        onPage?(owner.count)
        do throws(EngineError) {
            if readingDisk && !pinned.contains(n.rawValue) {
                _ = try engine.pager.readFromFile(n)
            }
            return try engine.pager.page(n)
        } catch {
            problem(tree: tree, page: n, error.message)
            return nil
        }
    }

    mutating func walkTree(name: String, root: PageNumber, expectedCount: UInt64?) throws(EngineError) {
        var count: UInt64 = 0
        var leafDepth: Int?
        // (page, depth, lower bound inclusive, upper bound exclusive)
        var stack: [(PageNumber, Int, [UInt8]?, [UInt8]?)] = root == .none ? [] : [(root, 0, nil, nil)]
        while let (n, depth, low, high) = stack.popLast() {
            guard depth <= BTree.maxDepth else { problem(tree: name, page: n, "tree deeper than \(BTree.maxDepth)"); continue }
            guard let page = read(n, tree: name) else { continue }
            guard page.type == .leaf || page.type == .branch else {
                problem(tree: name, page: n, "a \(page.type.map { "\($0)" } ?? "unknown") page inside a tree")
                continue
            }
            let isLeaf = page.type == .leaf
            var previous: [UInt8]? = nil
            for i in 0..<page.count {
                let key = Array(isLeaf ? page.leafKey(i) : page.branchKey(i))
                if let previous, !previous.lexicographicallyPrecedes(key) {
                    problem(tree: name, page: n, "key \(i) is not greater than key \(i - 1)")
                }
                if let low, key.lexicographicallyPrecedes(low) { problem(tree: name, page: n, "key \(i) is below its parent's separator") }
                if let high, !key.lexicographicallyPrecedes(high) { problem(tree: name, page: n, "key \(i) is not below the next separator") }
                previous = key
            }
            if isLeaf {
                if page.count == 0 && n != root { problem(tree: name, page: n, "empty non-root leaf") }
                if let d = leafDepth, d != depth { problem(tree: name, page: n, "leaf at depth \(depth), others at \(d)") }
                leafDepth = depth
                count += UInt64(page.count)
                for i in 0..<page.count { checkValue(page, i, tree: name) }
            } else {
                for p in 0..<page.childCount {
                    let lo = p == 0 ? low : Array(page.branchKey(p - 1))
                    let hi = p < page.count ? Array(page.branchKey(p)) : high
                    stack.append((page.child(at: p), depth + 1, lo, hi))
                }
            }
        }
        if let expectedCount, expectedCount != count {
            problem(tree: name, page: root, "catalog records \(expectedCount) entries, the tree holds \(count)")
        }
        report.entries[name] = Int(count)
    }

    mutating func checkValue(_ leaf: Page, _ i: Int, tree: String) {
        let payload = leaf.leafPayload(i)
        switch leaf.leafStorage(i) {
        case .inline: break
        case .overflow:
            let first = PageNumber(payload.u64(0))
            let stored = Int(payload.u32(8))
            do throws(EngineError) {
                for p in try OverflowPage.pages(of: engine.pager, first: first, storedLength: stored, file: engine.pager.path) {
                    _ = read(p, tree: tree)
                }
            } catch {
                problem(tree: tree, page: leaf.number, "overflow chain of cell \(i): \(error.message)")
            }
        case .blob:
            blobRefs[BlobID(payload.u64(0)), default: 0] = leaf.leafValueLength(i)
        }
    }

    mutating func checkBlobs(_ info: TreeInfo?) {
        var registered = Set<BlobID>()
        if let info, info.root != .none {
            var cursor = Cursor(source: engine.pager, root: info.root, blobs: nil, file: engine.pager.path)
            var e = try? cursor.first()
            while let entry = e {
                if entry.key.count == 8 {
                    registered.insert(BlobID(entry.key.withUnsafeBytes { UInt64(bigEndian: $0.loadUnaligned(as: UInt64.self)) }))
                }
                e = try? cursor.next()
            }
        }
        for (id, length) in blobRefs {
            if !registered.contains(id) { problem(tree: TreeInfo.blobTreeName, page: nil, "\(id) is referenced but not registered") }
            do throws(EngineError) {
                _ = try engine.blobs?.read(id, expectedLength: length)
            } catch {
                problem(tree: TreeInfo.blobTreeName, page: nil, "\(id): \(error.message)")
            }
        }
        for id in registered where blobRefs[id] == nil {
            problem(tree: TreeInfo.blobTreeName, page: nil, "\(id) is registered but no value references it")
        }
    }
}
