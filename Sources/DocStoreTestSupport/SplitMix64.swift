// SplitMix64: a small, fast, repeatable random number generator for tests, fuzzers and the crash
// campaign. Every randomized test takes a seed, uses this generator, and prints the seed when it
// fails, so a failure reproduces exactly.

/// A seeded random number generator (SplitMix64).
public struct SplitMix64: RandomNumberGenerator, Sendable {
    public private(set) var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
    /// Random bytes of the given length.
    public mutating func bytes(_ count: Int) -> [UInt8] {
        (0..<count).map { _ in UInt8(truncatingIfNeeded: next()) }
    }
}
