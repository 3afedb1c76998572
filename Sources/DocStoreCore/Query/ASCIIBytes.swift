// ASCIIBytes: the two byte loops of a scan's string test (EncodedRecordFilter), eight bytes at a
// time: whether a field is plain ASCII (bytes 1…127), and whether it contains an ASCII constant,
// optionally folding A–Z to a–z. A byte at a time, these were two fifths of testing a title
// against `CONTAINS[cd]`.
//
// Invariants — the answers are the byte-at-a-time loops' exactly (ASCIIBytesTests compares them
// on random text):
//   - `isPlain` is true iff no byte is 0 or ≥ 0x80.
//   - `contains(text, constant, fold:)` is true iff some position i has
//     fold(text[i + j]) == constant[j] for every j, where fold maps A–Z to a–z when `fold` and
//     is the identity otherwise; `constant` is already folded. Candidate positions are those
//     whose byte can fold to the constant's first byte: `b | 0x20 == first` when folding and
//     `first` is a–z (exactly `first` and its capital), `b == first` otherwise.

enum ASCIIBytes {
    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080
    private static let lows: UInt64 = 0x7F7F_7F7F_7F7F_7F7F

    /// The high bit of each byte of `w` that is zero, and no other bit.
    @inline(__always)
    private static func zeroBytes(_ w: UInt64) -> UInt64 {
        ~(((w & lows) &+ lows) | w | lows)
    }

    /// Whether every byte is in 1…127.
    static func isPlain(_ t: UnsafeRawBufferPointer) -> Bool {
        let n = t.count
        var i = 0
        while i + 8 <= n {
            let w = UInt64(littleEndian: t.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            if w & highs != 0 || zeroBytes(w) != 0 { return false }
            i += 8
        }
        while i < n {
            let b = t[i]
            if b == 0 || b >= 0x80 { return false }
            i += 1
        }
        return true
    }

    @inline(__always)
    static func fold(_ b: UInt8) -> UInt8 { b >= 0x41 && b <= 0x5A ? b | 0x20 : b }

    /// Whether `constant` (already folded when `fold`) occurs in `t`, with `t` folded A–Z to a–z
    /// when `fold`.
    static func contains(_ t: UnsafeRawBufferPointer, _ constant: [UInt8], fold: Bool) -> Bool {
        guard let first = constant.first else { return true }
        guard constant.count <= t.count else { return false }
        let last = t.count - constant.count     // the last position a match can start at
        @inline(__always) func matches(at start: Int) -> Bool {
            var j = 1
            while j < constant.count {
                let b = fold ? Self.fold(t[start + j]) : t[start + j]
                if b != constant[j] { return false }
                j += 1
            }
            return true
        }
        let letter = fold && first >= 0x61 && first <= 0x7A
        let orMask: UInt64 = letter ? 0x2020_2020_2020_2020 : 0
        let pattern = UInt64(first) &* ones
        var i = 0
        while i + 8 <= t.count && i <= last {
            let w = UInt64(littleEndian: t.loadUnaligned(fromByteOffset: i, as: UInt64.self))
            var hits = zeroBytes((w | orMask) ^ pattern)
            while hits != 0 {
                let start = i + hits.trailingZeroBitCount >> 3     // the lowest byte is the first
                if start > last { return false }
                if matches(at: start) { return true }
                hits &= hits &- 1
            }
            i += 8
        }
        while i <= last {
            let b = t[i]
            if (letter ? b | 0x20 : b) == first, matches(at: i) { return true }
            i += 1
        }
        return false
    }
}
