// Inspection: read-only views of a store's internals for `docstore inspect` — the durable meta
// page, the WAL as it stands on disk, and any page decoded field by field. Nothing here changes
// the store.

/// One page, decoded for display.
public struct PageSummary: Sendable {
    public var number: PageNumber
    /// nil for a meta page or an unknown type byte.
    public var type: PageType?
    public var isMeta: Bool
    /// Cells (leaf, branch) or entries (free list).
    public var count: Int
    public var lower: Int
    public var upper: Int
    /// Leftmost child (branch) or next page (overflow, free list).
    public var link: PageNumber
    public var storedChecksum: UInt32
    public var computedChecksum: UInt32
    /// The decoded meta record, for pages 0 and 1 when valid.
    public var meta: MetaPage?
    /// Why the page failed validation, if it did.
    public var problem: String?
    /// The keys (leaf/branch), as raw bytes, in order.
    public var keys: [[UInt8]]
    /// The page's bytes as they are in the file.
    public var bytes: [UInt8]
}

extension Engine {
    /// The meta page of the durable checkpoint.
    public var durableMeta: MetaPage { writer.withLock { $0.durableMeta } }

    /// The WAL as it stands in the file: header, intact records and where a torn tail begins.
    public func walReport() throws(EngineError) -> WALReadReport {
        let file = try fileSystem.openFile(paths.wal, create: false, readOnly: true)
        defer { file.close() }
        let meta = durableMeta
        return try WALReader.read(file: file, expectedGeneration: meta.walGeneration, expectedStart: meta.checkpointLSN.next)
    }

    /// Page `number` as the file holds it, decoded. Throws only if it cannot be read at all.
    public func inspectPage(_ number: PageNumber) throws(EngineError) -> PageSummary {
        var bytes = [UInt8](repeating: 0, count: pageSize)
        let n = try withMutableRawBytes(&bytes) { (raw) throws(EngineError) in
            try pager.file.read(into: raw, at: number.rawValue &* UInt64(pageSize))
        }
        guard n == pageSize else {
            throw EngineError(.invalidArgument, "page \(number.rawValue) lies beyond the end of the file", page: number)
        }
        return PageSummary(decoding: bytes, number: number, file: paths.pageFile)
    }

    /// What each page of the file is: the tree that owns it, free, or meta (for a page map).
    public func pageMap() throws(EngineError) -> [UInt64: String] {
        return try writer.withLock { (state) throws(EngineError) -> [UInt64: String] in
            var walk = IntegrityWalk(engine: self, readingDisk: false, pinned: [])
            let catalogRoot = published.withLock { $0.catalogRoot }
            try walk.walkTree(name: "$catalog", root: catalogRoot, expectedCount: nil)
            let names = try readInternal { (txn) throws(EngineError) -> [String] in
                var cursor = Cursor(source: pager, root: catalogRoot, blobs: nil, file: pager.path)
                var names: [String] = []
                var e = try cursor.first()
                while let entry = e { names.append(String(decoding: entry.key, as: UTF8.self)); e = try cursor.next() }
                return names
            }
            for name in names {
                if let info = try readInternal({ (txn) throws(EngineError) in try txn.info(name) }) {
                    try walk.walkTree(name: name, root: info.root, expectedCount: nil)
                }
            }
            var map = walk.owner
            map[0] = "meta"
            map[1] = "meta"
            let space = try state.freeSpace(pager)
            for p in space.allFree { map[p] = "free" }
            for p in space.durableFreeListPages { map[p] = "free list" }
            return map
        }
    }
}

extension PageSummary {
    /// Decodes one page's bytes (the page size is `bytes.count`) as `number` of `file`: the page
    /// decoders themselves, for ``Engine/inspectPage(_:)`` and the page-decode fuzz target.
    /// Never throws: a page that fails validation says why in ``problem``.
    package init(decoding bytes: [UInt8], number: PageNumber, file: String) {
        self.init(
            number: number, type: nil, isMeta: number.rawValue < 2, count: 0, lower: 0, upper: 0,
            link: .none, storedChecksum: 0, computedChecksum: 0, meta: nil, problem: nil, keys: [], bytes: bytes)
        guard EngineOptions.isValidPageSize(bytes.count) else {
            problem = "a page of \(bytes.count) bytes is not a page size DocStore writes"
            return
        }
        if isMeta {
            bytes.withUnsafeBytes { raw in
                storedChecksum = raw.u32(0)
                computedChecksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[4..<MetaPage.size]))
            }
            do throws(EngineError) {
                meta = try withRawBytes(bytes) { (raw) throws(EngineError) in
                    try MetaPage.decode(raw, slot: Int(number.rawValue), file: file)
                }
            } catch {
                problem = error.message
            }
            return
        }
        let page = Page(number: number, size: bytes.count)
        bytes.withUnsafeBytes { page.bytes.copyMemory(from: $0) }
        type = page.type
        count = page.count
        lower = page.lower
        upper = page.upper
        link = page.link
        storedChecksum = page.bytes.u32(PageHeader.checksum)
        computedChecksum = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: page.raw[4...]))
        do throws(EngineError) {
            try page.validate(file: file)
            if page.type == .leaf {
                try page.validateLeafCells(file: file)
                keys = (0..<page.count).map { Array(page.leafKey($0)) }
            } else if page.type == .branch {
                try page.validateBranchCells(file: file)
                keys = (0..<page.count).map { Array(page.branchKey($0)) }
            }
        } catch {
            problem = error.message
        }
    }
}
