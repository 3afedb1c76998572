// Catalog+Reading: reads the catalog JSON (Format/schema.md) by hand from JSONSerialization's
// dictionaries rather than through Codable: opening a store decodes it every time, and in a new
// process Codable's generic decoding spends most of its time on first-use runtime type lookups
// (with `_typeName` in place of `String(describing:)` for model types, opening + one fetch went
// from 4.1 to 2.2-2.9 ms here). Writing still goes through JSONEncoder (once, when a store is created); the
// golden test checks that what is written reads back equal.

import Foundation

extension Catalog {
    /// The catalog from its JSON, or nil when the JSON does not have the catalog's shape.
    static func read(_ bytes: [UInt8]) -> Catalog? {
        guard let root = (try? JSONSerialization.jsonObject(with: Data(bytes))) as? [String: Any],
              let format = root["format"] as? Int, let version = root["schemaVersion"] as? Int,
              let schema = root["schema"] as? [String: Any], let entities = schema["entities"] as? [[String: Any]],
              let entityIDs = root["entityIDs"] as? [String: Int], let fieldIDs = root["fieldIDs"] as? [String: Int],
              let nextEntity = root["nextEntityID"] as? Int, let nextField = root["nextFieldID"] as? Int,
              version >= 0, nextEntity >= 0, nextField >= 0 else { return nil }
        guard let described = schemaEntities(entities) else { return nil }
        var catalog = Catalog(new: Schema(entities: []))
        catalog.format = format
        catalog.schemaVersion = UInt32(clamping: version)
        catalog.schema = Schema(entities: described)
        catalog.entityIDs = entityIDs.mapValues { UInt32(clamping: $0) }
        catalog.fieldIDs = fieldIDs.mapValues { UInt32(clamping: $0) }
        catalog.nextEntityID = UInt32(clamping: nextEntity)
        catalog.nextFieldID = UInt32(clamping: nextField)
        if let text = root["versionIdentifier"] {
            guard let text = text as? String, let version = SchemaVersion(text) else { return nil }
            catalog.versionIdentifier = version
        }
        if let versions = root["versions"] {
            guard let versions = versions as? [[String: Any]] else { return nil }
            for v in versions {
                guard let number = v["schemaVersion"] as? Int, number >= 0,
                      let schema = v["schema"] as? [String: Any], let entities = schema["entities"] as? [[String: Any]],
                      let described = schemaEntities(entities),
                      let entityIDs = v["entityIDs"] as? [String: Int], let fieldIDs = v["fieldIDs"] as? [String: Int] else { return nil }
                var identifier: SchemaVersion?
                if let text = v["versionIdentifier"] {
                    guard let text = text as? String, let version = SchemaVersion(text) else { return nil }
                    identifier = version
                }
                catalog.versions.append(CatalogVersion(
                    schemaVersion: UInt32(clamping: number), versionIdentifier: identifier, schema: Schema(entities: described),
                    entityIDs: entityIDs.mapValues { UInt32(clamping: $0) }, fieldIDs: fieldIDs.mapValues { UInt32(clamping: $0) }))
            }
        }
        return catalog
    }

    private static func schemaEntities(_ entities: [[String: Any]]) -> [EntityDescription]? {
        var described: [EntityDescription] = []
        for e in entities {
            guard let entity = entity(e) else { return nil }
            described.append(entity)
        }
        return described
    }

    private static func entity(_ e: [String: Any]) -> EntityDescription? {
        guard let name = e["name"] as? String, let attributes = e["attributes"] as? [[String: Any]],
              let relationships = e["relationships"] as? [[String: Any]] else { return nil }
        var entity = EntityDescription(name: name, parent: e["parent"] as? String, isAbstract: e["isAbstract"] as? Bool ?? false)
        entity.originalName = e["originalName"] as? String
        for a in attributes {
            guard let attribute = attribute(a) else { return nil }
            entity.attributes.append(attribute)
        }
        for r in relationships {
            guard let relationship = relationship(r) else { return nil }
            entity.relationships.append(relationship)
        }
        if let indexes = e["indexes"] {
            guard let indexes = indexes as? [[String: Any]] else { return nil }
            for i in indexes {
                guard let properties = i["properties"] as? [String] else { return nil }
                entity.indexes.append(IndexDescription(properties, isUnique: i["isUnique"] as? Bool ?? false))
            }
        }
        return entity
    }

    private static func attribute(_ a: [String: Any]) -> AttributeDescription? {
        guard let name = a["name"] as? String, let typeName = a["type"] as? String,
              let type = AttributeType(catalogName: typeName) else { return nil }
        var attribute = AttributeDescription(
            name: name, type: type, isOptional: a["isOptional"] as? Bool ?? false,
            isIndexed: a["isIndexed"] as? Bool ?? false, isUnique: a["isUnique"] as? Bool ?? false,
            allowsExternalStorage: a["allowsExternalStorage"] as? Bool ?? false,
            originalName: a["originalName"] as? String, minimum: number(a["minimum"]), maximum: number(a["maximum"]),
            minLength: a["minLength"] as? Int, maxLength: a["maxLength"] as? Int, pattern: a["pattern"] as? String)
        if let text = a["defaultValue"] as? String {
            guard let data = Data(base64Encoded: text) else { return nil }
            if !data.isEmpty {
                guard let value = try? RecordReader.value(from: Array(data)) else { return nil }
                attribute.defaultValue = value
            } else {
                attribute.defaultValue = .null
            }
        }
        return attribute
    }

    private static func relationship(_ r: [String: Any]) -> RelationshipDescription? {
        guard let name = r["name"] as? String, let destination = r["destination"] as? String,
              let rule = DeleteRule(rawValue: r["deleteRule"] as? String ?? "") else { return nil }
        var relationship = RelationshipDescription(
            name: name, destination: destination, inverse: r["inverse"] as? String,
            isToMany: r["isToMany"] as? Bool ?? false, isOrdered: r["isOrdered"] as? Bool ?? false,
            deleteRule: rule, isOptional: r["isOptional"] as? Bool ?? true,
            minCount: r["minCount"] as? Int, maxCount: r["maxCount"] as? Int)
        relationship.originalName = r["originalName"] as? String
        return relationship
    }

    private static func number(_ value: Any?) -> Double? {
        switch value {
        case let d as Double: d
        case let i as Int: Double(i)
        default: nil
        }
    }
}

extension AttributeType {
    /// The type from its catalog name (`"String"`, `"Codable(Address)"`).
    init?(catalogName text: String) {
        if text.hasPrefix("Codable("), text.hasSuffix(")") {
            self = .codable(typeName: String(text.dropFirst(8).dropLast()))
            return
        }
        let simple: [AttributeType] = [.bool, .int8, .int16, .int32, .int64, .double, .float, .decimal,
                                       .string, .date, .uuid, .url, .binaryData]
        guard let type = simple.first(where: { $0.description == text }) else { return nil }
        self = type
    }
}
