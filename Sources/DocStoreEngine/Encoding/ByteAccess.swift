// Little-endian fixed-width field access on raw buffers, the way every page and record is read and
// written (Format/FORMAT.md § Conventions: little-endian throughout). Loads are unaligned; callers
// check bounds first (page layouts have fixed offsets; variable ones go through ByteReader).
// Package-visible so test support fixes up fields (the fuzz targets) the way the engine reads them.

extension UnsafeRawBufferPointer {
    @inline(__always) package func u8(_ offset: Int) -> UInt8 { self[offset] }
    @inline(__always) package func u16(_ offset: Int) -> UInt16 {
        UInt16(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt16.self))
    }
    @inline(__always) package func u32(_ offset: Int) -> UInt32 {
        UInt32(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }
    @inline(__always) package func u64(_ offset: Int) -> UInt64 {
        UInt64(littleEndian: loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }
}

extension UnsafeMutableRawBufferPointer {
    @inline(__always) package func u8(_ offset: Int) -> UInt8 { self[offset] }
    @inline(__always) package func u16(_ offset: Int) -> UInt16 { UnsafeRawBufferPointer(self).u16(offset) }
    @inline(__always) package func u32(_ offset: Int) -> UInt32 { UnsafeRawBufferPointer(self).u32(offset) }
    @inline(__always) package func u64(_ offset: Int) -> UInt64 { UnsafeRawBufferPointer(self).u64(offset) }
    @inline(__always) package func setU8(_ offset: Int, _ v: UInt8) { self[offset] = v }
    @inline(__always) package func setU16(_ offset: Int, _ v: UInt16) {
        storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt16.self)
    }
    @inline(__always) package func setU32(_ offset: Int, _ v: UInt32) {
        storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt32.self)
    }
    @inline(__always) package func setU64(_ offset: Int, _ v: UInt64) {
        storeBytes(of: v.littleEndian, toByteOffset: offset, as: UInt64.self)
    }
}

// `package`: the object layer writes its records with the same primitives (Format/record.md).
extension Array where Element == UInt8 {
    @inline(__always) package mutating func appendU16(_ v: UInt16) { Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) } }
    @inline(__always) package mutating func appendU32(_ v: UInt32) { Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) } }
    @inline(__always) package mutating func appendU64(_ v: UInt64) { Swift.withUnsafeBytes(of: v.littleEndian) { append(contentsOf: $0) } }
    /// Appends an unsigned LEB128 varint (Format/FORMAT.md § Varint).
    @inline(__always) package mutating func appendVarint(_ value: UInt64) {
        var v = value
        while v >= 0x80 { append(UInt8(truncatingIfNeeded: v) | 0x80); v >>= 7 }
        append(UInt8(v))
    }
    /// Appends a varint length followed by the bytes.
    package mutating func appendLengthPrefixed(_ bytes: [UInt8]) {
        appendVarint(UInt64(bytes.count))
        append(contentsOf: bytes)
    }
}

/// A bounds-checked cursor over bytes read from disk: every read that would run past the end
/// throws `.corrupt` with the offset, never traps (I10).
struct ByteReader {
    let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int
    /// Describes where these bytes came from, for error messages ("WAL record", "freelist page").
    let what: String

    init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0, what: String) {
        self.bytes = bytes
        self.offset = offset
        self.what = what
    }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset >= bytes.count }

    private func short(_ n: Int) -> EngineError {
        .corrupt("\(what) ends \(n - remaining) bytes early", offset: UInt64(offset))
    }

    mutating func readU8() throws(EngineError) -> UInt8 {
        guard remaining >= 1 else { throw short(1) }
        defer { offset += 1 }
        return bytes[offset]
    }
    mutating func readU16() throws(EngineError) -> UInt16 {
        guard remaining >= 2 else { throw short(2) }
        defer { offset += 2 }
        return bytes.u16(offset)
    }
    mutating func readU32() throws(EngineError) -> UInt32 {
        guard remaining >= 4 else { throw short(4) }
        defer { offset += 4 }
        return bytes.u32(offset)
    }
    mutating func readU64() throws(EngineError) -> UInt64 {
        guard remaining >= 8 else { throw short(8) }
        defer { offset += 8 }
        return bytes.u64(offset)
    }
    /// Reads an unsigned LEB128 varint of at most 10 bytes.
    mutating func readVarint() throws(EngineError) -> UInt64 {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        let start = offset
        while true {
            guard remaining >= 1 else { throw short(1) }
            let b = bytes[offset]
            offset += 1
            if shift == 63 && b > 1 {
                throw .corrupt("\(what) has a varint that overflows 64 bits", offset: UInt64(start))
            }
            result |= UInt64(b & 0x7F) << shift
            if b & 0x80 == 0 { return result }
            shift += 7
            if shift > 63 { throw .corrupt("\(what) has a varint longer than 10 bytes", offset: UInt64(start)) }
        }
    }
    /// Reads `count` bytes as an array, checking `count` against what is left first (so a corrupt
    /// length can never cause a huge allocation).
    mutating func readBytes(_ count: Int) throws(EngineError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw short(max(count, 0)) }
        defer { offset += count }
        return Array(UnsafeRawBufferPointer(rebasing: bytes[offset..<(offset + count)]))
    }
    /// Reads a varint length and that many bytes.
    mutating func readLengthPrefixed() throws(EngineError) -> [UInt8] {
        let n = try readVarint()
        guard n <= UInt64(remaining) else { throw short(Int(clamping: n)) }
        return try readBytes(Int(n))
    }
}

/// `Array.withUnsafeBytes` with a typed-throwing body (the standard one only rethrows).
@inline(__always)
func withRawBytes<R>(_ array: [UInt8], _ body: (UnsafeRawBufferPointer) throws(EngineError) -> R) throws(EngineError) -> R {
    var failure: EngineError?
    let value: R? = array.withUnsafeBytes { raw in
        do throws(EngineError) { return try body(raw) } catch {
            failure = error
            return nil
        }
    }
    return try unwrap(value, failure)
}

/// `Array.withUnsafeMutableBytes` with a typed-throwing body.
@inline(__always)
func withMutableRawBytes<R>(_ array: inout [UInt8], _ body: (UnsafeMutableRawBufferPointer) throws(EngineError) -> R) throws(EngineError) -> R {
    var failure: EngineError?
    let value: R? = array.withUnsafeMutableBytes { raw in
        do throws(EngineError) { return try body(raw) } catch {
            failure = error
            return nil
        }
    }
    return try unwrap(value, failure)
}

/// The value a body returned, or the error it threw. Not a `Result`: making
/// `Result<R, EngineError>`'s metadata looks up `EngineError: Error` at run time, a scan of every
/// conformance record in the process the first time (a tenth of a new process's open).
@inline(__always)
private func unwrap<R>(_ value: R?, _ failure: EngineError?) throws(EngineError) -> R {
    if let failure { throw failure }
    guard let value else { throw EngineError(.invalidArgument, "a byte access returned no value") }
    return value
}
