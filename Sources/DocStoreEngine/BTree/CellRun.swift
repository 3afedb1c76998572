// CellRun: cells copied out of pages into one contiguous buffer, in order — how splits,
// redistribution and compaction move cells between pages without an allocation per cell.
// Cells are opaque here (leaf or branch layout alike); `starts[i]` is where cell i begins and the
// next start (or the end of `bytes`) where it ends.

struct CellRun {
    private(set) var bytes: [UInt8] = []
    private(set) var starts: [Int] = []

    init(capacity: Int = 8192) { bytes.reserveCapacity(capacity) }

    var count: Int { starts.count }

    func end(_ i: Int) -> Int { i + 1 < starts.count ? starts[i + 1] : bytes.count }
    func size(_ i: Int) -> Int { end(i) - starts[i] }

    /// Bytes the cells in `range` need in a page, slots included.
    func pageBytes(_ range: Range<Int>) -> Int {
        guard !range.isEmpty else { return 0 }
        return end(range.upperBound - 1) - starts[range.lowerBound] + 2 * range.count
    }

    mutating func append(_ cell: UnsafeRawBufferPointer) {
        starts.append(bytes.count)
        // As typed bytes: Array copies those with one memcpy (a raw buffer goes byte by byte).
        bytes.append(contentsOf: cell.assumingMemoryBound(to: UInt8.self))
    }

    mutating func append(_ cell: [UInt8]) {
        starts.append(bytes.count)
        bytes.append(contentsOf: cell)
    }

    /// Appends an inline leaf cell for `key` and `value`, laid out as `LeafCell.build` lays it
    /// out (head, key, value length, value), built in place: no cell array per entry.
    mutating func appendInlineLeafCell(key: UnsafeRawBufferPointer, value: UnsafeRawBufferPointer) {
        starts.append(bytes.count)
        bytes.appendVarint(UInt64(key.count) << 2 | UInt64(ValueStorage.inline.rawValue))
        bytes.append(contentsOf: key.assumingMemoryBound(to: UInt8.self))
        bytes.appendVarint(UInt64(value.count))
        bytes.append(contentsOf: value.assumingMemoryBound(to: UInt8.self))
    }

    /// Appends leaf cells `range` of `page`.
    mutating func appendLeafCells(of page: Page, _ range: Range<Int>) {
        for i in range { append(page.leafCell(i)) }
    }

    /// Appends branch cells `range` of `page`.
    mutating func appendBranchCells(of page: Page, _ range: Range<Int>) {
        for i in range {
            let o = page.slot(i)
            append(UnsafeRawBufferPointer(rebasing: page.raw[o..<(o + page.branchCellSize(i))]))
        }
    }

    /// The index that splits the cells into two halves of about equal bytes (both non-empty).
    func byteMidpoint() -> Int {
        let total = pageBytes(0..<count)
        var acc = 0
        for i in 0..<count {
            acc += size(i) + 2
            if acc >= total / 2 { return min(max(i + 1, 1), count - 1) }
        }
        return count - 1
    }

    /// Boundaries that cut the cells into `parts` consecutive groups of about equal bytes, each
    /// non-empty and fitting in `pageCapacity` bytes (slots included): `parts + 1` indices from 0
    /// to `count`. Nil if there are too few cells or a group cannot fit.
    func evenSplit(parts: Int, pageCapacity: Int) -> [Int]? {
        guard parts >= 1, count >= parts else { return nil }
        let total = pageBytes(0..<count)
        var bounds = [0]
        var acc = 0
        var i = 0
        for k in 1..<parts {
            let goal = total * k / parts
            // At least one cell per group, and leave at least one for each group still to come.
            while i < count - (parts - k) && (i < bounds[k - 1] + 1 || acc + (size(i) + 2) / 2 < goal) {
                acc += size(i) + 2
                i += 1
            }
            bounds.append(i)
        }
        bounds.append(count)
        for k in 0..<parts where pageBytes(bounds[k]..<bounds[k + 1]) > pageCapacity { return nil }
        return bounds
    }

    /// Boundaries that fill pages in order, each as full as `pageCapacity` bytes (slots
    /// included) allow, the last with what is left: `parts + 1` indices from 0 to `count`. Nil
    /// if a cell alone does not fit.
    /// With `end` below `count`, cells from `end` on are kept together: with the last group
    /// if they fit there, else as a group of their own (a block's following cells move once).
    func greedySplit(pageCapacity: Int, keepingTogetherFrom end: Int? = nil) -> [Int]? {
        let end = min(end ?? count, count)
        guard end < count else { return greedySplit(pageCapacity: pageCapacity, upTo: count) }
        guard pageBytes(end..<count) <= pageCapacity, var bounds = greedySplit(pageCapacity: pageCapacity, upTo: end) else { return nil }
        bounds.removeLast()
        let lastStart = bounds.last ?? 0
        if end > lastStart, pageBytes(lastStart..<count) > pageCapacity { bounds.append(end) }
        bounds.append(count)
        return bounds
    }

    private func greedySplit(pageCapacity: Int, upTo end: Int) -> [Int]? {
        var bounds = [0]
        var used = 0
        for i in 0..<end {
            let need = size(i) + 2
            guard need <= pageCapacity else { return nil }
            if used + need > pageCapacity {
                bounds.append(i)
                used = 0
            }
            used += need
        }
        bounds.append(end)
        return bounds
    }

    /// Cell `i`'s bytes.
    func withCell<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        bytes.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[starts[i]..<end(i)])) }
    }

    /// Rewrites `page` as a fresh page of `type` holding exactly cells `range`, in order: each
    /// cell below the one before it from the end of the page (as BTree.place would put them), the
    /// header written once. The caller has checked they fit (`pageBytes(range)`).
    func write(_ range: Range<Int>, into page: Page, type: PageType, link: PageNumber) {
        page.format(type)
        page.link = link
        var upper = page.size
        bytes.withUnsafeBytes { all in
            guard let src = all.baseAddress, let dst = page.bytes.baseAddress else { return }
            for (k, i) in range.enumerated() {
                let n = end(i) - starts[i]
                upper -= n
                (dst + upper).copyMemory(from: src + starts[i], byteCount: n)
                page.setSlot(k, upper)
            }
        }
        page.count = range.count
        page.lower = PageHeader.size + 2 * range.count
        page.upper = upper
    }
}
