// Pager: the page cache between the B+trees and the page file.
//
// Crash-safety invariants enforced here and in Checkpoint.swift / FreeSpace.swift:
//   I1  A page referenced by the durable meta page is never written: the allocator hands out only
//       pages the durable checkpoint does not use (FreeSpace), and the cache writes pages to the file
//       only at checkpoint (a large write transaction spills only pages it allocated itself,
//       PageWorkspace.spill).
//   I9  A free page is reused only when no live snapshot and not the durable checkpoint can reach
//       it (FreeSpace.allocate).
//   I10 Every page read from disk is validated (checksum, own number, type, cell bounds) before it
//       enters the cache.
//
// The cache maps page numbers to immutable Page objects. For any page number at most one version
// is reachable from the live snapshots and the current state (I9), so one map serves them all.
// "Pinned" pages are those whose bytes the file does not hold yet (written since the last
// checkpoint); they are never evicted. Clean pages are evicted when the cache is over capacity.


/// Anything B+tree reads can get pages from: a snapshot (through the pager) or a write transaction
/// (its own new pages first).
protocol PageSource {
    func page(_ number: PageNumber) throws(EngineError) -> Page
    /// A page a long walk passes through (a cursor past `Cursor.passingAfter` leaves): as
    /// `page`, but a leaf read from the file is not kept, so a scan of a large tree does not
    /// fill the cache with pages it reads once.
    func pageInPassing(_ number: PageNumber) throws(EngineError) -> Page
    var pageSize: Int { get }
    /// The page `number` if it is at hand without reading the file (a cursor's look-ahead);
    /// nil otherwise.
    func cachedPage(_ number: PageNumber) -> Page?
}

extension PageSource {
    func pageInPassing(_ number: PageNumber) throws(EngineError) -> Page { try page(number) }
    func cachedPage(_ number: PageNumber) -> Page? { nil }
}

final class Pager: Sendable {
    /// The cache is a dense table indexed by page number (a lookup is an index, not a hash), with
    /// the pinned set beside it.
    struct Cache {
        var pages: [Page?] = []
        var resident = 0
        var pinned: Set<UInt64> = []
        var capacity: Int

        @inline(__always) func get(_ n: UInt64) -> Page? {
            n < UInt64(pages.count) ? pages[Int(n)] : nil
        }

        mutating func set(_ n: UInt64, _ page: Page?) {
            let i = Int(n)
            if i >= pages.count {
                guard page != nil else { return }
                // Built in one allocation with a typed fill: appending `repeatElement(nil, …)`
                // went element by element (1.4M instructions for the first read of page ~67 000
                // in a new process).
                let old = pages
                let newCount = max(i + 1, pages.count * 2)
                pages = [Page?](unsafeUninitializedCapacity: newCount) { buffer, initialized in
                    guard let base = buffer.baseAddress else { return }
                    old.withUnsafeBufferPointer { src in
                        if let s = src.baseAddress { base.initialize(from: s, count: src.count) }
                    }
                    (base + old.count).initialize(repeating: nil, count: newCount - old.count)
                    initialized = newCount
                }
            }
            let had = pages[i] != nil
            pages[i] = page
            resident += (page != nil ? 1 : 0) - (had ? 1 : 0)
        }
    }

    let file: any StorageFile
    let path: String
    let pageSize: Int
    let cache: Locked<Cache>

    init(file: any StorageFile, pageSize: Int, cachePages: Int) {
        self.file = file
        self.path = file.path
        self.pageSize = pageSize
        self.cache = Locked(Cache(capacity: max(cachePages, 64)))
    }

    /// The page `number`, from the cache or read and validated from the file (I10).
    func page(_ number: PageNumber) throws(EngineError) -> Page {
        if let page = cache.withLock({ $0.get(number.rawValue) }) { return page }
        return keep(try readFromFile(number))
    }

    /// The page `number` for a long walk: from the cache if it is there; else read and validated
    /// (I10), and kept only if it is a branch (a scan's leaves are read once; the branches above
    /// them serve every lookup). A miss reads the file, as `page` does: pages the file does not
    /// hold yet are pinned in the cache.
    func pageInPassing(_ number: PageNumber) throws(EngineError) -> Page {
        if let page = cache.withLock({ $0.get(number.rawValue) }) { return page }
        let page = try readFromFile(number)
        return page.type == .leaf ? page : keep(page)
    }

