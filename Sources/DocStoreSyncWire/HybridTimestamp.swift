// HybridTimestamp and HybridClock: the hybrid logical clock that orders concurrent edits
// (Format/sync.md § Clocks; Kulkarni et al., "Logical Physical Clocks", 2014). A timestamp is
// 48 bits of milliseconds since 1970 and a 16-bit counter, packed into one UInt64 so that
// integer order is clock order; ties between devices are broken by the device ID, so any two
// edits have one order everywhere.
//
//   C1  a clock never runs backwards: every timestamp it issues is greater than every one it
//       issued or received before.
//   C2  a device's physical time is corrected by the offset to the server's clock it last saw,
//       so a device whose clock is an hour ahead does not win every conflict for an hour.
//   C3  the server holds a pushed timestamp to at most its own time plus the drift bound.

import Foundation

/// A point on the hybrid logical clock: milliseconds (high 48 bits) and a counter (low 16).
public struct HybridTimestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The packed value: `milliseconds << 16 | counter`.
    public var rawValue: UInt64

    public init(rawValue: UInt64) { self.rawValue = rawValue }

    public init(milliseconds: Int64, counter: UInt16) {
        rawValue = UInt64(max(0, min(milliseconds, Int64(1) << 47))) << 16 | UInt64(counter)
    }

    /// The zero timestamp: before every edit.
    public static let zero = HybridTimestamp(rawValue: 0)

    public var milliseconds: Int64 { Int64(rawValue >> 16) }
    public var counter: UInt16 { UInt16(truncatingIfNeeded: rawValue) }

    public static func < (a: HybridTimestamp, b: HybridTimestamp) -> Bool { a.rawValue < b.rawValue }

    public init(from decoder: any Decoder) throws {
        rawValue = try decoder.singleValueContainer().decode(UInt64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(rawValue)
    }

    public var description: String { "\(milliseconds).\(counter)" }

    /// Whether an edit stamped `(self, device)` wins over one stamped `(other, otherDevice)`:
    /// the later timestamp, and on a tie the greater device ID.
    public func wins(over other: HybridTimestamp, device: String, otherDevice: String) -> Bool {
        self != other ? self > other : device > otherDevice
    }
}

/// The clock's state: the last timestamp issued or seen (C1).
public struct HybridClock: Sendable, Hashable {
    /// The last timestamp issued or received.
    public private(set) var last: HybridTimestamp

    public init(last: HybridTimestamp = .zero) { self.last = last }

    /// A new timestamp for an event at physical time `milliseconds` (already corrected, C2).
    public mutating func tick(milliseconds: Int64) -> HybridTimestamp {
        let wall = HybridTimestamp(milliseconds: milliseconds, counter: 0)
        last = wall > last ? wall : HybridTimestamp(rawValue: last.rawValue &+ 1)
        return last
    }

    /// Takes in a timestamp received from elsewhere, so later ticks are after it (C1).
    public mutating func receive(_ t: HybridTimestamp) {
        if t > last { last = t }
    }
}
