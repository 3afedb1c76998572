// FreeSpace: which page numbers the writer may hand out, and when freed pages become reusable.
//
// Owned by the single writer (the engine's writer state holds the one instance; it is touched
// only under the writer lock). Invariants:
//   I1  `takePage` never returns a page the durable checkpoint references: a page freed at LSN T
//       that the durable checkpoint holds ("clean") waits until a checkpoint at LSN >= T is durable.
//   I9  A page freed at LSN T waits until every live snapshot is at LSN >= T (a snapshot at S
//       reaches exactly the pages of state S, and state S no longer holds pages freed at T <= S).
// Pages allocated since the last checkpoint ("fresh") are not in the durable checkpoint, so when
// freed they wait only for snapshots. Every page number in [2, pageCount) is exactly one of: live
// (reachable from the current state), ready, pending, or a page of the durable free list.
//
// A write transaction takes pages with `takePage` and journals them (PageWorkspace); rolling back
// gives them back with `giveBack(_:pageCount:)`, so nothing is copied per transaction. Ready pages
// sit in a min-heap: the lowest page number is reused first, keeping data toward the file's start.

final class FreeSpace {
    struct Batch {
        var freedAt: LSN
        var clean: [UInt64]   // in the durable checkpoint: also wait for a checkpoint >= freedAt
        var fresh: [UInt64]   // allocated since the last checkpoint: wait only for snapshots
    }

    /// Reusable now: a binary min-heap.
    private var ready: [UInt64] = []
    /// Freed fresh pages waiting for snapshots, and freed clean pages waiting for snapshots and a
    /// checkpoint, each in LSN order; entries before the head index are already released.
    private var pendingFresh: [Batch] = []
    private var freshHead = 0
    private var pendingClean: [Batch] = []
    private var cleanHead = 0
    /// One past the highest page number in use; the file grows when nothing is ready.
    private(set) var pageCount: UInt64
    /// Pages allocated since the last durable checkpoint (their bytes are in memory, or in the
    /// file but not yet synced when a transaction spilled them).
    private(set) var freshSinceCheckpoint: Set<UInt64> = []
    /// The pages holding the durable checkpoint's free list.
    var durableFreeListPages: [UInt64] = []

    /// `free` as the durable free list holds it: ascending, which is already a valid min-heap.
    init(pageCount: UInt64, free: [UInt64]) {
        self.pageCount = pageCount
        if zip(free, free.dropFirst()).allSatisfy({ $0 < $1 }) {
            ready = free
        } else {
            for p in free { push(p) }
        }
    }

    /// Pages that are free as far as the file is concerned (what a checkpoint records).
    var allFree: [UInt64] {
        var all = ready
        for b in pendingFresh[freshHead...] { all += b.fresh }
        for b in pendingClean[cleanHead...] { all += b.clean }
        return all
    }

    // MARK: Heap

    private func push(_ p: UInt64) {
        ready.append(p)
        var i = ready.count - 1
        while i > 0 {
            let parent = (i - 1) / 2
            if ready[parent] <= ready[i] { break }
            ready.swapAt(parent, i)
            i = parent
        }
    }

    private func popMin() -> UInt64? {
        guard let last = ready.popLast() else { return nil }
        guard !ready.isEmpty else { return last }
        let top = ready[0]
        ready[0] = last
        var i = 0
        let n = ready.count
        while true {
            let l = 2 * i + 1, r = l + 1
            var m = i
            if l < n && ready[l] < ready[m] { m = l }
            if r < n && ready[r] < ready[m] { m = r }
            if m == i { break }
            ready.swapAt(i, m)
            i = m
        }
        return top
    }

    // MARK: Allocation

    /// A page number to write a new page to (I1, I9): the lowest ready page, or a new one at the end.
    func takePage() -> UInt64 {
        if let p = popMin() { return p }
        defer { pageCount += 1 }
        return pageCount
    }

    /// Undoes a rolled-back transaction's allocations: the ready pages it took go back, and the
    /// file's end returns to where it was.
    func giveBack(_ taken: [UInt64], pageCount saved: UInt64) {
        for p in taken where p < saved { push(p) }
        pageCount = saved
    }

    /// Records a committed transaction: the pages it created are fresh, the pages it took but did
    /// not keep are ready again, and the pages of the old state it replaced wait (I1, I9).
    func commit(created: some Sequence<UInt64>, unused: [UInt64], freed: [UInt64], at lsn: LSN) {
        freshSinceCheckpoint.formUnion(created)
        for p in unused { push(p) }
        free(freed, at: lsn)
    }

    /// Records pages freed at `lsn`.
    func free(_ pages: [UInt64], at lsn: LSN) {
        guard !pages.isEmpty else { return }
        var batch = Batch(freedAt: lsn, clean: [], fresh: [])
        for p in pages {
            if freshSinceCheckpoint.remove(p) != nil { batch.fresh.append(p) } else { batch.clean.append(p) }
        }
        if !batch.fresh.isEmpty { pendingFresh.append(Batch(freedAt: lsn, clean: [], fresh: batch.fresh)) }
        if !batch.clean.isEmpty { pendingClean.append(Batch(freedAt: lsn, clean: batch.clean, fresh: [])) }
    }

    /// Moves batches that have become reusable to the ready heap; returns their pages (the pager
    /// drops them from its cache: nothing can reach them any more). Fresh pages wait only for
    /// snapshots, clean ones for snapshots and the checkpoint; each list is in LSN order, so this
    /// stops at the first batch still waiting — amortized O(pages released), not O(pending).
    func release(oldestSnapshot: LSN?, durableCheckpoint: LSN) -> [UInt64] {
        var dropped: [UInt64] = []
        func ready(_ b: Batch, needsCheckpoint: Bool) -> Bool {
            if let oldest = oldestSnapshot, b.freedAt > oldest { return false }
            return !needsCheckpoint || b.freedAt <= durableCheckpoint
        }
        while freshHead < pendingFresh.count, ready(pendingFresh[freshHead], needsCheckpoint: false) {
            for p in pendingFresh[freshHead].fresh { push(p) }
            dropped += pendingFresh[freshHead].fresh
            freshHead += 1
        }
        while cleanHead < pendingClean.count, ready(pendingClean[cleanHead], needsCheckpoint: true) {
            for p in pendingClean[cleanHead].clean { push(p) }
            dropped += pendingClean[cleanHead].clean
            cleanHead += 1
        }
        if freshHead > 64 && freshHead * 2 > pendingFresh.count { pendingFresh.removeFirst(freshHead); freshHead = 0 }
        if cleanHead > 64 && cleanHead * 2 > pendingClean.count { pendingClean.removeFirst(cleanHead); cleanHead = 0 }
        return dropped
    }

    /// The pages reusable now, in no particular order.
    var readyPages: [UInt64] { ready }

    /// Gives the file's free tail back: while the last page is ready (free and unreachable), the
    /// file ends one page earlier. Returns the new page count (compaction: the next checkpoint
    /// records it, then the file is truncated to it).
    @discardableResult
    func trimTail() -> UInt64 {
        let readySet = Set(ready)
        var end = pageCount
        while end > 2 && readySet.contains(end - 1) { end -= 1 }
        guard end < pageCount else { return pageCount }
        ready = ready.filter { $0 < end }
        var heap = ready
        ready = []
        heap.sort()
        ready = heap        // ascending is a valid min-heap
        pageCount = end
        return end
    }

    /// After a durable checkpoint: every page in use is now in the file.
    func checkpointed() {
        freshSinceCheckpoint.removeAll(keepingCapacity: true)
    }
}
