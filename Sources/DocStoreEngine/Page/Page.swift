// Page: one fixed-size page of the page file held in memory as raw bytes, and the page header that
// every non-meta page starts with (Format/page-file.md § Page header).
//
//   0       4      5      6        8               16      20      24              32
//   +-------+------+------+--------+---------------+-------+-------+---------------+
//   | crc   | type | flags| count  | page number   | lower | upper | link          |
//   +-------+------+------+--------+---------------+-------+-------+---------------+
//
// Thread safety: a Page is mutated only by the one write transaction that allocated it, while no
// published snapshot can reach it; the commit publishes it under the engine's state lock, which
// orders those writes before any reader's access. After that it is never mutated again, so
// concurrent readers share it without locks. That is why Page is `@unchecked Sendable`: the only
// mutable state is the buffer, and ownership rules above keep every access either exclusive
// (writer, pre-publication) or read-only (after publication).
//
// The checksum is computed only when a page goes to the file: a checkpoint writes
// `sealedCopy(into:)`, a copy with the checksum set, so a published page is never touched again and
// a page rewritten by many commits between two checkpoints is checksummed once. In memory the
// checksum field is stale; nothing reads it there (pages are validated only as read from disk).

/// The kind of a page, stored in its header.
public enum PageType: UInt8, Sendable, CustomStringConvertible {
    case branch = 1
    case leaf = 2
    case overflow = 3
    case freeList = 4

    public var description: String {
        switch self {
        case .branch: "branch"
        case .leaf: "leaf"
        case .overflow: "overflow"
        case .freeList: "freelist"
        }
    }
}

/// Offsets of the page header fields (Format/page-file.md § Page header).
enum PageHeader {
    static let checksum = 0      // u32 CRC32C of bytes 4..<pageSize
    static let type = 4          // u8 PageType
    static let flags = 5         // u8, zero
    static let count = 6         // u16 number of cells (leaf/branch) or entries (freelist)
    static let pageNumber = 8    // u64 this page's own number (detects misdirected writes)
    static let lower = 16        // u32 end of the slot array (leaf/branch)
    static let upper = 20        // u32 start of the cell area (leaf/branch)
    static let link = 24         // u64 branch: leftmost child; overflow/freelist: next page; leaf: 0
    static let size = 32
}

/// One page in memory.
public final class Page: @unchecked Sendable {
    /// The page's bytes; exactly `pageSize` long.
    let bytes: UnsafeMutableRawBufferPointer
    /// Where the page lives in the file.
    let number: PageNumber

