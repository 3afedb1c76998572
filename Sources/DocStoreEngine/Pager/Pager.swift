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
    /// Pages `first ..< first + count`, which a long forward walk is about to step onto in that
    /// order, read from the file with one call (`ReadAheadRun`); nil when the first is cached,
    /// when this source reads no file, or when the read fails (each page is then read as usual,
    /// and a failure is reported only for a page the walk needs). Nothing is checked here.
    func readAhead(from first: PageNumber, count: Int) -> ReadAheadRun?
    /// Page `number` for a long walk that read `run` ahead: the cache's copy if it has one, else
    /// made from the run's bytes (when the run holds it) and checked as any page read from the
    /// file (I10). A page made from a run is never put in the cache: the run is good for its
    /// cursor's snapshot only, and the cache serves every reader.
    func pageInPassing(_ number: PageNumber, from run: ReadAheadRun) throws(EngineError) -> Page
}

extension PageSource {
    func pageInPassing(_ number: PageNumber) throws(EngineError) -> Page { try page(number) }
    func cachedPage(_ number: PageNumber) -> Page? { nil }
    func readAhead(from first: PageNumber, count: Int) -> ReadAheadRun? { nil }
    func pageInPassing(_ number: PageNumber, from run: ReadAheadRun) throws(EngineError) -> Page {
        try pageInPassing(number)
    }
}

/// Consecutive pages of the file read with one call for a cursor walking forward over
/// consecutive leaves in passing (Cursor R1): a scan of a tree written in key order reads its
/// leaves a run at a time instead of one read(2) each — half of fetching every note was the
/// kernel's cost per call. Held by the cursor of one snapshot only, and never copied into the
/// shared cache: a page number's contents do not change while a snapshot that reaches it is
/// open, but they may once it ends (a cursor kept past its transaction must not leave an old
/// page where other readers would find it).
struct ReadAheadRun {
    let first: PageNumber
    /// How many whole pages `bytes` holds (at most 64).
    let count: Int
    let bytes: [UInt8]
    /// Bit i: page `first + i` was not in the cache before the read, so the file held it (a
    /// committed page stays pinned in the cache until a checkpoint has written it) and the bytes
    /// read are its contents for this snapshot. A page that was cached is taken from the cache,
    /// never from these bytes: the file may have held an older page of that number.
    let fromFile: UInt64

    func holds(_ number: PageNumber) -> Bool {
        guard number.rawValue >= first.rawValue else { return false }
        let i = number.rawValue - first.rawValue
        return i < UInt64(count) && fromFile & (1 << i) != 0
    }

    func contains(_ number: PageNumber) -> Bool {
        number.rawValue >= first.rawValue && number.rawValue - first.rawValue < UInt64(count)
    }
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

    func readAhead(from first: PageNumber, count: Int) -> ReadAheadRun? {
        let count = min(count, 64)
        // A damaged branch can name any page: numbers whose offset does not fit are not read ahead.
        guard count > 1, first.rawValue >= 2, first.rawValue <= (UInt64.max / UInt64(pageSize)) &- UInt64(count) else { return nil }
        // Which pages the file holds for this snapshot: those the cache does not (before the read).
        let fromFile: UInt64 = cache.withLock { c in
            guard c.get(first.rawValue) == nil else { return 0 }   // cached: the run is likely cached too
            var mask: UInt64 = 0
            for i in 0..<count where c.get(first.rawValue &+ UInt64(i)) == nil { mask |= 1 << UInt64(i) }
            return mask
        }
        guard fromFile & 1 != 0 else { return nil }
        // Uninitialized: the read fills what it returns, and only that is used.
        let size = count * pageSize
        var bytes = [UInt8](unsafeUninitializedCapacity: size) { _, initialized in initialized = size }
        let offset = first.rawValue &* UInt64(pageSize)
        let file = self.file
        guard let n = try? withMutableRawBytes(&bytes, { (raw) throws(EngineError) in try file.read(into: raw, at: offset) }),
              n >= pageSize else { return nil }
        return ReadAheadRun(first: first, count: n / pageSize, bytes: bytes, fromFile: fromFile)
    }

    func pageInPassing(_ number: PageNumber, from run: ReadAheadRun) throws(EngineError) -> Page {
        if let page = cache.withLock({ $0.get(number.rawValue) }) { return page }
        guard run.holds(number) else { return try pageInPassing(number) }
        let page = Page(number: number, size: pageSize)
        let start = Int(number.rawValue - run.first.rawValue) * pageSize
        run.bytes.withUnsafeBytes { raw in
            page.bytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[start ..< start + pageSize]))
        }
        try Pager.check(page, path: path)
        return page
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
        try check(page, path: path, expecting: type)
        return page
    }

    /// The checks of a page read from disk (I10): header, checksum, cells.
    static func check(_ page: Page, path: String, expecting type: PageType? = nil) throws(EngineError) {
        try page.validate(file: path, expecting: type)
        switch page.type {
        case .leaf: try page.validateLeafCells(file: path)
        case .branch: try page.validateBranchCells(file: path)
        default: break
        }
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
