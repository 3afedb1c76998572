// FreeListPage: the durable list of free page numbers, a chain of pages written at each checkpoint
// (Format/page-file.md § Free list). Header: type freelist, count = entries in this page, link =
// next page; entries are u64 page numbers from offset 32. A reader checks each entry is inside the
// page range, not a meta page, and not listed twice, and that the chain holds exactly the count
// the meta page records (I10).

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

    /// Reads the chain from `head`: the free page numbers and the chain's own pages.
    static func read(
        head: PageNumber, count: UInt64, pageCount: UInt64, pager: Pager
    ) throws(EngineError) -> (free: [UInt64], pages: [UInt64]) {
        var free: [UInt64] = []
        var pages: [UInt64] = []
        var seen = Set<UInt64>()
        var next = head
        let maxPages = (count + UInt64(capacity(pageSize: pager.pageSize)) - 1) / UInt64(capacity(pageSize: pager.pageSize)) + 1
        while next != .none {
            guard next.rawValue < pageCount, UInt64(pages.count) < maxPages, seen.insert(next.rawValue).inserted else {
                throw .corrupt("free list chain is longer than its count \(count), loops or leaves the file", file: pager.path, page: next)
            }
            let page = try pager.readFromFile(next, expecting: .freeList)
            let n = page.count
            guard n <= capacity(pageSize: pager.pageSize) else {
                throw .corrupt("free list page claims \(n) entries", file: pager.path, page: next)
            }
            for j in 0..<n {
                let p = page.bytes.u64(PageHeader.size + 8 * j)
                guard p >= 2, p < pageCount, seen.insert(p).inserted else {
                    throw .corrupt("free list entry \(j) is \(p): outside the file, a meta page, or listed twice", file: pager.path, page: next, offset: UInt64(PageHeader.size + 8 * j))
                }
                free.append(p)
            }
            pages.append(next.rawValue)
            next = page.link
        }
        guard UInt64(free.count) == count else {
            throw .corrupt("free list holds \(free.count) pages, the meta page says \(count)", file: pager.path, page: head)
        }
        return (free, pages)
    }
}
