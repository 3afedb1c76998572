// DocumentPath: following a key path into a Codable attribute's stored JSON document
// (Format/record.md, tag 12), so `metadata.author` reaches a field of a nested value.
//
// A JSON string is a String, a number an integer when it has no fraction (else a Double), true
// and false Bools, null nil; an object reached whole stays a document (the next step goes into
// it); an array is a collection (Q1: `ANY metadata.labels == "x"`). A missing field is nil, as
// an absent optional property encodes.

import Foundation

enum DocumentPath {
    /// The value of field `name` of the JSON object `json`.
    static func step(_ json: Data, _ name: String) throws(DocStoreError) -> QueryOperand {
        guard let root = try? JSONDecoder().decode(JSONValue.self, from: json) else {
            throw DocStoreError(.corrupt, "a stored document is not valid JSON, reading \"\(name)\"", property: name)
        }
        guard case .object(let fields) = root else { return .scalar(.null) }
        return operand(fields[name] ?? .null)
    }

    static func operand(_ value: JSONValue) -> QueryOperand {
        switch value {
        case .array(let items): .collection(items.map(scalar))
        default: .scalar(scalar(value))
        }
    }

    private static func scalar(_ value: JSONValue) -> StoredValue {
        switch value {
        case .null: .null
        case .bool(let b): .bool(b)
        case .int(let i): .int(i)
        case .double(let d): .double(d)
        case .string(let s): .string(s)
        case .object, .array:
            // Kept as a document, so a further step can go into it.
            (try? JSONEncoder().encode(value)).map(StoredValue.document) ?? .null
        }
    }
}

/// A JSON value, decoded without Foundation's Any-typed bridging (so `true` and `1` stay apart).
indirect enum JSONValue: Codable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let i = try? c.decode(Int64.self) { self = .int(i) }
        else if let d = try? c.decode(Double.self) { self = .double(d) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else { self = .object(try c.decode([String: JSONValue].self)) }
    }

    func encode(to encoder: Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .int(let i): try c.encode(i)
        case .double(let d): try c.encode(d)
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }
}
