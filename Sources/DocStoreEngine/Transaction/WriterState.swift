// WriterState and WriterLock: everything only the writer touches — the allocator, the WAL's end,
// the durable meta page, the failed state — behind one lock that a write transaction holds from
// begin to commit (so there is one writer at a time).

import Foundation

struct WriterState {
    /// The allocator, read from the durable free list on first need (`freeSpace(_:)`): a store
    /// opened only to read never reads its free list, so opening costs the same however many
    /// pages are free.
    private var loadedFreeSpace: FreeSpace?
    /// The free list of the checkpoint the store was opened at, until it is read.
    private let openedFreeList: (head: PageNumber, count: UInt64, pageCount: UInt64)
    var durableMeta: MetaPage
    var walGeneration: UInt64
    var walEnd: UInt64
    /// Bytes of the WAL file allocated so far (zeros past `walEnd` are preallocated space).
    var walAllocated: UInt64 = 0
    var pendingBlobDeletes: [(lsn: LSN, blobs: [BlobID])] = []
    /// Pages committed since the last checkpoint whose bytes the file holds already (a
    /// transaction spilled them, PageWorkspace.spill): the checkpoint syncs them, not writes them.
    var spilledSinceCheckpoint: Set<UInt64> = []
    /// Set by the first failed write or sync (I8); writes are refused until reopen.
    var failed: EngineError?
    var closed = false

    init(durableMeta: MetaPage, walGeneration: UInt64, walEnd: UInt64) {
        self.durableMeta = durableMeta
        self.walGeneration = walGeneration
        self.walEnd = walEnd
        self.openedFreeList = (durableMeta.freeListHead, durableMeta.freeListCount, durableMeta.pageCount)
    }

    /// The allocator, reading and checking the durable free list (rules F1-F5) the first time.
    /// Nothing is written or allocated before it is loaded, so the opened checkpoint's list is
    /// still the durable one then.
    /// - Throws: `.corrupt` naming the free-list page, `.io`.
    mutating func freeSpace(_ pager: Pager) throws(EngineError) -> FreeSpace {
        if let loadedFreeSpace { return loadedFreeSpace }
        let (free, listPages) = try FreeListPage.read(
            head: openedFreeList.head, count: openedFreeList.count, pageCount: openedFreeList.pageCount, pager: pager)
        let space = FreeSpace(pageCount: openedFreeList.pageCount, free: free)
        space.durableFreeListPages = listPages
        loadedFreeSpace = space
        return space
    }

    /// The allocator if it has been loaded (nil: nothing was allocated or freed since opening).
    var freeSpaceIfLoaded: FreeSpace? { loadedFreeSpace }

    /// Pages in the file and pages free, without loading the free list.
    var pageFigures: (pageCount: UInt64, free: Int) {
        if let loadedFreeSpace { return (loadedFreeSpace.pageCount, loadedFreeSpace.allFree.count) }
        return (openedFreeList.pageCount, Int(openedFreeList.count))
    }

    func checkWritable() throws(EngineError) {
        if closed { throw EngineError(.closed, "the engine is closed") }
        if let failed {
            throw EngineError(.failed, "an earlier write failed (\(failed)); close and reopen the store to recover")
        }
    }
}

/// The writer's state behind the writer lock (one writer at a time).
typealias WriterLock = Locked<WriterState>

extension Locked where Value == WriterState {
    /// Puts the store in the failed state (I8) — from a group-commit sync outside the lock.
    func markFailed(_ error: EngineError) {
        withLock { state in if state.failed == nil { state.failed = error } }
    }
}
