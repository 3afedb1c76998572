// SplitMix64: the seeded generator every benchmark makes its data with.

import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// SplitMix64: a 64-bit generator with one word of state (Steele, Lea & Flood, "Fast splittable
/// pseudorandom number generators", OOPSLA 2014). Not for cryptography; plenty for test data, and
/// the same seed gives the same stream on every machine.
public struct SplitMix64 {
    private var state: UInt64

    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z &>> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z &>> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z &>> 31)
    }

    /// A number in 0..<bound (the modulo bias is below 2^-40 for the bounds used here).
    public mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }

    /// `count` random bytes.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(count)
        while out.count < count {
            var word = next()
            for _ in 0..<min(8, count - out.count) {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return out
    }
}
