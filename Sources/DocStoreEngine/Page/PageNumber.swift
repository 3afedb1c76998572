// PageNumber and Generation: identifiers on disk get distinct types, not bare integers.
// Page number 0 and 1 are the two meta pages; 0 in a link field means "none" (Format/FORMAT.md
// § Conventions), which is unambiguous because no link ever points at a meta page.

/// The index of a fixed-size page in the page file: byte offset = number × page size.
public struct PageNumber: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ value: UInt64) { self.rawValue = value }
    /// "No page": the value of an empty link field.
    public static let none = PageNumber(0)
    public static func < (a: PageNumber, b: PageNumber) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "#\(rawValue)" }
}

/// The number of a checkpoint: each durable checkpoint writes its meta page with generation + 1.
public struct Generation: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
    public var rawValue: UInt64
    public init(rawValue: UInt64) { self.rawValue = rawValue }
    public init(_ value: UInt64) { self.rawValue = value }
    public static func < (a: Generation, b: Generation) -> Bool { a.rawValue < b.rawValue }
    public var description: String { "g\(rawValue)" }
}
