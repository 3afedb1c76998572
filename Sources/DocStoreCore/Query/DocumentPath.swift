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
