// Leaf pages: the cells that hold a tree's keys and values, in key order (Format/page-file.md
// § Leaf page).
//
// Leaf cell:  head varint | key bytes | valueLength varint | payload
//   head = keyLength × 4 + storage; storage 0 = value inline (payload = the value), 1 = overflow
//   (payload = first page u64 + stored length u32; the stored bytes are LZ4 exactly when the
//   stored length is below valueLength), 2 = blob (payload = blob ID u64).
// valueLength is always the value's logical (uncompressed) length. Varints are unsigned LEB128
// (Format/FORMAT.md § Varint): a 16-byte key and a 100-byte value cost 2 header bytes.
//
// The accessors below decode without bounds checks: they run only on pages this process built or
// that `validateLeafCells` accepted when they were read from disk (I10), which checks exactly what
// they rely on (rules L1-L4).

/// How a leaf cell stores its value.
enum ValueStorage: UInt8 {
    case inline = 0
    case overflow = 1
    case blob = 2
}

enum LeafCell {
    /// The most header bytes a cell can have: a 2-byte head (keys fit a page, so keyLength × 4 + 3
    /// < 16 384) and a 5-byte valueLength (< 2^32). Used for the size limits, so that a cell's
    /// header never decides whether it fits.
    static let maxHeaderSize = 7
    static let overflowPayloadSize = 12
    static let blobPayloadSize = 8

    static func payloadSize(storage: ValueStorage, valueLength: Int) -> Int {
        switch storage {
        case .inline: valueLength
        case .overflow: overflowPayloadSize
        case .blob: blobPayloadSize
        }
    }

    /// Bytes of the header of a cell with this key and value length.
    @inline(__always) static func headerSize(keyLength: Int, valueLength: Int) -> Int {
        varintSize(UInt64(keyLength) << 2) + varintSize(UInt64(valueLength))
    }

    /// Bytes of an inline cell with this key and value length (head, key, value length, value).
    @inline(__always) static func inlineSize(keyLength: Int, valueLength: Int) -> Int {
        headerSize(keyLength: keyLength, valueLength: valueLength) + keyLength + valueLength
    }

    @inline(__always) static func varintSize(_ v: UInt64) -> Int {
        v < 0x80 ? 1 : v < 0x4000 ? 2 : (64 - v.leadingZeroBitCount + 6) / 7
    }

    /// Builds a cell: head, key, valueLength, then the payload that `payload` appends.
    static func build(key: [UInt8], storage: ValueStorage, valueLength: Int, payloadSize: Int, _ payload: (inout [UInt8]) -> Void) -> [UInt8] {
        var cell: [UInt8] = []
        cell.reserveCapacity(headerSize(keyLength: key.count, valueLength: valueLength) + key.count + payloadSize)
        cell.appendVarint(UInt64(key.count) << 2 | UInt64(storage.rawValue))
        cell += key
        cell.appendVarint(UInt64(valueLength))
        payload(&cell)
        return cell
    }
}

extension Page {
    /// Decodes the varint at `offset`: its value and its size. Trusted pages only (see the header).
    @inline(__always) func cellVarint(_ offset: Int) -> (value: Int, size: Int) {
        let b0 = bytes.u8(offset)
        if b0 < 0x80 { return (Int(b0), 1) }
        var value = Int(b0 & 0x7F)
        var shift = 7
        var i = offset + 1
        while true {
            let b = bytes.u8(i)
            value |= Int(b & 0x7F) << shift
            i += 1
            if b < 0x80 { return (value, i - offset) }
            shift += 7
        }
    }

    /// The head of the cell at `o`: key length, storage bits, and where the key starts.
    @inline(__always) func leafHead(_ o: Int) -> (keyLength: Int, storage: Int, keyStart: Int) {
        let (head, size) = cellVarint(o)
        return (head >> 2, head & 3, o + size)
    }

    @inline(__always) func leafKeyLength(_ i: Int) -> Int { leafHead(slot(i)).keyLength }

    /// The key of leaf cell `i`, as a view into the page.
    @inline(__always) func leafKey(_ i: Int) -> UnsafeRawBufferPointer {
        let h = leafHead(slot(i))
        return UnsafeRawBufferPointer(rebasing: raw[h.keyStart..<(h.keyStart + h.keyLength)])
    }

