// BTree: lookups in a copy-on-write B+tree of byte keys and byte values (Format/page-file.md).
//
// A tree is named by its root page (0 = empty tree). Branch pages route by separator keys, leaf
// pages hold the cells in key order; all leaves are at the same depth. The read algorithms here
// are generic over PageSource so that snapshots and write transactions share them without
// existentials in the inner loop. Mutations are in BTree+Insert.swift and BTree+Delete.swift.

enum BTree {
    /// The deepest a valid tree can be; a deeper descent means a cycle in a corrupt file (I10).
    static let maxDepth = 32

    /// The leaf that holds (or would hold) `key`, and the cell index and whether it matched.
    static func find<S: PageSource>(
        _ key: UnsafeRawBufferPointer, root: PageNumber, in source: S
    ) throws(EngineError) -> (leaf: Page, index: Int, found: Bool)? {
        guard root != .none else { return nil }
        var page = try source.page(root)
        var depth = 0
        var parent: (page: Page, position: Int)?
        while page.type == .branch {
            depth += 1
            guard depth <= maxDepth, page.count > 0 || page.link != .none else {
                throw .corrupt("branch page has no children or the tree is deeper than \(maxDepth)", page: page.number)
            }
            let position = page.childPosition(for: key)
            parent = (page, position)
            page = try source.page(page.child(at: position))
        }
        guard page.type == .leaf else { throw .corrupt("tree reaches a non-node page", page: page.number) }
        let (index, found) = leafSearch(page, key, parent: parent)
        return (page, index, found)
    }

    /// `leafSearch`, starting where an eight-byte `key` would sit if the leaf's keys were spread
    /// evenly between the separators that bound it in `parent` (the branch and the child
    /// position the descent took): primary keys grow by one, so the first probe usually hits,
    /// and each probe is a cache miss on a page just read. From a wrong guess it gallops
    /// outward and then searches what it bracketed, so the answer is always `leafSearch`'s.
    @inline(__always)
    static func leafSearch(_ leaf: Page, _ key: UnsafeRawBufferPointer, parent: (page: Page, position: Int)?) -> (Int, Bool) {
        let n = leaf.count
        guard n > 8, key.count == 8, let (branch, position) = parent, position > 0, position < branch.count else {
            return leafSearch(leaf, key)
        }
        let lowKey = branch.branchKey(position - 1), highKey = branch.branchKey(position)
        guard lowKey.count == 8, highKey.count == 8 else { return leafSearch(leaf, key) }
        let low = UInt64(bigEndian: lowKey.loadUnaligned(as: UInt64.self))
        let high = UInt64(bigEndian: highKey.loadUnaligned(as: UInt64.self))
        let k = UInt64(bigEndian: key.loadUnaligned(as: UInt64.self))
        guard low <= k, k < high else { return leafSearch(leaf, key) }
        let guess = min(n - 1, Int(Double(k - low) / Double(high - low) * Double(n)))
        // Invariant: cells below `lo` hold smaller keys, cells from `hi` on larger ones.
        var lo = 0, hi = n
        let c = compareKeys(leaf.leafKey(guess), key)
        if c == 0 { return (guess, true) }
        var step = 1
        if c < 0 {
            lo = guess + 1
            while guess + step < n {
                let probe = guess + step
                let cp = compareKeys(leaf.leafKey(probe), key)
                if cp == 0 { return (probe, true) }
                if cp > 0 { hi = probe; break }
                lo = probe + 1
                step &<<= 1
            }
        } else {
            hi = guess
            while guess - step >= 0 {
                let probe = guess - step
                let cp = compareKeys(leaf.leafKey(probe), key)
                if cp == 0 { return (probe, true) }
                if cp < 0 { lo = probe + 1; break }
                hi = probe
                step &<<= 1
            }
        }
        return bisect(leaf, key, lo, hi)
    }

    /// Binary search in a leaf: the index of `key`, or where it would be inserted.
    @inline(__always) static func leafSearch(_ leaf: Page, _ key: UnsafeRawBufferPointer) -> (Int, Bool) {
        bisect(leaf, key, 0, leaf.count)
    }

    /// Binary search of the leaf's cells `lo..<hi`, where cells below `lo` hold smaller keys and
    /// cells from `hi` on larger ones: the index of `key`, or where it would be inserted.
    @inline(__always) private static func bisect(_ leaf: Page, _ key: UnsafeRawBufferPointer, _ lo: Int, _ hi: Int) -> (Int, Bool) {
        var lo = lo, hi = hi
        while lo < hi {
            let mid = (lo &+ hi) >> 1
            let c = compareKeys(leaf.leafKey(mid), key)
            if c < 0 { lo = mid + 1 } else if c > 0 { hi = mid } else { return (mid, true) }
        }
        return (lo, false)
    }

    /// The value of leaf cell `index` in place in the leaf, or nil when it is stored elsewhere
    /// (overflow pages, a blob file: `value(of:…)` assembles it). Valid while the caller holds
    /// `leaf`. A cursor hands a value over in place this way without passing its page source,
    /// blob store and file name along — each was a retain and a release per entry read.
    @inline(__always)
    static func inlineValue(of leaf: Page, at index: Int) -> UnsafeRawBufferPointer? {
        let info = leaf.leafValueInfo(index)
        guard case .inline = info.storage else { return nil }
        let payloadSize = LeafCell.payloadSize(storage: info.storage, valueLength: info.valueLength)
        return UnsafeRawBufferPointer(rebasing: leaf.raw[info.payloadStart..<(info.payloadStart + payloadSize)])
    }

    static func value<S: PageSource>(
        of leaf: Page, at index: Int, in source: S, blobs: BlobStore?, file: String
    ) throws(EngineError) -> [UInt8] {
        // One decode of the cell's header (it is varint-coded) serves every field below.
        let info = leaf.leafValueInfo(index)
        let length = info.valueLength
        let payloadSize = LeafCell.payloadSize(storage: info.storage, valueLength: length)
        let payload = UnsafeRawBufferPointer(rebasing: leaf.raw[info.payloadStart..<(info.payloadStart + payloadSize)])
        switch info.storage {
        case .inline:
            return Array(payload)
        case .overflow:
            let first = PageNumber(payload.u64(0))
            let stored = Int(payload.u32(8))
            // L5: fewer stored bytes than the value's length means LZ4; more is corrupt.
            guard stored <= length else {
                throw .corrupt("overflow value stores \(stored) bytes, more than its length \(length)", file: file, page: leaf.number)
            }
            let bytes = try OverflowPage.read(from: source, first: first, storedLength: stored, file: file)
            if stored < length {
                return try LZ4.decompress(bytes, rawLength: length)
            }
            guard bytes.count == length else {
                throw .corrupt("overflow value has \(bytes.count) bytes, its cell says \(length)", file: file, page: leaf.number)
            }
            return bytes
        case .blob:
            guard let blobs else { throw .corrupt("a blob value in a store without a blob directory", file: file, page: leaf.number) }
            return try blobs.read(BlobID(payload.u64(0)), expectedLength: length)
        }
    }
}
