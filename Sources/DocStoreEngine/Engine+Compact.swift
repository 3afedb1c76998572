// Engine+Compact: online compaction — live pages move toward the front of the file and the free
// tail is cut off, in steps that each commit, while the store stays open and in use.
//
//   CP1 a step is one write transaction that merges neighbouring underfull leaves and relocates
//       pages lying at or beyond a boundary, `pagesPerStep` pages at most (BTree+Relocate): readers keep their snapshots (the old pages stay
//       until no snapshot can reach them, I9), writers wait for one step at most. It commits by
//       checkpoint (it has nothing to log), so a crash leaves the state before or after it.
//   CP2 the boundary is the lowest page number such that the live pages at or beyond it fit,
//       with room for the ancestors a move copies, into the pages free below it.
//   CP3 after each step the free pages at the end of the file are dropped from the allocator, a
//       checkpoint records the smaller page count (meta page, synced), and only then is the file
//       truncated: a crash between the two leaves a longer file, whose tail no page references.
//   CP4 memory per step is bounded by `pagesPerStep` pages, whatever the file's size.

/// What ``Engine/compact(pagesPerStep:progress:)`` did.
public struct CompactionReport: Sendable, CustomStringConvertible {
    /// The page file's size before and after, in bytes.
    public var bytesBefore: UInt64
    public var bytesAfter: UInt64
    /// Pages moved toward the front, and the steps (transactions) that moved them.
    public var pagesMoved: Int
    public var steps: Int
    /// Bytes given back to the file system.
    public var bytesReclaimed: UInt64 { bytesBefore > bytesAfter ? bytesBefore - bytesAfter : 0 }

    public var description: String {
        "compacted \(bytesBefore) → \(bytesAfter) bytes (\(bytesReclaimed) reclaimed), \(pagesMoved) pages moved in \(steps) steps"
    }
}

extension Engine {
    /// Compacts the page file while the store stays in use (CP1–CP4); returns what it did.
    /// Pages still reachable by an open read snapshot are kept until it closes, so a long-lived
    /// snapshot limits what one call can reclaim.
    ///
    /// - Throws: `.readOnly`, `.failed`, `.io`, `.noSpace`, `.closed`.
    @discardableResult
    public func compact(pagesPerStep: Int = 2048, progress: ((CompactionReport) -> Void)? = nil) throws(EngineError) -> CompactionReport {
        guard !options.readOnly else { throw EngineError(.readOnly, "the store was opened read-only") }
        var report = CompactionReport(bytesBefore: try fileBytes(), bytesAfter: 0, pagesMoved: 0, steps: 0)
        try shrink()
        var lastBoundary: UInt64?
        for _ in 0..<10_000 {
            let boundary: UInt64? = try writer.withLock { (state) throws(EngineError) -> UInt64? in
                try state.checkWritable()
                let free = try state.freeSpace(pager)
                reclaim(&state, free, oldestSnapshot: published.withLock { $0.oldestSnapshot })
                return Self.compactionBoundary(free)
            }
            // Without a boundary nothing is worth moving yet; merging underfull leaves frees
            // pages, which a later step can move the tail into.
            let moved: Int
            do {
                moved = try write { txn in
                    try txn.relocatePages(beyond: boundary ?? UInt64.max, merge: true, budget: max(16, pagesPerStep))
                }
            } catch let error as EngineError {
                throw error
            } catch {
                throw EngineError(.invalidArgument, "compaction step failed: \(error)")
            }
            report.pagesMoved += moved
            report.steps += 1
            try shrink()
            report.bytesAfter = try fileBytes()
            progress?(report)
            // No page moved, or the same boundary again without progress: what is left is
            // held by snapshots or too full to move.
            if moved == 0 || (boundary != nil && boundary == lastBoundary && moved < 16) { break }
            lastBoundary = boundary
        }
        try shrink()
        try shrink()     // the previous free list's own pages are free after the next checkpoint
        report.bytesAfter = try fileBytes()
        return report
    }

    /// The page file's size as the store uses it: its pages, whether or not a checkpoint has
    /// written them to the file yet.
    private func fileBytes() throws(EngineError) -> UInt64 {
        let pages = writer.withLock { $0.pageFigures.pageCount }
        return max(try pager.file.size(), pages * UInt64(pageSize))
    }

    /// CP3: drops the free tail, checkpoints the new page count, truncates the file.
    private func shrink() throws(EngineError) {
        try writer.withLock { (state) throws(EngineError) in
            try state.checkWritable()
            let free = try state.freeSpace(pager)
            reclaim(&state, free, oldestSnapshot: published.withLock { $0.oldestSnapshot })
            free.trimTail()
            try checkpoint(&state, force: true)
            let end = state.durableMeta.pageCount * UInt64(pageSize)
            do throws(EngineError) {
                if try pager.file.size() > end {
                    try pager.file.truncate(to: end)
                    if options.durability != .off { try pager.file.sync() }
                }
            } catch {
                enterFailedState(error, &state)
                throw error
            }
        }
    }

    /// CP2: the lowest boundary whose live pages beyond it fit in the free pages below it, with
    /// room for copied ancestors; nil when no live page lies beyond any such boundary.
    static func compactionBoundary(_ free: FreeSpace) -> UInt64? {
        let pageCount = free.pageCount
        let ready = Set(free.readyPages)
        var notLive = Set(free.allFree)
        for p in free.durableFreeListPages { notLive.insert(p) }
        var liveAbove = 0, readyAbove = 0
        var best: UInt64?
        var bestLive = 0
        var b = pageCount
        while b > 2 {
            let page = b - 1
            let live = !notLive.contains(page)
            let newLive = liveAbove + (live ? 1 : 0)
            let newReadyAbove = readyAbove + (ready.contains(page) ? 1 : 0)
            let slack = newLive / 16 + 8
            guard newLive + slack <= ready.count - newReadyAbove else { break }
            liveAbove = newLive
            readyAbove = newReadyAbove
            b = page
            best = b
            bestLive = liveAbove
        }
        guard let best, bestLive > 0 else { return nil }
        return best
    }
}