    /// Puts a page just read from the file into the cache (evicting if it is full) and returns
    /// it — or the copy another thread put there first, so every reader shares one.
    private func keep(_ page: Page) -> Page {
        cache.withLock { c in
            if let existing = c.get(page.number.rawValue) { return existing }
            if c.resident >= c.capacity { Pager.evict(&c) }
            c.set(page.number.rawValue, page)
            return page
        }
    }

    /// Reads and validates a page from the file, bypassing the cache.
    func readFromFile(_ number: PageNumber, expecting type: PageType? = nil) throws(EngineError) -> Page {
        try Pager.read(number, from: file, path: path, pageSize: pageSize, expecting: type)
    }

    /// Page `number` of `file` as it is on disk, checked as a page read from disk must be (I10:
    /// header, checksum, cells): what the pager reads into its cache, and what salvage reads.
    static func read(_ number: PageNumber, from file: any StorageFile, path: String, pageSize: Int,
                     expecting type: PageType? = nil) throws(EngineError) -> Page {
        guard number.rawValue >= 2 else {
            throw .corrupt("a link points at meta page \(number.rawValue)", file: path, page: number)
        }
        let page = Page(number: number, size: pageSize)
        let offset = number.rawValue &* UInt64(pageSize)
        let n = try file.read(into: page.bytes, at: offset)
        guard n == pageSize else {
            throw .corrupt("page lies beyond the end of the file (\(n) of \(pageSize) bytes)", file: path, page: number, offset: offset)
        }
        try page.validate(file: path, expecting: type)
        switch page.type {
        case .leaf: try page.validateLeafCells(file: path)
        case .branch: try page.validateBranchCells(file: path)
        default: break
        }
        return page
    }

    /// Puts pages a commit created into the cache, pinned until a checkpoint writes them.
    func install(_ pages: some Sequence<Page>) {
        cache.withLock { c in
            for page in pages {
                c.set(page.number.rawValue, page)
                c.pinned.insert(page.number.rawValue)
            }
        }
    }

    /// Marks pages as held by the file (after a checkpoint wrote them): evictable from now on.
    func unpin(_ numbers: some Sequence<UInt64>) {
        cache.withLock { c in for n in numbers { c.pinned.remove(n) } }
    }

    /// Forgets pages nothing can reach any more (freed pages that became reusable), or whose
    /// bytes only the file holds (pages a committed transaction spilled).
    func drop(_ numbers: some Sequence<UInt64>) {
        cache.withLock { c in
            for n in numbers {
                c.set(n, nil)
                c.pinned.remove(n)
            }
        }
    }

    /// Drops page `number` from the cache if the file holds its bytes (it is not pinned): a
    /// write transaction replaced or freed it, so only older snapshots may read it again, and
    /// they read it from the file (I10). A delete of half a store's objects copies most of its
    /// pages; keeping the originals too held the store's size twice.
    func forgetClean(_ number: UInt64) {
        cache.withLock { c in
            if c.get(number) != nil && !c.pinned.contains(number) { c.set(number, nil) }
        }
    }

    /// The cached page, if any (checkpoint finds the pages to write with it; a cursor's
    /// look-ahead, through `PageSource`, reads no file with it).
    func cachedPage(_ number: UInt64) -> Page? { cache.withLock { $0.get(number) } }

    func cachedPage(_ number: PageNumber) -> Page? { cachedPage(number.rawValue) }

    /// Evicts about a quarter of the clean pages, starting at a point that moves on each call.
    private static func evict(_ c: inout Cache) {
        let target = c.capacity * 3 / 4
        let n = c.pages.count
        guard n > 0 else { return }
        var i = Int(UInt64(c.resident &* 2654435761) % UInt64(n))
        var scanned = 0
        while c.resident > target && scanned < n {
            if c.pages[i] != nil && !c.pinned.contains(UInt64(i)) {
                c.pages[i] = nil
                c.resident -= 1
            }
            i = (i + 1) % n
            scanned += 1
        }
    }
}

extension Pager: PageSource {}
