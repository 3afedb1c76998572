// Overflow pages: the bytes of a value too large to sit in its leaf cell, in a chain of pages
// (Format/page-file.md § Overflow page). Each page has the common header (type overflow, link =
// next page or 0) and carries up to pageSize - 32 bytes of the value's stored form; the leaf cell
// records the first page and the stored length, so a reader knows how many pages to expect and
// rejects a chain that is too short, too long, loops, or holds a page of another type (I10).

enum OverflowPage {
    static func capacity(pageSize: Int) -> Int { pageSize - PageHeader.size }

    /// The number of pages a stored value of `length` bytes needs.
    static func pagesNeeded(_ length: Int, pageSize: Int) -> Int {
        let c = capacity(pageSize: pageSize)
        return (length + c - 1) / c
    }

    /// Reads the stored bytes of a chain starting at `first`.
    static func read<S: PageSource>(
        from source: S, first: PageNumber, storedLength: Int, file: String
    ) throws(EngineError) -> [UInt8] {
        let cap = capacity(pageSize: source.pageSize)
        var out = [UInt8]()
        out.reserveCapacity(storedLength)
        var next = first
        var remaining = storedLength
        while remaining > 0 {
            guard next != .none else {
                throw .corrupt("overflow chain ends \(remaining) bytes early", file: file, page: first)
            }
            let page = try source.page(next)
            guard page.type == .overflow else {
                throw .corrupt("overflow chain reaches a \(page.type.map { "\($0)" } ?? "unknown") page", file: file, page: next)
            }
            let n = min(cap, remaining)
            out.append(contentsOf: UnsafeRawBufferPointer(rebasing: page.raw[PageHeader.size..<(PageHeader.size + n)]))
            remaining -= n
            next = page.link
        }
        guard next == .none else {
            throw .corrupt("overflow chain is longer than its value's \(storedLength) bytes", file: file, page: first)
        }
        return out
    }

    /// The page numbers of a chain (for freeing and for the integrity check).
    static func pages<S: PageSource>(
        of source: S, first: PageNumber, storedLength: Int, file: String
    ) throws(EngineError) -> [PageNumber] {
        let expected = pagesNeeded(storedLength, pageSize: source.pageSize)
        var result: [PageNumber] = []
        var next = first
        while next != .none {
            guard result.count < expected else {
                throw .corrupt("overflow chain is longer than its value's \(storedLength) bytes", file: file, page: first)
            }
            let page = try source.page(next)
            guard page.type == .overflow else {
                throw .corrupt("overflow chain reaches a non-overflow page", file: file, page: next)
            }
            result.append(next)
            next = page.link
        }
        guard result.count == expected else {
            throw .corrupt("overflow chain has \(result.count) pages, expected \(expected)", file: file, page: first)
        }
        return result
    }
}
