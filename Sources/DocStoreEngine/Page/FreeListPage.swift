// FreeListPage: the durable list of free page numbers, a chain of pages written at each checkpoint
// (Format/page-file.md § Free list). Header: type freelist, count = entries in this page, link =
// next page; entries are u64 page numbers from offset 32, strictly ascending along the whole chain.
// A reader checks each entry is inside the page range, not a meta page, greater than the one before
// (so none is listed twice) and not a page of the chain, and that the chain holds exactly the count
// the meta page records (I10). Ascending order makes that check O(n) with no hashing, and the list
// as read is already a min-heap for FreeSpace: opening a store costs no per-entry work beyond it.

enum FreeListPage {
    static func capacity(pageSize: Int) -> Int { (pageSize - PageHeader.size) / 8 }

    /// Fills pages with `free` page numbers, linking them; `pages` must be enough for all.
    static func write(_ free: [UInt64], into pages: [Page]) {
        let cap = capacity(pageSize: pages.first?.size ?? 4096)
        var i = 0
        for (k, page) in pages.enumerated() {
            page.format(.freeList)
            let n = min(cap, free.count - i)
            for j in 0..<n { page.bytes.setU64(PageHeader.size + 8 * j, free[i + j]) }
            page.count = n
            i += n
            page.link = k + 1 < pages.count ? pages[k + 1].number : .none
            page.seal()
        }
    }

    /// Reads the chain from `head`: the free page numbers (ascending) and the chain's own pages
    /// (rules F1-F5, Format/page-file.md § Free list).
    static func read(
        head: PageNumber, count: UInt64, pageCount: UInt64, pager: Pager
    ) throws(EngineError) -> (free: [UInt64], pages: [UInt64]) {
        try read(head: head, count: count, pageCount: pageCount, pageSize: pager.pageSize, path: pager.path) { (n) throws(EngineError) in
            try pager.readFromFile(n, expecting: .freeList)
        }
    }

    /// The same, reading the chain's pages with `readPage`, which checks each is a free-list
    /// page (salvage reads the file directly, past the pager).
    static func read(
        head: PageNumber, count: UInt64, pageCount: UInt64, pageSize: Int, path: String,
        readPage: (PageNumber) throws(EngineError) -> Page
    ) throws(EngineError) -> (free: [UInt64], pages: [UInt64]) {
        var free: [UInt64] = []
        free.reserveCapacity(Int(min(count, pageCount)))
        var pages: [UInt64] = []
        var chain = Set<UInt64>()
        var next = head
        let capacity = UInt64(capacity(pageSize: pageSize))
        let maxPages = (count + capacity - 1) / capacity + 1
        var previous: UInt64 = 1
        while next != .none {
            // F1
            guard next.rawValue < pageCount, UInt64(pages.count) < maxPages, chain.insert(next.rawValue).inserted else {
                throw .corrupt("free list chain is longer than its count \(count), loops or leaves the file", file: path, page: next)
            }
            let page = try readPage(next)  // F2: a free-list page (the reader checks its type)
            let n = page.count
            guard n <= Int(capacity) else {  // F3
                throw .corrupt("free list page claims \(n) entries", file: path, page: next)
            }
            for j in 0..<n {  // F4: >= 2, < pageCount, ascending (hence no duplicates)
                let p = page.bytes.u64(PageHeader.size + 8 * j)
                guard p > previous, p < pageCount else {
                    throw .corrupt(
                        "free list entry \(j) is \(p): outside the file, a meta page, or not above the entry before it (\(previous))",
                        file: path, page: next, offset: UInt64(PageHeader.size + 8 * j))
                }
                free.append(p)
                previous = p
            }
            pages.append(next.rawValue)
            next = page.link
        }
        guard UInt64(free.count) == count else {  // F5
            throw .corrupt("free list holds \(free.count) pages, the meta page says \(count)", file: path, page: head)
        }
        // F4: no entry is a page of the chain itself (both sorted: one merge pass).
        var i = 0
        for c in pages.sorted() {
            while i < free.count && free[i] < c { i += 1 }
            if i < free.count && free[i] == c {
                throw .corrupt("free list entry \(i) is \(c), a page of the free list chain itself", file: path, page: PageNumber(c))
            }
        }
        return (free, pages)
    }
}
