// PageWorkspace: the pages one write transaction creates, copies and frees.
//
// Copy-on-write: a page the transaction did not create is never modified; `writable` copies it to
// a newly allocated page number and frees the old one (freed "at" this transaction's LSN, so
// snapshots that still read it keep it, I9). Pages the transaction created are private until
// commit and are modified in place. Every ancestor of a page the transaction created was copied by
// the same descent, so the path from the root to any owned page is owned too.
//
// Allocation is journaled: pages taken from FreeSpace are remembered, so a rollback gives them
// back (`rollBackAllocations`) and a commit reports which were kept (`finishAllocations`). Pages
// the transaction created and then released are reused within it before FreeSpace is asked.
//
// Spilling: past `spillPages` owned pages, `spill()` writes owned pages (leaves and overflow
// pages first; branches too if they alone pass half the limit) to their own numbers in the file
// and forgets them; `page(_:)` reads a spilled page back, and it is owned (in memory) again. Their
// numbers came from FreeSpace, so neither the durable checkpoint nor any snapshot reaches them
// (I1, I9): a crash or rollback leaves bytes in free pages. A spill happens only between
// operations (WriteTransaction calls it) or between two entries of a sorted run
// (BTree.putSorted and deleteSorted, after letting go of their pages), when no B+tree code holds
// an owned page.

final class PageWorkspace: PageSource {
    let pager: Pager
    let freeSpace: FreeSpace
    /// Where the file ended when the transaction began (for rollback).
    let startPageCount: UInt64
    /// Every page this transaction took from FreeSpace.
    private var taken: [UInt64] = []
    /// Pages it created and released again: reused first, returned to FreeSpace at the end.
    private var released: [UInt64] = []
    /// Pages created by this transaction, by number.
    private(set) var owned: [UInt64: Page] = [:]
    /// Pages created by this transaction whose bytes are in the file and not in memory.
    private(set) var spilled: Set<UInt64> = []
    /// How many owned pages are kept in memory before `spill()` writes some out (Int.max: never;
    /// Engine.write sets it from EngineOptions.writeSpillBytes).
    var spillPages = Int.max
    /// Pages of the committed state this transaction replaced or deleted.
    private(set) var freed: [UInt64] = []
    let blobs: BlobStore?
    let durableBlobs: Bool
    /// Blob files written by this transaction (removed again if it aborts).
    private(set) var blobsWritten: [BlobID] = []
    /// Blob values this transaction unreferenced (removed once that is durable and unread).
    private(set) var blobsFreed: [BlobID] = []
    /// A failed blob write or sync: the engine enters the failed state even if the caller
    /// catches the error inside the transaction (I8).
    private(set) var ioFailure: EngineError?
    let lsn: LSN
    let limits: ValuePlacement.Limits
    private var blobSequence: UInt64 = 0

    init(pager: Pager, freeSpace: FreeSpace, lsn: LSN, limits: ValuePlacement.Limits, blobs: BlobStore?, durableBlobs: Bool) {
        self.pager = pager
        self.limits = limits
        self.freeSpace = freeSpace
        self.startPageCount = freeSpace.pageCount
        self.lsn = lsn
        self.blobs = blobs
        self.durableBlobs = durableBlobs
    }

    var pageSize: Int { pager.pageSize }
    var file: String { pager.path }

    @inline(__always) func page(_ number: PageNumber) throws(EngineError) -> Page {
        if let p = owned[number.rawValue] { return p }
        if !spilled.isEmpty, spilled.contains(number.rawValue) { return try readBack(number) }
        return try pager.page(number)
    }

    /// A spilled page read back from the file (checked as any page read, I10), owned again: the
    /// caller may change it in place, so it is written again by the next spill or the commit.
    /// A failure is an I/O failure of the transaction (I8): the B+tree operation that asked may
    /// have changed pages already, so the transaction must not commit even if the caller goes on.
    private func readBack(_ number: PageNumber) throws(EngineError) -> Page {
        let page: Page
        do {
            page = try pager.readFromFile(number)
        } catch {
            ioFailure = error
            throw error
        }
        spilled.remove(number.rawValue)
        own(page)
        return page
    }

    /// Whether the transaction holds more owned pages than it may (see `spill()`).
    var shouldSpill: Bool { owned.count > spillPages }

    /// The most pages the transaction held in memory at once (what the spill limit bounds).
    private(set) var mostOwned = 0

    @inline(__always) private func own(_ page: Page) {
        owned[page.number.rawValue] = page
        if owned.count > mostOwned { mostOwned = owned.count }
    }

