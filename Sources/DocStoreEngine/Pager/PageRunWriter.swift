// PageRunWriter: writes pages to the page file in runs — pages of consecutive numbers gathered in
// one buffer and written by one call — instead of one system call per page. A spill and a
// checkpoint write their pages in ascending order, and pages allocated one after another have
// consecutive numbers, so most of their pages form long runs.
//
// Invariants: the file ends up with exactly the bytes writing each page at its own place would
// give; a page's bytes are copied when it is added, so the caller may change or drop the page
// afterwards. `flush()` must be called to write the last run; a failed write throws and the
// pages of that run may be partly written (the caller fails its transaction or checkpoint, as
// for a failed single write).

/// Gathers pages of consecutive numbers and writes each run with one call.
final class PageRunWriter {
    private let file: any StorageFile
    private let pageSize: Int
    private let capacity: Int
    private let buffer: UnsafeMutableRawBufferPointer
    /// The number of the run's first page, and how many pages the run holds.
    private var first: UInt64 = 0
    private var count = 0

    /// A writer for `file`, whose runs hold at most `pagesAtMost` pages (256 KiB of 4 KiB pages).
    init(file: any StorageFile, pageSize: Int, pagesAtMost: Int = 64) {
        self.file = file
        self.pageSize = pageSize
        self.capacity = max(pagesAtMost, 1)
        self.buffer = .allocate(byteCount: pageSize * capacity, alignment: 16)
    }

    deinit { buffer.deallocate() }

    /// Adds page `number`, whose bytes `fill` writes into the page-sized buffer it is given.
    /// Writes the run so far first when this page does not continue it or it is full; returns
    /// whether it did (every page added before this one is then in the file).
    @discardableResult
    func append(_ number: UInt64, _ fill: (UnsafeMutableRawBufferPointer) -> Void) throws(EngineError) -> Bool {
        var wrote = false
        if count > 0, number != first &+ UInt64(count) || count == capacity {
            try flush()
            wrote = true
        }
        if count == 0 { first = number }
        fill(UnsafeMutableRawBufferPointer(rebasing: buffer[(count * pageSize)..<((count + 1) * pageSize)]))
        count += 1
        return wrote
    }

    /// Writes the pages added since the last write.
    func flush() throws(EngineError) {
        guard count > 0 else { return }
        let n = count
        count = 0
        try file.write(UnsafeRawBufferPointer(rebasing: buffer[0..<(n * pageSize)]), at: first &* UInt64(pageSize))
    }
}
