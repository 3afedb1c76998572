// DumpFormat: the lines of a dump (Format/dump.md) and how attribute values are written in
// them. A dump is JSON Lines: a header (the catalog, the store's identity and key sequences),
// one line per object, and a trailer with the object count, so that a cut-off dump is told
// from a whole one.
//
//   DF1 every value round-trips exactly: integers as JSON integers, Doubles in their shortest
//       exact form, a Float as the Double it widens to, non-finite numbers and negative zero
//       as "nan", "inf", "-inf", "-0"; Decimals as strings; dates as seconds since 2001-01-01 (the number a Date
//       holds; an ISO 8601 string is read too); UUIDs and URLs as strings; bytes as base64; a
//       Codable value as its stored JSON text (an object or array is read too).
//   DF2 an object is named `Entity/number` — its entity and its number in the store, as its
//       URI shows it — and a relationship's target the same way (the target may be of a
//       sub-entity of the destination).
//   DF3 the keys of each line are sorted, so a store always dumps to the same bytes.

import Foundation

/// The first line of a dump.
struct DumpHeader: Codable {
    /// Always "docstore": says what the file is.
    var dump: String = DumpHeader.magic
    /// The dump format (this is 1).
    var format: Int = 1
    /// The store's identity, which the loaded store keeps (object URIs stay valid).
    var store: UUID
    /// The store's last commit when it was dumped; the loaded store's commits follow it.
    var lastLSN: UInt64
    /// The catalog, as the store holds it (Format/schema.md).
    var catalog: JSONValue
    /// Each entity's highest object number handed out, by entity name.
    var sequences: [String: UInt64]

    static let magic = "docstore"
}

/// One object of a dump.
struct DumpObject: Codable {
    /// `Entity/number` (DF2).
    var id: String
    /// Attributes by name (DF1); nil values as JSON null.
    var values: [String: JSONValue]
    /// Relationships by name: a to-one's target or null, a to-many's targets in order.
    var relationships: [String: JSONValue]?
}

/// The last line of a dump.
struct DumpTrailer: Codable {
    /// Always "docstore".
    var end: String = DumpHeader.magic
    /// How many object lines came before it.
    var objects: Int
}

enum DumpValue {
    /// `value` as a dump writes it (DF1); nil when a Codable value's bytes are not UTF-8 text.
    static func json(_ value: StoredValue) -> JSONValue? {
        switch value {
        case .null: .null
        case .bool(let v): .bool(v)
        case .int(let v): .int(v)
        case .double(let v): number(v)
        case .float(let v): number(Double(v))
        case .decimal(let v): .string(v.description)
        case .string(let v): .string(v)
        case .date(let v): number(v.timeIntervalSinceReferenceDate)
        case .uuid(let v): .string(v.uuidString)
        case .url(let v): .string(v.absoluteString)
        case .data(let v): .string(v.base64EncodedString())
        case .document(let v): String(validating: Array(v), as: UTF8.self).map(JSONValue.string)
        case .reference(let v): .int(Int64(bitPattern: v))
        }
    }

    private static func number(_ v: Double) -> JSONValue {
        if v.isNaN { return .string("nan") }
        if v == 0 && v.sign == .minus { return .string("-0") }     // "-0" would read back as the integer 0
        if v.isInfinite { return .string(v < 0 ? "-inf" : "inf") }
        return .double(v)
    }

    private static func double(_ json: JSONValue) -> Double? {
        switch json {
        case .int(let v): Double(exactly: v)
        case .double(let v): v
        case .string("nan"): .nan
        case .string("inf"): .infinity
        case .string("-inf"): -.infinity
        case .string("-0"): -0.0
        default: nil
        }
    }