    /// Writes owned pages to their places in the file and forgets them: every leaf and overflow
    /// page, and the branches too when they alone would keep half the limit (a branch is on
    /// every descent, so it is the page most likely to be needed again), in runs of consecutive
    /// numbers (PageRunWriter). Call only between operations, or between two entries of a
    /// sorted run (see the header). A failed write is an I/O failure of the transaction (I8).
    func spill() throws(EngineError) {
        var pages = owned.values.filter { $0.type != .branch }
        if owned.count - pages.count > spillPages / 2 { pages = Array(owned.values) }
        pages.sort { $0.number.rawValue < $1.number.rawValue }
        let writer = PageRunWriter(file: pager.file, pageSize: pageSize)
        // A page is forgotten only once the write that holds it succeeded: after a failure the
        // transaction cannot commit (I8), and its reads still find every page it holds.
        var written = 0
        func forgetWritten(upTo end: Int) {
            while written < end {
                let number = pages[written].number.rawValue
                owned.removeValue(forKey: number)
                spilled.insert(number)
                written += 1
            }
        }
        do throws(EngineError) {
            for (i, page) in pages.enumerated() {
                // The page is unreachable by readers (not yet committed): seal it in place.
                page.seal()
                if try writer.append(page.number.rawValue, { $0.copyMemory(from: page.raw) }) { forgetWritten(upTo: i) }
            }
            try writer.flush()
            forgetWritten(upTo: pages.count)
        } catch {
            ioFailure = error
            throw error
        }
    }

    func isOwned(_ page: Page) -> Bool { owned[page.number.rawValue] === page }

    /// A page number for a new page: one this transaction released, or one from FreeSpace.
    func allocate() -> UInt64 {
        if let p = released.popLast() { return p }
        let p = freeSpace.takePage()
        taken.append(p)
        return p
    }

    /// A page of `type`, freshly formatted, owned by this transaction.
    func newPage(_ type: PageType) -> Page {
        let page = Page(number: PageNumber(allocate()), size: pageSize)
        page.format(type)
        own(page)
        return page
    }

    /// The page itself if this transaction owns it, else an owned copy (the original is freed).
    func writable(_ page: Page) -> Page {
        if owned[page.number.rawValue] === page { return page }
        let copy = Page(copying: page, as: PageNumber(allocate()))
        own(copy)
        freed.append(page.number.rawValue)
        // The original now serves only snapshots older than this transaction: the cache need
        // not hold it beside its copy (a reader that wants it again reads it from the file).
        pager.forgetClean(page.number.rawValue)
        return copy
    }

    /// Frees a page: an owned one goes straight back to the allocator, a committed one waits.
    func release(_ number: PageNumber) {
        if owned.removeValue(forKey: number.rawValue) != nil || spilled.remove(number.rawValue) != nil {
            released.append(number.rawValue)
        } else {
            freed.append(number.rawValue)
            pager.forgetClean(number.rawValue)
        }
    }

    /// Stores a value's bytes in a new blob file and returns its ID.
    func writeBlob(_ value: [UInt8]) throws(EngineError) -> BlobID {
        guard let blobs else { throw EngineError(.invalidArgument, "this store has no blob directory") }
        guard blobSequence + 1 < (1 << 20) else {
            throw EngineError(.invalidArgument, "one transaction can store at most \((1 << 20) - 1) blob values; commit in smaller transactions")
        }
        blobSequence += 1
        let id = BlobID((lsn.rawValue << 20) | blobSequence)
        blobsWritten.append(id)
        do {
            try blobs.write(id, value, sync: durableBlobs)
        } catch {
            ioFailure = error
            throw error
        }
        return id
    }

    func freeBlob(_ id: BlobID) { blobsFreed.append(id) }

    /// Every page this transaction created and holds in memory, ready to publish (checksums are
    /// set when a checkpoint writes them: Page.sealedCopy). The spilled ones are in `spilled`.
    var ownedPages: Dictionary<UInt64, Page>.Values { owned.values }

    /// Rollback: every page taken goes back to FreeSpace and the file's end is restored.
    func rollBackAllocations() {
        freeSpace.giveBack(taken, pageCount: startPageCount)
        taken.removeAll()
        released.removeAll()
    }

    /// Commit: FreeSpace learns which pages were created, which were taken but not kept, and
    /// which pages of the committed state were replaced (freed at `lsn`).
    func finishAllocations(at lsn: LSN) {
        freeSpace.commit(created: owned.keys, unused: released, freed: freed, at: lsn)
        if !spilled.isEmpty { freeSpace.commit(created: spilled, unused: [], freed: [], at: lsn) }
        taken.removeAll()
        released.removeAll()
    }

    /// Removes the blob files this transaction wrote (on abort; best effort).
    func discardBlobs() {
        for id in blobsWritten { try? blobs?.remove(id) }
    }
}
