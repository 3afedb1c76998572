// StoredValue: one attribute value as DocStore stores it — the closed set of kinds a record's
// fields hold (Format/record.md § Type tags), plus `reference` for a to-one relationship's target.
// `PersistentValue` maps Swift types (String, Int, Date, …, Optional of them, Codable values) to and
// from it; dynamic code (`object["title"]`, the CLI, migrations) works with StoredValue directly.
//
// Invariant: a StoredValue of kind k is only ever stored in an attribute whose AttributeType maps
// to k (`AttributeType.storedKind`); Context checks this when a value is set by key.

import Foundation

/// An attribute value in the form DocStore stores it.
public enum StoredValue: Sendable, Hashable, CustomStringConvertible {
    case null
    case bool(Bool)
    /// Every integer width is stored as a 64-bit integer.
    case int(Int64)
    case double(Double)
    case float(Float)
    case decimal(Decimal)
    case string(String)
    case date(Date)
    case uuid(UUID)
    case url(URL)
    case data(Data)
    /// A Codable value, as its JSON document.
    case document(Data)
    /// A to-one relationship: the target's primary key.
    case reference(UInt64)

    public var isNull: Bool { if case .null = self { true } else { false } }

    public var description: String {
        switch self {
        case .null: "nil"
        case .bool(let v): "\(v)"
        case .int(let v): "\(v)"
        case .double(let v): "\(v)"
        case .float(let v): "\(v)"
        case .decimal(let v): "\(v)"
        case .string(let v): String(reflecting: v)
        case .date(let v): v.formatted(.iso8601)
        case .uuid(let v): v.uuidString
        case .url(let v): v.absoluteString
        case .data(let v): "\(v.count) bytes"
        case .document(let v): String(decoding: v, as: UTF8.self)
        case .reference(let v): "→\(v)"
        }
    }

    /// The value as a plain Swift value (`Any`), as `NSManagedObject.value(forKey:)` gives it;
    /// nil for `.null`.
    public var anyValue: Any? {
        switch self {
        case .null: nil
        case .bool(let v): v
        case .int(let v): Int(truncatingIfNeeded: v)
        case .double(let v): v
        case .float(let v): v
        case .decimal(let v): v
        case .string(let v): v
        case .date(let v): v
        case .uuid(let v): v
        case .url(let v): v
        case .data(let v): v
        case .document(let v): v
        case .reference(let v): v
        }
    }

    /// Converts a plain Swift value to the stored form an attribute of `type` needs, or nil when
    /// the value does not fit the type.
    public static func converting(_ value: Any?, to type: AttributeType) -> StoredValue? {
        guard let value else { return .null }
        if let stored = value as? StoredValue { return stored.fits(type) ? stored : nil }
        switch type {
        case .bool: return (value as? Bool).map(StoredValue.bool)
        case .int8, .int16, .int32, .int64:
            let wide: Int64? = switch value {
            case let v as Int: Int64(v)
            case let v as Int8: Int64(v)
            case let v as Int16: Int64(v)
            case let v as Int32: Int64(v)
            case let v as Int64: v
            case let v as UInt8: Int64(v)
            case let v as UInt16: Int64(v)
            case let v as UInt32: Int64(v)
            default: nil
            }
            guard let wide, type.integerRange?.contains(wide) ?? true else { return nil }
            return .int(wide)
        case .double: return (value as? Double).map(StoredValue.double)
        case .float: return (value as? Float).map(StoredValue.float)
        case .decimal: return (value as? Decimal).map(StoredValue.decimal)
        case .string: return (value as? String).map(StoredValue.string)
        case .date: return (value as? Date).map(StoredValue.date)
        case .uuid: return (value as? UUID).map(StoredValue.uuid)
        case .url: return (value as? URL).map(StoredValue.url)
        case .binaryData: return (value as? Data).map(StoredValue.data) ?? (value as? [UInt8]).map { .data(Data($0)) }
        case .codable:
            if let data = value as? Data { return .document(data) }
            guard let encodable = value as? any Encodable,
                  let json = try? JSONEncoder.docStore.encode(encodable) else { return nil }
            return .document(json)
        }
    }

    /// Whether an attribute of `type` (optional or not) takes this value: null only when
    /// optional, an integer within the type's range, any other value only of its own type —
    /// what a save checks first of every attribute (`fits` is this with `optional` true). It
    /// binds no payload, so a caller reading an array's element reads it in place: passed to
    /// `Context.check`, each string was retained and released, most of validating a save.
    @inline(__always)
    func isAcceptable(to type: AttributeType, optional: Bool) -> Bool {
        switch self {
        case .null: return optional
        case .bool: if case .bool = type { return true }
        case .double: if case .double = type { return true }
        case .float: if case .float = type { return true }
        case .decimal: if case .decimal = type { return true }
        case .string: if case .string = type { return true }
        case .date: if case .date = type { return true }
        case .uuid: if case .uuid = type { return true }
        case .url: if case .url = type { return true }
        case .data: if case .binaryData = type { return true }
        case .document: if case .codable = type { return true }
        case .int(let v): return type.integerRange?.contains(v) ?? false
        default: return false
        }
        return false
    }

    /// Whether this value may be stored in an attribute of `type` (null fits every type).
    public func fits(_ type: AttributeType) -> Bool { isAcceptable(to: type, optional: true) }
}

extension AttributeType {
    /// The values an integer attribute can hold; nil for other types.
    var integerRange: ClosedRange<Int64>? {
        switch self {
        case .int8: Int64(Int8.min)...Int64(Int8.max)
        case .int16: Int64(Int16.min)...Int64(Int16.max)
        case .int32: Int64(Int32.min)...Int64(Int32.max)
        case .int64: Int64.min...Int64.max
        default: nil
        }
    }
}

extension JSONEncoder {
    /// The encoder for Codable attribute values: sorted keys, so equal values store equal bytes.
    static var docStore: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .deferredToDate
        return encoder
    }
}

extension StoredValue: Codable {
    /// Stored in the catalog (default values) as the base64 of its record encoding
    /// (Format/record.md § Type tags), so every value round-trips exactly.
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let data = Data(base64Encoded: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "a stored value must be base64"))
        }
        if data.isEmpty { self = .null; return }
        do { self = try RecordReader.value(from: Array(data)) } catch {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: error.message))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var bytes: [UInt8] = []
        RecordCoding.appendValue(self, to: &bytes)
        var container = encoder.singleValueContainer()
        try container.encode(Data(bytes).base64EncodedString())
    }
}
