// MetaPage: the root of everything in the page file. Pages 0 and 1 each hold one meta record; a
// checkpoint writes the slot (generation mod 2), so the two alternate (Format/page-file.md § Meta).
//
//   0 crc u32 | 4 magic "DOCSTORE" | 12 major u16 | 14 minor u16 | 16 pageSize u32 | 20 flags u32 |
//   24 generation u64 | 32 checkpointLSN u64 | 40 walGeneration u64 | 48 pageCount u64 |
//   56 catalogRoot u64 | 64 freeListHead u64 | 72 freeListCount u64 | 80 storeID 16 bytes |
//   96..127 zero                                           crc = CRC32C of bytes 4..<128
//
// I3: a reader takes the valid meta (rule M1-M6 in Format/page-file.md) with the higher
// generation, so a torn meta write costs at most the newest checkpoint.

import Foundation

/// The decoded meta record of a checkpoint.
public struct MetaPage: Sendable, Equatable {
    static let magic: [UInt8] = Array("DOCSTORE".utf8)
    package static let size = 128
    /// The format version this code writes; a reader refuses any other major version.
    public static let formatMajor: UInt16 = 2
    public static let formatMinor: UInt16 = 0

    public var formatMajor: UInt16 = MetaPage.formatMajor
    public var formatMinor: UInt16 = MetaPage.formatMinor
    public var pageSize: Int
    public var generation: Generation
    /// The last transaction included in this checkpoint.
    public var checkpointLSN: LSN
    /// The WAL generation (salt) whose records continue this checkpoint.
    public var walGeneration: UInt64
    /// One past the highest page number this checkpoint uses.
    public var pageCount: UInt64
    /// Root of the catalog tree (tree name → root and count), 0 when no tree exists.
    public var catalogRoot: PageNumber
    /// First page of the free list chain, 0 when there is none.
    public var freeListHead: PageNumber
    /// How many page numbers the free list holds.
    public var freeListCount: UInt64
    /// The store's identity, fixed at creation.
    public var storeID: UUID

    func encode() -> [UInt8] {
        var b = [UInt8](repeating: 0, count: 4)
        b += MetaPage.magic
        b.appendU16(formatMajor)
        b.appendU16(formatMinor)
        b.appendU32(UInt32(pageSize))
        b.appendU32(0)
        b.appendU64(generation.rawValue)
        b.appendU64(checkpointLSN.rawValue)
        b.appendU64(walGeneration)
        b.appendU64(pageCount)
        b.appendU64(catalogRoot.rawValue)
        b.appendU64(freeListHead.rawValue)
        b.appendU64(freeListCount)
        withUnsafeBytes(of: storeID.uuid) { b += $0 }
        b += [UInt8](repeating: 0, count: MetaPage.size - b.count)
        let crc = b.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[4...])) }
        b.withUnsafeMutableBytes { $0.setU32(0, crc) }
        return b
    }

    /// Decodes and validates a meta record (rules M1-M6). `slot` is 0 or 1, for error messages.
    static func decode(_ raw: UnsafeRawBufferPointer, slot: Int, file: String) throws(EngineError) -> MetaPage {
        let at = PageNumber(UInt64(slot))
        guard raw.count >= size else { throw .corrupt("meta page \(slot) is truncated", file: file, page: at) }
        // M1: magic.
        guard Array(raw[4..<12]) == magic else {
            throw EngineError(.notADocStore, "meta page \(slot) lacks the DOCSTORE magic", file: file, page: at, offset: 4)
        }
        // M2: checksum.
        let crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: raw[4..<size]))
        guard crc == raw.u32(0) else { throw .corrupt("meta page \(slot) checksum mismatch", file: file, page: at, offset: 0) }
        // M3: version.
        let major = raw.u16(12)
        guard major <= formatMajor else {
            throw EngineError(.versionTooNew, "the store has format version \(major).\(raw.u16(14)); this DocStore reads up to \(formatMajor).x — update DocStore", file: file, page: at, offset: 12)
        }
        guard major == formatMajor else {
            throw EngineError(.versionTooOld, "the store has format version \(major).\(raw.u16(14)), which only development builds wrote; this DocStore reads \(formatMajor).x — re-create the store", file: file, page: at, offset: 12)
        }
        // M4: page size.
        let pageSize = Int(raw.u32(16))
        guard EngineOptions.isValidPageSize(pageSize) else {
            throw .corrupt("meta page \(slot) has an invalid page size \(pageSize)", file: file, page: at, offset: 16)
        }
        // M5: page references inside the file's page range.
        let pageCount = raw.u64(48)
        let catalogRoot = raw.u64(56), freeHead = raw.u64(64)
        guard pageCount >= 2, pageCount < (UInt64(1) << 40),
              catalogRoot < pageCount, catalogRoot != 1, freeHead < pageCount, freeHead != 1,
              raw.u64(72) < pageCount else {
            throw .corrupt("meta page \(slot) references pages outside its page count \(pageCount)", file: file, page: at, offset: 48)
        }
        // M6: generation at least 1.
        guard raw.u64(24) >= 1 else { throw .corrupt("meta page \(slot) has generation 0", file: file, page: at, offset: 24) }
        var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[80..<96])) }
        return MetaPage(
            formatMajor: major, formatMinor: raw.u16(14), pageSize: pageSize,
            generation: Generation(raw.u64(24)), checkpointLSN: LSN(raw.u64(32)),
            walGeneration: raw.u64(40), pageCount: pageCount, catalogRoot: PageNumber(catalogRoot),
            freeListHead: PageNumber(freeHead), freeListCount: raw.u64(72), storeID: UUID(uuid: uuid))
    }
}