    /// The stored value of an attribute of `type` that `json` gives, or a message saying why
    /// it does not fit (DF1).
    static func stored(_ json: JSONValue, as type: AttributeType) -> Result<StoredValue, Problem> {
        if case .null = json { return .success(.null) }
        let value: StoredValue? = switch (type, json) {
        case (.bool, .bool(let v)): .bool(v)
        case (.int8, .int(let v)), (.int16, .int(let v)), (.int32, .int(let v)), (.int64, .int(let v)):
            type.integerRange?.contains(v) == true ? .int(v) : nil
        case (.double, _): double(json).map(StoredValue.double)
        case (.float, _): double(json).flatMap { d in
            let f = Float(d)
            return !d.isFinite || f.isFinite ? StoredValue.float(f) : nil     // not one too large for a Float
        }
        case (.decimal, .string(let s)): Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")).map(StoredValue.decimal)
        case (.decimal, .int(let v)): .decimal(Decimal(v))
        case (.string, .string(let s)): .string(s)
        case (.date, .string(let s)): date(s).map(StoredValue.date)
        case (.date, _): double(json).flatMap { $0.isFinite ? StoredValue.date(Date(timeIntervalSinceReferenceDate: $0)) : nil }
        case (.uuid, .string(let s)): UUID(uuidString: s).map(StoredValue.uuid)
        case (.url, .string(let s)): URL(string: s).map(StoredValue.url)
        case (.binaryData, .string(let s)): Data(base64Encoded: s).map(StoredValue.data)
        case (.codable, .string(let s)):
            (try? JSONSerialization.jsonObject(with: Data(s.utf8), options: [.fragmentsAllowed])) != nil ? .document(Data(s.utf8)) : nil
        case (.codable, .object), (.codable, .array):
            (try? JSONEncoder.docStore.encode(json)).map(StoredValue.document)
        default: nil
        }
        guard let value else { return .failure(Problem(message: "\(json.kind) \(preview(json)) is not a \(type)\(hint(type))")) }
        return .success(value)
    }

    /// A reason a value does not load.
    struct Problem: Error { let message: String }

    private static func hint(_ type: AttributeType) -> String {
        switch type {
        case .decimal: " (write it as a string: \"12.50\")"
        case .date: " (seconds since 2001-01-01, or an ISO 8601 string)"
        case .binaryData: " (base64 text)"
        case .uuid, .url: " (a string)"
        case .codable: " (its JSON, as text or as an object)"
        default: ""
        }
    }

    private static func preview(_ json: JSONValue) -> String {
        let text = (try? JSONEncoder().encode(json)).map { String(decoding: $0, as: UTF8.self) } ?? ""
        return text.count > 40 ? String(text.prefix(40)) + "…" : text
    }

    private static func date(_ text: String) -> Date? {
        if let d = try? Date.ISO8601FormatStyle(includingFractionalSeconds: true).parse(text) { return d }
        return try? Date.ISO8601FormatStyle().parse(text)
    }
}

/// A line after the header: an object or the trailer. Unknown keys are refused, so that a
/// misspelt key in a hand-edited dump is not silently dropped.
enum DumpLine: Decodable {
    case object(DumpObject)
    case trailer(DumpTrailer)

    private struct AnyKey: CodingKey {
        let stringValue: String
        init(stringValue: String) { self.stringValue = stringValue }
        var intValue: Int? { nil }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: AnyKey.self)
        let names = Set(c.allKeys.map(\.stringValue))
        let known: Set<String> = names.contains("end") ? ["end", "objects"] : ["id", "values", "relationships"]
        if let unknown = names.subtracting(known).sorted().first {
            throw DocStoreError(.invalidDump, "unknown key \"\(unknown)\" (an object line has id, values and relationships; the last line end and objects)")
        }
        if names.contains("end") {
            guard try c.decode(String.self, forKey: AnyKey(stringValue: "end")) == DumpHeader.magic else {
                throw DocStoreError(.invalidDump, "the last line's \"end\" must be \"\(DumpHeader.magic)\"")
            }
            self = .trailer(DumpTrailer(objects: try c.decode(Int.self, forKey: AnyKey(stringValue: "objects"))))
        } else {
            self = .object(DumpObject(
                id: try c.decode(String.self, forKey: AnyKey(stringValue: "id")),
                values: try c.decodeIfPresent([String: JSONValue].self, forKey: AnyKey(stringValue: "values")) ?? [:],
                relationships: try c.decodeIfPresent([String: JSONValue].self, forKey: AnyKey(stringValue: "relationships"))))
        }
    }
}

extension DecodingError {
    /// The error in a few words: what is missing or of the wrong kind, and where.
    var brief: String {
        func path(_ context: Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }
            return keys.isEmpty ? "" : " at \(keys.joined(separator: "."))"
        }
        switch self {
        case .keyNotFound(let key, let context): return "\"\(key.stringValue)\" is missing\(path(context))"
        case .typeMismatch(let type, let context): return "expected \(type)\(path(context))"
        case .valueNotFound(let type, let context): return "expected \(type), found null\(path(context))"
        case .dataCorrupted(let context):
            if let underlying = context.underlyingError { return "not JSON: \(underlying.localizedDescription)" }
            return "\(context.debugDescription)\(path(context))"
        @unknown default: return "\(self)"
        }
    }
}
