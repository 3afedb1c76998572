// AttributeType: the kinds of value an attribute stores (DESIGN.md § Object layer), as Core Data's
// NSAttributeDescription.AttributeType names them. Optionality is not a type here: it is
// `AttributeDescription.isOptional`, as in Core Data.

/// The kind of value an attribute stores.
public enum AttributeType: Sendable, Hashable, CustomStringConvertible {
    case bool
    case int8, int16, int32, int64
    case double, float
    case decimal
    case string
    case date
    case uuid
    case url
    /// Bytes; with `AttributeDescription.allowsExternalStorage`, large values go to blob files.
    case binaryData
    /// A Codable value stored as a nested document whose fields can be queried by key path. The
    /// name identifies the Swift type (for checks and migrations), not a runtime lookup.
    case codable(typeName: String)

    /// Whether values of this type have an order (for ranges, sorting and min/max validation).
    public var isOrdered: Bool {
        switch self {
        case .bool, .uuid, .url, .binaryData, .codable: false
        default: true
        }
    }

    /// Whether ranges (`minimum`/`maximum`) apply: the numeric types and dates.
    /// Integer, floating-point and decimal types.
    public var isNumber: Bool {
        switch self {
        case .int8, .int16, .int32, .int64, .double, .float, .decimal: true
        default: false
        }
    }

    public var isNumericOrDate: Bool {
        switch self {
        case .int8, .int16, .int32, .int64, .double, .float, .decimal, .date: true
        default: false
        }
    }

    /// Whether length limits apply: strings (characters) and binary data (bytes).
    public var hasLength: Bool {
        switch self {
        case .string, .binaryData: true
        default: false
        }
    }

    public var description: String {
        switch self {
        case .bool: "Bool"
        case .int8: "Int8"
        case .int16: "Int16"
        case .int32: "Int32"
        case .int64: "Int64"
        case .double: "Double"
        case .float: "Float"
        case .decimal: "Decimal"
        case .string: "String"
        case .date: "Date"
        case .uuid: "UUID"
        case .url: "URL"
        case .binaryData: "Data"
        case .codable(let name): "Codable(\(name))"
        }
    }
}

extension AttributeType: Codable {
    /// Stored in the catalog by its description (`"String"`, `"Codable(Address)"`).
    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let type = AttributeType(catalogName: text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown attribute type \(text)"))
        }
        self = type
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
