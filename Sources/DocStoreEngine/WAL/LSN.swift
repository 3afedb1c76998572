// LSN: the log sequence number. Every committed write transaction is one WAL record, and its LSN
// is also the transaction's number: LSNs start at 1 and each commit takes the next one, so a
// snapshot "at LSN n" sees exactly the transactions 1...n (Format/wal.md § Record).

/// A log sequence number: the position of a committed transaction in commit order.
public struct LSN: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ value: UInt64) { self.rawValue = value }
    /// Before the first transaction.
    public static let zero = LSN(0)
    /// The LSN that follows this one.
    public var next: LSN { LSN(rawValue &+ 1) }
    public static func < (a: LSN, b: LSN) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "lsn \(rawValue)" }
}
