// WireValue: an attribute's value on the wire (Format/sync.md § Values). Every DocStore
// attribute type has one form, chosen so that a value survives the trip byte for byte:
// integers as JSON integers, doubles and floats by their bit patterns where JSON numbers would
// round, dates as milliseconds and data as Base64. A to-one relationship travels as the target's
// global ID (`reference`); the order of an ordered to-many as its members' global IDs (`order`).
//
//   WV1 decoding never traps: an unknown tag or a payload of the wrong shape is a
//       DecodingError, which the decoders in WireCoding turn into a typed `SyncWireError`.

import Foundation

/// One value on the wire.
public enum WireValue: Sendable, Hashable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case int(Int64)
    /// The IEEE 754 bit pattern, so NaN, infinities and -0 survive.
    case double(UInt64)
    case float(UInt32)
    /// The decimal's description (`Decimal(string:)` reads it back exactly).
    case decimal(String)
    case string(String)
    /// Seconds since 1970 as the bit pattern of a Double, so sub-millisecond dates survive.
    case date(UInt64)
    case uuid(UUID)
    case url(String)
    case data(Data)
    /// A Codable attribute's stored JSON document, as its bytes.
    case document(Data)
    /// A to-one relationship: the target's global ID.
    case reference(UUID)
    /// The order of an ordered to-many relationship: its members' global IDs, first to last
    /// (Format/sync.md § Ordered relationships).
    case order([UUID])

    private enum Tag: String, Codable {
        case null, bool, int, double, float, decimal, string, date, uuid, url, data, document, reference, order
    }

    private enum Keys: String, CodingKey { case t, v }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: Keys.self)
        switch try c.decode(Tag.self, forKey: .t) {
        case .null: self = .null
        case .bool: self = .bool(try c.decode(Bool.self, forKey: .v))
        case .int: self = .int(try c.decode(Int64.self, forKey: .v))
        case .double: self = .double(try c.decode(UInt64.self, forKey: .v))
        case .float: self = .float(try c.decode(UInt32.self, forKey: .v))
        case .decimal: self = .decimal(try c.decode(String.self, forKey: .v))
        case .string: self = .string(try c.decode(String.self, forKey: .v))
        case .date: self = .date(try c.decode(UInt64.self, forKey: .v))
        case .uuid: self = .uuid(try c.decode(UUID.self, forKey: .v))
        case .url: self = .url(try c.decode(String.self, forKey: .v))
        case .data: self = .data(try c.decode(Data.self, forKey: .v))
        case .document: self = .document(try c.decode(Data.self, forKey: .v))
        case .reference: self = .reference(try c.decode(UUID.self, forKey: .v))
        case .order: self = .order(try c.decode([UUID].self, forKey: .v))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: Keys.self)
        switch self {
        case .null: try c.encode(Tag.null, forKey: .t)
        case .bool(let v): try c.encode(Tag.bool, forKey: .t); try c.encode(v, forKey: .v)
        case .int(let v): try c.encode(Tag.int, forKey: .t); try c.encode(v, forKey: .v)
        case .double(let v): try c.encode(Tag.double, forKey: .t); try c.encode(v, forKey: .v)
        case .float(let v): try c.encode(Tag.float, forKey: .t); try c.encode(v, forKey: .v)
        case .decimal(let v): try c.encode(Tag.decimal, forKey: .t); try c.encode(v, forKey: .v)
        case .string(let v): try c.encode(Tag.string, forKey: .t); try c.encode(v, forKey: .v)
        case .date(let v): try c.encode(Tag.date, forKey: .t); try c.encode(v, forKey: .v)
        case .uuid(let v): try c.encode(Tag.uuid, forKey: .t); try c.encode(v, forKey: .v)
        case .url(let v): try c.encode(Tag.url, forKey: .t); try c.encode(v, forKey: .v)
        case .data(let v): try c.encode(Tag.data, forKey: .t); try c.encode(v, forKey: .v)
        case .document(let v): try c.encode(Tag.document, forKey: .t); try c.encode(v, forKey: .v)
        case .reference(let v): try c.encode(Tag.reference, forKey: .t); try c.encode(v, forKey: .v)
        case .order(let v): try c.encode(Tag.order, forKey: .t); try c.encode(v, forKey: .v)
        }
    }

    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let v): "\(v)"
        case .int(let v): "\(v)"
        case .double(let v): "\(Double(bitPattern: v))"
        case .float(let v): "\(Float(bitPattern: v))"
        case .decimal(let v): v
        case .string(let v): String(reflecting: v)
        case .date(let v): "\(Date(timeIntervalSince1970: Double(bitPattern: v)))"
        case .uuid(let v): v.uuidString
        case .url(let v): v
        case .data(let v): "\(v.count) bytes"
        case .document(let v): String(decoding: v, as: UTF8.self)
        case .reference(let v): "→\(v.uuidString)"
        case .order(let v): "[\(v.map(\.uuidString).joined(separator: ", "))]"
        }
    }
}
