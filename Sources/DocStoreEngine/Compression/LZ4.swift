// LZ4: block compression through liblz4 (the only file that imports CLZ4).
//
// The engine compresses WAL payloads, overflow values and blob files when it pays: `compress`
// returns nil when the output would not be smaller, and the caller then stores the bytes raw with
// the compression flag clear (Format/FORMAT.md § Compression). `decompress` validates: the decoded
// length must equal the length recorded beside the data, else `.corrupt`; a recorded length
// beyond what the compressed bytes can expand to is refused before anything is allocated.

internal import CLZ4

/// LZ4 block compression.
public enum LZ4 {
    /// The most an LZ4 block can expand: 255 decoded bytes per encoded byte, plus a margin.
    static let maxExpansion = 256

    /// Compresses `input`; nil if it does not shrink (or is too large for one LZ4 block).
    public static func compress(_ input: UnsafeRawBufferPointer) -> [UInt8]? {
        guard input.count > 0, input.count <= Int(LZ4_MAX_INPUT_SIZE), let src = input.baseAddress else { return nil }
        let bound = Int(LZ4_compressBound(Int32(input.count)))
        var written: Int32 = 0
        // Not zero-filled first: LZ4 writes every byte it reports.
        let out = [UInt8](unsafeUninitializedCapacity: bound) { dst, initialized in
            guard let d = dst.baseAddress else { return }
            written = LZ4_compress_default(
                src.assumingMemoryBound(to: CChar.self), UnsafeMutableRawPointer(d).assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(bound))
            initialized = Int(max(written, 0))
        }
        guard written > 0, Int(written) < input.count else { return nil }
        return out
    }

    /// Compresses an array; nil if it does not shrink.
    public static func compress(_ input: [UInt8]) -> [UInt8]? {
        input.withUnsafeBytes { compress($0) }
    }

    /// Decompresses `input`, which must decode to exactly `rawLength` bytes.
    public static func decompress(_ input: UnsafeRawBufferPointer, rawLength: Int) throws(EngineError) -> [UInt8] {
        guard rawLength >= 0, rawLength <= Int(LZ4_MAX_INPUT_SIZE) else {
            throw .corrupt("compressed data claims \(rawLength) bytes, more than LZ4 allows")
        }
        if rawLength == 0 { return [] }
        guard let src = input.baseAddress, input.count > 0 else {
            throw .corrupt("compressed data is empty but should decode to \(rawLength) bytes")
        }
        // An LZ4 block expands at most 255-fold (a match length grows by 255 per extra byte), so
        // a larger claim is damage: refuse it before allocating (a flipped length would otherwise
        // ask for up to 2 GB).
        guard rawLength <= maxExpansion &* input.count &+ 64 else {
            throw .corrupt("compressed data of \(input.count) bytes claims \(rawLength) bytes, more than LZ4 can expand it to")
        }
        var out = [UInt8](repeating: 0, count: rawLength)
        let n = out.withUnsafeMutableBytes { dst -> Int32 in
            guard let d = dst.baseAddress else { return -1 }
            return LZ4_decompress_safe(
                src.assumingMemoryBound(to: CChar.self), d.assumingMemoryBound(to: CChar.self),
                Int32(input.count), Int32(rawLength))
        }
        guard n == Int32(rawLength) else {
            throw .corrupt("compressed data does not decode to its recorded length \(rawLength)")
        }
        return out
    }

    /// Decompresses an array.
    public static func decompress(_ input: [UInt8], rawLength: Int) throws(EngineError) -> [UInt8] {
        try withRawBytes(input) { (raw) throws(EngineError) in try decompress(raw, rawLength: rawLength) }
    }
}
