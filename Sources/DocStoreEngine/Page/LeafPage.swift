// Leaf pages: the cells that hold a tree's keys and values, in key order (Format/page-file.md
// § Leaf page).
//
// Leaf cell:  flags u8 | keyLength u16 | valueLength u32 | key bytes | payload
//   flags bits 0-1: 0 = value inline (payload = the value), 1 = overflow (payload = first page u64
//   + stored length u32), 2 = blob (payload = blob ID u64); bit 2: the overflow bytes are LZ4.
// valueLength is always the value's logical (uncompressed) length.

/// How a leaf cell stores its value.
enum ValueStorage: UInt8 {
    case inline = 0
    case overflow = 1
    case blob = 2
}

enum LeafCell {
    static let headerSize = 7
    static let flagsOffset = 0
    static let keyLengthOffset = 1
    static let valueLengthOffset = 3
    static let compressedFlag: UInt8 = 0x04
    static let overflowPayloadSize = 12
    static let blobPayloadSize = 8

    static func payloadSize(storage: ValueStorage, valueLength: Int) -> Int {
        switch storage {
        case .inline: valueLength
        case .overflow: overflowPayloadSize
        case .blob: blobPayloadSize
        }
    }
}

extension Page {
    @inline(__always) func leafKeyLength(_ i: Int) -> Int { Int(bytes.u16(slot(i) + LeafCell.keyLengthOffset)) }

    /// The key of leaf cell `i`, as a view into the page.
    @inline(__always) func leafKey(_ i: Int) -> UnsafeRawBufferPointer {
        let o = slot(i)
        let n = Int(bytes.u16(o + LeafCell.keyLengthOffset))
        return UnsafeRawBufferPointer(rebasing: raw[(o + LeafCell.headerSize)..<(o + LeafCell.headerSize + n)])
    }

    func leafFlags(_ i: Int) -> UInt8 { bytes.u8(slot(i)) }
    func leafStorage(_ i: Int) -> ValueStorage { ValueStorage(rawValue: bytes.u8(slot(i)) & 0x03) ?? .inline }
    func leafValueLength(_ i: Int) -> Int { Int(bytes.u32(slot(i) + LeafCell.valueLengthOffset)) }

    /// The payload of leaf cell `i` (the inline value, or the overflow/blob reference).
    func leafPayload(_ i: Int) -> UnsafeRawBufferPointer {
        let o = slot(i)
        let start = o + LeafCell.headerSize + leafKeyLength(i)
        let n = LeafCell.payloadSize(storage: leafStorage(i), valueLength: leafValueLength(i))
        return UnsafeRawBufferPointer(rebasing: raw[start..<(start + n)])
    }

    /// The size in bytes of leaf cell `i`.
    func leafCellSize(_ i: Int) -> Int {
        LeafCell.headerSize + leafKeyLength(i)
            + LeafCell.payloadSize(storage: leafStorage(i), valueLength: leafValueLength(i))
    }

    /// The whole cell `i` as a view (for moving cells between pages).
    func leafCell(_ i: Int) -> UnsafeRawBufferPointer {
        let o = slot(i)
        return UnsafeRawBufferPointer(rebasing: raw[o..<(o + leafCellSize(i))])
    }

    /// Checks every cell of a leaf read from disk lies inside the page and is well-formed (I10).
    func validateLeafCells(file: String) throws(EngineError) {
        for i in 0..<count {
            let o = slot(i)
            guard o >= upper, o + LeafCell.headerSize <= size else {
                throw .corrupt("leaf cell \(i) at offset \(o) is outside the cell area", file: file, page: number)
            }
            guard ValueStorage(rawValue: bytes.u8(o) & 0x03) != nil, bytes.u8(o) & ~0x07 == 0 else {
                throw .corrupt("leaf cell \(i) has unknown flags 0x\(String(bytes.u8(o), radix: 16))", file: file, page: number)
            }
            guard o + leafCellSize(i) <= size else {
                throw .corrupt("leaf cell \(i) runs past the end of the page", file: file, page: number)
            }
        }
    }
}
