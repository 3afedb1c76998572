// Checkpoint: turning the in-memory state into the durable checkpoint (Format/page-file.md).
//
// Steps, under the writer lock, for the state at LSN C:
//   1. allocate pages for the new free list (never pages the durable meta references, I1);
//   2. write every page allocated since the last checkpoint (except those a transaction spilled:
//      the file holds them already), and the free list pages;
//   3. sync the page file                                   (I2: pages durable before the meta);
//   4. write the meta page into slot (generation mod 2) and sync it (I3: the other slot keeps
//      the previous checkpoint whole, so a torn meta costs only this one);
//   5. start WAL generation + 1: truncate, write its header, sync. A crash between 4 and 5 leaves
//      a WAL of the old generation, which recovery ignores (R4) — its records are all <= C.
// A failure at any step puts the store in the failed state (I8); the previous checkpoint and the
// WAL stay valid on disk, so reopening recovers everything committed.

extension Engine {
    /// `force`: write a checkpoint even when nothing was committed since the last one (a
    /// compaction that trimmed the file's free tail must record the new page count).
    func checkpoint(_ state: inout WriterState, force: Bool = false) throws(EngineError) {
        let (lsn, catalogRoot, oldest) = published.withLock { ($0.lsn, $0.catalogRoot, $0.oldestSnapshot) }
        if !force && lsn == state.durableMeta.checkpointLSN && (state.freeSpaceIfLoaded?.freshSinceCheckpoint.isEmpty ?? true) && state.walEnd <= UInt64(WALFormat.headerSize) {
            return
        }
        let freeSpace = try state.freeSpace(pager)
        reclaim(&state, freeSpace, oldestSnapshot: oldest)
        do {
            try writeCheckpoint(&state, freeSpace, lsn: lsn, catalogRoot: catalogRoot)
        } catch {
            enterFailedState(error, &state)
            throw error
        }
    }

    private func writeCheckpoint(_ state: inout WriterState, _ free: FreeSpace, lsn: LSN, catalogRoot: PageNumber) throws(EngineError) {
        let sync = options.durability != .off
        let dirty = free.freshSinceCheckpoint.sorted()

        // 1. The new free list: what is free now plus the old list's own pages, less the pages
        //    taken to hold it.
        let capacity = FreeListPage.capacity(pageSize: pageSize)
        var freeSet = Set(free.allFree)
        for p in free.durableFreeListPages { freeSet.insert(p) }
        var listPages: [UInt64] = []
        while listPages.count * capacity < freeSet.count {
            let p = free.takePage()
            listPages.append(p)
            freeSet.remove(p)
        }
        let freeList = freeSet.sorted()

        // 2. Pages (each checksummed into a scratch copy: readers share the cached page), then
        //    the free list.
        //    Consecutive pages go in one write (PageRunWriter).
        let writer = PageRunWriter(file: pager.file, pageSize: pageSize)
        for n in dirty {
            guard let page = pager.cachedPage(n) else {
                // Written by the transaction that created it (spilled); step 3 syncs it.
                if state.spilledSinceCheckpoint.contains(n) { continue }
                throw EngineError(.corrupt, "page \(n) changed since the last checkpoint is not in memory", page: PageNumber(n))
            }
            try writer.append(n) { page.sealedCopy(into: $0) }
        }
        try writer.flush()
        let listObjects = listPages.map { Page(number: PageNumber($0), size: pageSize) }
        FreeListPage.write(freeList, into: listObjects)
        for page in listObjects { try pager.file.write(page.raw, at: page.number.rawValue * UInt64(pageSize)) }

        // 3. I2.
        if sync { try pager.file.sync() }

        // 4. The meta page (I3).
        var meta = state.durableMeta
        meta.generation = Generation(meta.generation.rawValue + 1)
        meta.checkpointLSN = lsn
        meta.walGeneration = state.walGeneration + 1
        meta.pageCount = free.pageCount
        meta.catalogRoot = catalogRoot
        meta.freeListHead = listObjects.first?.number ?? .none
        meta.freeListCount = UInt64(freeList.count)
        let slot = meta.generation.rawValue % 2
        try pager.file.write(meta.encode(), at: slot * UInt64(pageSize))
        if sync { try pager.file.sync() }

        // The checkpoint is durable: the allocator may now reuse what it freed.
        let oldListPages = free.durableFreeListPages
        free.checkpointed()
        state.spilledSinceCheckpoint.removeAll()
        free.free(oldListPages, at: lsn)
        free.durableFreeListPages = listPages
        state.durableMeta = meta
        pager.unpin(dirty)

        // 5. A new WAL generation.
        state.walGeneration = meta.walGeneration
        state.walEnd = UInt64(WALFormat.headerSize)
        state.walAllocated = 0
        if let walFile {
            try walFile.truncate(to: 0)
            try walFile.write(WALFormat.Header(generation: meta.walGeneration, startLSN: lsn.next).encode(), at: 0)
            // No preallocation here: an idle store keeps a 32-byte WAL, and the first commit
            // allocates the next step (Engine.preallocateWAL).
            state.walAllocated = UInt64(WALFormat.headerSize)
            if sync { try walFile.sync() }
        }
        groupCommit.markDurable(lsn)
    }
}
