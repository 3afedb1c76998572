// JSONValue: one JSON value of any shape, decoded without Foundation's Any-typed bridging (so
// `true` and `1` stay apart) — for document paths into Codable attributes (DocumentPath), for
// the lines of a dump (Format/dump.md), whose objects differ in shape by entity, and for the
// catalog (read by JSONValue's own parser, JSONValue+Parsing.swift). Integers are kept apart from other numbers so that an
// Int64 survives exactly; every other number is a Double, written in its shortest form that
// reads back to the same Double (JSONEncoder's), so Doubles survive exactly too.

import Foundation

/// A JSON value.
enum JSONValue: Codable, Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let v = try? c.decode(Bool.self) { self = .bool(v) }
        else if let v = try? c.decode(Int64.self) { self = .int(v) }
        else if let v = try? c.decode(Double.self) { self = .double(v) }
        else if let v = try? c.decode(String.self) { self = .string(v) }
        else if let v = try? c.decode([JSONValue].self) { self = .array(v) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let v): try c.encode(v)
        case .int(let v): try c.encode(v)
        case .double(let v): try c.encode(v)
        case .string(let v): try c.encode(v)
        case .array(let v): try c.encode(v)
        case .object(let v): try c.encode(v)
        }
    }

    /// What kind of JSON value this is, for error messages: "a string", "an array".
    var kind: String {
        switch self {
        case .null: "null"
        case .bool: "a boolean"
        case .int, .double: "a number"
        case .string: "a string"
        case .array: "an array"
        case .object: "an object"
        }
    }
}
