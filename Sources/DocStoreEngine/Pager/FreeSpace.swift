// FreeSpace: which page numbers the writer may hand out, and when freed pages become reusable.
//
// Owned by the single writer (it lives in the engine's writer state, touched only under the
// writer lock). Invariants:
//   I1  `allocate` never returns a page the durable checkpoint references: a page freed at LSN T
//       that the durable checkpoint holds ("clean") waits until a checkpoint at LSN >= T is durable.
//   I9  A page freed at LSN T waits until every live snapshot is at LSN >= T (a snapshot at S
//       reaches exactly the pages of state S, and state S no longer holds pages freed at T <= S).
// Pages allocated since the last checkpoint ("fresh") are not in the durable checkpoint, so when
// freed they wait only for snapshots. Every page number in [2, pageCount) is exactly one of: live
// (reachable from the current state), ready, pending, or a page of the durable free list.

struct FreeSpace {
    struct Batch {
        var freedAt: LSN
        var clean: [UInt64]   // in the durable checkpoint: also wait for a checkpoint >= freedAt
        var fresh: [UInt64]   // allocated since the last checkpoint: wait only for snapshots
    }

    /// Reusable now, kept sorted descending so `popLast` hands out the lowest page first.
    private(set) var ready: [UInt64] = []
    /// Freed pages waiting for snapshots or a checkpoint, in LSN order.
    private(set) var pending: [Batch] = []
    /// One past the highest page number in use; the file grows when `ready` is empty.
    private(set) var pageCount: UInt64
    /// Pages allocated since the last durable checkpoint (its writes are still in memory).
    private(set) var freshSinceCheckpoint: Set<UInt64> = []
    /// The pages holding the durable checkpoint's free list.
    var durableFreeListPages: [UInt64] = []

    init(pageCount: UInt64, free: [UInt64]) {
        self.pageCount = pageCount
        self.ready = free.sorted(by: >)
    }

    /// Pages that are free as far as the file is concerned (what a checkpoint records).
    var allFree: [UInt64] {
        var all = ready
        for b in pending { all += b.clean; all += b.fresh }
        return all
    }

    /// Moves batches that have become reusable to `ready`; returns the fresh pages among them
    /// (the pager drops those from its cache: nothing can reach them and the file never held them).
    mutating func release(oldestSnapshot: LSN?, durableCheckpoint: LSN) -> [UInt64] {
        var dropped: [UInt64] = []
        var added = false
        var i = 0
        while i < pending.count {
            let b = pending[i]
            let snapshotsDone = oldestSnapshot.map { b.freedAt <= $0 } ?? true
            if !snapshotsDone { break }  // later batches were freed later still
            if !b.fresh.isEmpty {
                ready += b.fresh
                dropped += b.fresh
                pending[i].fresh = []
                added = true
            }
            if b.freedAt <= durableCheckpoint {
                ready += b.clean
                dropped += b.clean
                pending[i].clean = []
                added = true
            }
            i += 1
        }
        pending.removeAll { $0.clean.isEmpty && $0.fresh.isEmpty }
        if added { ready.sort(by: >) }
        return dropped
    }

    /// A page number to write a new page to (I1, I9): the lowest ready page, or a new one at the end.
    mutating func allocate() -> UInt64 {
        let n: UInt64
        if let r = ready.popLast() {
            n = r
        } else {
            n = pageCount
            pageCount += 1
        }
        freshSinceCheckpoint.insert(n)
        return n
    }

    /// Returns a page allocated and freed within one uncommitted transaction: nobody saw it.
    mutating func unallocate(_ n: UInt64) {
        freshSinceCheckpoint.remove(n)
        ready.append(n)
        ready.sort(by: >)
    }

    /// Records the pages a commit at `lsn` freed.
    mutating func free(_ pages: [UInt64], at lsn: LSN) {
        guard !pages.isEmpty else { return }
        var batch = Batch(freedAt: lsn, clean: [], fresh: [])
        for p in pages {
            if freshSinceCheckpoint.remove(p) != nil { batch.fresh.append(p) } else { batch.clean.append(p) }
        }
        pending.append(batch)
    }

    /// After a durable checkpoint: every page in use is now in the file.
    mutating func checkpointed() {
        freshSinceCheckpoint.removeAll(keepingCapacity: true)
    }

    /// Removes pages from the free set (a checkpoint takes its free-list pages this way).
    mutating func take(_ pages: Set<UInt64>) {
        ready.removeAll { pages.contains($0) }
    }
}