    /// A zero-filled page.
    init(number: PageNumber, size: Int) {
        self.number = number
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 16)
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
    }

    /// A copy of `other`'s bytes under a new page number (copy-on-write).
    init(copying other: Page, as number: PageNumber) {
        self.number = number
        bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: other.bytes.count, alignment: 16)
        bytes.copyMemory(from: UnsafeRawBufferPointer(other.bytes))
        bytes.setU64(PageHeader.pageNumber, number.rawValue)
    }

    deinit { bytes.deallocate() }

    var size: Int { bytes.count }
    var raw: UnsafeRawBufferPointer { UnsafeRawBufferPointer(bytes) }

    /// Starts a fresh page of `type`: header fields set, cells empty.
    func format(_ type: PageType) {
        bytes.initializeMemory(as: UInt8.self, repeating: 0)
        bytes.setU8(PageHeader.type, type.rawValue)
        bytes.setU64(PageHeader.pageNumber, number.rawValue)
        lower = PageHeader.size
        upper = bytes.count
    }

    var type: PageType? { PageType(rawValue: bytes.u8(PageHeader.type)) }
    var count: Int {
        get { Int(bytes.u16(PageHeader.count)) }
        set { bytes.setU16(PageHeader.count, UInt16(newValue)) }
    }
    var lower: Int {
        get { Int(bytes.u32(PageHeader.lower)) }
        set { bytes.setU32(PageHeader.lower, UInt32(newValue)) }
    }
    var upper: Int {
        get { Int(bytes.u32(PageHeader.upper)) }
        set { bytes.setU32(PageHeader.upper, UInt32(newValue)) }
    }
    var link: PageNumber {
        get { PageNumber(bytes.u64(PageHeader.link)) }
        set { bytes.setU64(PageHeader.link, newValue.rawValue) }
    }

    /// Copies the page into `buffer` (one page long) as the file holds it: own page number and
    /// checksum set. The page itself is not changed, so readers may share it meanwhile.
    func sealedCopy(into buffer: UnsafeMutableRawBufferPointer) {
        buffer.copyMemory(from: raw)
        buffer.setU64(PageHeader.pageNumber, number.rawValue)
        buffer.setU32(PageHeader.checksum, CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[4...])))
    }

    /// Computes and stores the checksum of a page no reader can reach yet (a new free-list page).
    func seal() {
        bytes.setU64(PageHeader.pageNumber, number.rawValue)
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[4...]))
        bytes.setU32(PageHeader.checksum, crc)
    }

    /// Checks a page just read from disk (I10): checksum, own page number, a known type, and for
    /// slotted pages the slot bounds. Cell contents are checked by the views that read them.
    func validate(file: String, expecting expected: PageType? = nil) throws(EngineError) {
        let stored = bytes.u32(PageHeader.checksum)
        let actual = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[4...]))
        guard stored == actual else {
            throw .corrupt(
                "page checksum mismatch (stored 0x\(String(stored, radix: 16)), computed 0x\(String(actual, radix: 16)))",
                file: file, page: number, offset: number.rawValue &* UInt64(size))
        }
        let recorded = bytes.u64(PageHeader.pageNumber)
        guard recorded == number.rawValue else {
            throw .corrupt("page records number \(recorded): a misdirected write", file: file, page: number,
                           offset: number.rawValue &* UInt64(size) + UInt64(PageHeader.pageNumber))
        }
        guard let type else {
            throw .corrupt("unknown page type \(bytes.u8(PageHeader.type))", file: file, page: number,
                           offset: number.rawValue &* UInt64(size) + UInt64(PageHeader.type))
        }
        if let expected, expected != type {
            // A branch and a leaf are both valid where a tree node is expected.
            let bothNodes = (expected == .branch || expected == .leaf) && (type == .branch || type == .leaf)
            if !bothNodes {
                throw .corrupt("expected a \(expected) page, found a \(type) page", file: file, page: number)
            }
        }
        if type == .branch || type == .leaf {
            let n = count, lo = lower, up = upper
            guard lo == PageHeader.size + 2 * n, lo <= up, up <= size else {
                throw .corrupt("slot area out of bounds (count \(n), lower \(lo), upper \(up))", file: file, page: number)
            }
        }
    }

    // MARK: - Slotted layout (leaf and branch pages)
    //
    // Slots (u16 offsets of cells, in key order) grow up from the header; cells grow down from the
    // end of the page. A deleted cell leaves a hole that `compact` reclaims.

    @inline(__always) func slot(_ i: Int) -> Int { Int(bytes.u16(PageHeader.size + 2 * i)) }
    @inline(__always) func setSlot(_ i: Int, _ offset: Int) { bytes.setU16(PageHeader.size + 2 * i, UInt16(offset)) }

    /// Contiguous free bytes between the slot array and the cells.
    var gap: Int { upper - lower }

    /// Inserts a cell of `cellSize` bytes at slot `index`, returning the cell's offset for the
    /// caller to fill. The caller has checked that `gap >= cellSize + 2`.
    func insertSlot(at index: Int, cellSize: Int) -> Int {
        let n = count
        let base = PageHeader.size
        if index < n, let start = bytes.baseAddress {
            let from = start + base + 2 * index
            (from + 2).copyMemory(from: from, byteCount: 2 * (n - index))
        }
        let offset = upper - cellSize
        upper = offset
        setSlot(index, offset)
        count = n + 1
        lower = base + 2 * (n + 1)
        return offset
    }

    /// Removes slot `index` (the cell's bytes become a hole).
    func removeSlot(at index: Int) {
        let n = count
        let base = PageHeader.size
        if index < n - 1, let start = bytes.baseAddress {
            let to = start + base + 2 * index
            to.copyMemory(from: to + 2, byteCount: 2 * (n - 1 - index))
        }
        count = n - 1
        lower = base + 2 * (n - 1)
        if n - 1 == 0 { upper = size }
    }
}
