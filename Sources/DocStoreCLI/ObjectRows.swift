// ObjectRows: objects shown as rows — a text table for people, JSON for scripts. A row is the
// object's ID and each property of the entity: attributes as they are, a to-one as its target's
// ID, a to-many as its members (the table shows their count). Values become JSON as scripts
// expect them: dates in ISO 8601, data in base64, IDs as their `docstore://` URIs, decimals as
// strings (exact).

import DocStore
import Foundation

struct ObjectRows {
    /// "id", then the entity's attributes and relationships, in the schema's order.
    let columns: [String]
    /// One row per object: column → value (JSON-ready; NSNull for none).
    var rows: [[String: Any]] = []
    /// Columns that are to-many relationships (counted in the table).
    private let toMany: Set<String>

    init(entity: String, schema: Schema, objects: [ManagedObject]) throws {
        let attributes = schema.allAttributes(of: entity).map(\.name)
        let relationships = schema.allRelationships(of: entity)
        columns = ["id"] + attributes + relationships.map(\.name)
        toMany = Set(relationships.filter(\.isToMany).map(\.name))
        for object in objects {
            var row: [String: Any] = ["id": object.objectID.map { Self.json($0) } ?? NSNull()]
            for column in columns.dropFirst() { row[column] = Self.json(try object.value(forKey: column)) }
            rows.append(row)
        }
    }

    /// `value` as JSON: strings, numbers, booleans, arrays, or NSNull.
    static func json(_ value: Any?) -> Any {
        switch value {
        case nil: return NSNull()
        case let v as String: return v
        case let v as Bool: return v
        case let v as Int: return v
        case let v as Int64: return v
        case let v as Int32: return v
        case let v as Int16: return v
        case let v as Double: return v.isFinite ? v : String(describing: v)
        case let v as Float: return v.isFinite ? Double(v) : String(describing: v)
        case let v as Decimal: return "\(v)"
        case let v as Date: return iso8601(v)
        case let v as UUID: return v.uuidString
        case let v as URL: return v.absoluteString
        case let v as Data: return v.base64EncodedString()
        case let v as ObjectID: return v.uriRepresentation.absoluteString
        case let v as ManagedObject: return v.objectID.map { json($0) } ?? NSNull()
        case let v as [ManagedObject]: return v.map { json($0) }
        case let v as Set<ManagedObject>: return v.sorted { ($0.objectID?.number ?? 0) < ($1.objectID?.number ?? 0) }.map { json($0) }
        case let v?: return String(describing: v)
        }
    }

    static func iso8601(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle(includingFractionalSeconds: true))
    }

    /// The rows as a text table, cells cut to `width` characters.
    func table(width: Int = 32) -> String {
        let cells = rows.map { row in columns.map { cell(row[$0], column: $0, width: width) } }
        var widths = columns.map(\.count)
        for line in cells { for (i, c) in line.enumerated() { widths[i] = max(widths[i], c.count) } }
        func render(_ line: [String]) -> String {
            line.enumerated().map { $0.element.padding(toLength: widths[$0.offset], withPad: " ", startingAt: 0) }
                .joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        var out = [render(columns), render(widths.map { String(repeating: "-", count: $0) })]
        out += cells.map(render)
        return out.joined(separator: "\n")
    }

    private func cell(_ value: Any?, column: String, width: Int) -> String {
        let text: String
        switch value {
        case nil, is NSNull: text = toMany.contains(column) ? "0" : "-"
        case let members as [Any] where toMany.contains(column): text = "\(members.count)"
        case let uri as String where column == "id" || uri.hasPrefix("docstore://"): text = Self.shortID(uri)
        case let s as String: text = s
        case let v?: text = "\(v)"
        }
        let flat = text.replacingOccurrences(of: "\n", with: " ")
        return flat.count > width ? String(flat.prefix(width - 1)) + "…" : flat
    }

    /// `Note/42` for `docstore://<store>/Note/42`.
    static func shortID(_ uri: String) -> String {
        let parts = uri.split(separator: "/")
        return parts.count >= 2 ? parts.suffix(2).joined(separator: "/") : uri
    }

    /// The rows as pretty-printed JSON (an array of objects, keys sorted).
    func jsonText() throws -> String {
        let data = try JSONSerialization.data(withJSONObject: rows, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }
}