    func leafStorage(_ i: Int) -> ValueStorage { ValueStorage(rawValue: UInt8(leafHead(slot(i)).storage)) ?? .inline }

    /// Value length, storage and where the payload starts, for cell `i`.
    @inline(__always) func leafValueInfo(_ i: Int) -> (valueLength: Int, storage: ValueStorage, payloadStart: Int) {
        let h = leafHead(slot(i))
        let v = cellVarint(h.keyStart + h.keyLength)
        return (v.value, ValueStorage(rawValue: UInt8(h.storage)) ?? .inline, h.keyStart + h.keyLength + v.size)
    }

    func leafValueLength(_ i: Int) -> Int { leafValueInfo(i).valueLength }

    /// The payload of leaf cell `i` (the inline value, or the overflow/blob reference).
    func leafPayload(_ i: Int) -> UnsafeRawBufferPointer {
        let info = leafValueInfo(i)
        let n = LeafCell.payloadSize(storage: info.storage, valueLength: info.valueLength)
        return UnsafeRawBufferPointer(rebasing: raw[info.payloadStart..<(info.payloadStart + n)])
    }

    /// The size in bytes of leaf cell `i`.
    @inline(__always) func leafCellSize(_ i: Int) -> Int {
        let info = leafValueInfo(i)
        return info.payloadStart - slot(i) + LeafCell.payloadSize(storage: info.storage, valueLength: info.valueLength)
    }

    /// Bytes the cells of this leaf take, slots included (holes left by deletes not counted).
    func leafBytesInUse() -> Int {
        var total = 2 * count
        for i in 0..<count { total += leafCellSize(i) }
        return total
    }

    /// The whole cell `i` as a view (for moving cells between pages).
    func leafCell(_ i: Int) -> UnsafeRawBufferPointer {
        let o = slot(i)
        return UnsafeRawBufferPointer(rebasing: raw[o..<(o + leafCellSize(i))])
    }

    /// Checks every cell of a leaf read from disk lies inside the page and is well-formed (I10),
    /// rules L1-L4 of Format/page-file.md § Leaf page, in order.
    func validateLeafCells(file: String) throws(EngineError) {
        for i in 0..<count {
            let o = slot(i)
            // L1: the cell starts in the cell area.
            guard o >= upper, o < size else {
                throw .corrupt("leaf cell \(i) at offset \(o) is outside the cell area", file: file, page: number)
            }
            // L2: head varint inside the page, at most 2 bytes, storage 0-2.
            guard let head = checkedVarint(o, maxBytes: 2) else {
                throw .corrupt("leaf cell \(i) has a head that runs past the page or is longer than 2 bytes", file: file, page: number, offset: number.rawValue &* UInt64(size) + UInt64(o))
            }
            guard head.value & 3 != 3 else {
                throw .corrupt("leaf cell \(i) has storage kind 3", file: file, page: number, offset: number.rawValue &* UInt64(size) + UInt64(o))
            }
            // L3: valueLength varint after the key, inside the page, at most 5 bytes, < 2^32.
            let valueAt = o + head.size + head.value >> 2
            guard valueAt < size, let value = checkedVarint(valueAt, maxBytes: 5), value.value < 1 << 32 else {
                throw .corrupt("leaf cell \(i) has a key or value length that runs past the page", file: file, page: number, offset: number.rawValue &* UInt64(size) + UInt64(o))
            }
            // L4: the payload ends inside the page.
            let storage = ValueStorage(rawValue: UInt8(head.value & 3)) ?? .inline
            guard valueAt + value.size + LeafCell.payloadSize(storage: storage, valueLength: value.value) <= size else {
                throw .corrupt("leaf cell \(i) runs past the end of the page", file: file, page: number, offset: number.rawValue &* UInt64(size) + UInt64(o))
            }
        }
    }

    /// A varint at `offset` that ends inside the page within `maxBytes` bytes, else nil.
    private func checkedVarint(_ offset: Int, maxBytes: Int) -> (value: Int, size: Int)? {
        var value = 0
        for k in 0..<maxBytes {
            guard offset + k < size else { return nil }
            let b = bytes.u8(offset + k)
            value |= Int(b & 0x7F) << (7 * k)
            if b < 0x80 { return (value, k + 1) }
        }
        return nil
    }
}
