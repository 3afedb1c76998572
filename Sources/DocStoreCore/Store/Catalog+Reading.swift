// Catalog+Reading: reads the catalog JSON (Format/schema.md) by hand, from JSONValue's own parse
// (JSONValue+Parsing.swift), rather than through Codable or JSONSerialization: opening a store
// decodes it every time, and in a new process both spend most of their time on first-use runtime
// type lookups (Codable's generic decoding; JSONSerialization's Any values and the casts out of
// them — a fifth of opening a store and fetching one note). Writing still goes through JSONEncoder (once, when a store is created); the
// golden test checks that what is written reads back equal.

import Foundation

extension Catalog {
    /// The catalog from its JSON, or nil when the JSON does not have the catalog's shape.
    static func read(_ bytes: [UInt8]) -> Catalog? {
        guard let root = try? JSONValue.parse(bytes),
              let format = root["format"]?.intValue, let version = root["schemaVersion"]?.intValue,
              let entities = root["schema"]?["entities"]?.arrayValue,
              let entityIDs = ids(root["entityIDs"]), let fieldIDs = ids(root["fieldIDs"]),
              let nextEntity = root["nextEntityID"]?.intValue, let nextField = root["nextFieldID"]?.intValue,
              version >= 0, nextEntity >= 0, nextField >= 0 else { return nil }
        guard let described = schemaEntities(entities) else { return nil }
        var catalog = Catalog(new: Schema(entities: []))
        catalog.format = format
        catalog.schemaVersion = UInt32(clamping: version)
        catalog.schema = Schema(entities: described)
        catalog.entityIDs = entityIDs
        catalog.fieldIDs = fieldIDs
        catalog.nextEntityID = UInt32(clamping: nextEntity)
        catalog.nextFieldID = UInt32(clamping: nextField)
        if let text = root["versionIdentifier"] {
            guard let text = text.stringValue, let version = SchemaVersion(text) else { return nil }
            catalog.versionIdentifier = version
        }
        if let versions = root["versions"] {
            guard let versions = versions.arrayValue else { return nil }
            for v in versions {
                guard let number = v["schemaVersion"]?.intValue, number >= 0,
                      let entities = v["schema"]?["entities"]?.arrayValue,
                      let described = schemaEntities(entities),
                      let entityIDs = ids(v["entityIDs"]), let fieldIDs = ids(v["fieldIDs"]) else { return nil }
                var identifier: SchemaVersion?
                if let text = v["versionIdentifier"] {
                    guard let text = text.stringValue, let version = SchemaVersion(text) else { return nil }
                    identifier = version
                }
                catalog.versions.append(CatalogVersion(
                    schemaVersion: UInt32(clamping: number), versionIdentifier: identifier, schema: Schema(entities: described),
                    entityIDs: entityIDs, fieldIDs: fieldIDs))
            }
        }
        return catalog
    }

    /// A map of names to IDs (`entityIDs`, `fieldIDs`); nil unless every value is an integer.
    private static func ids(_ json: JSONValue?) -> [String: UInt32]? {
        guard let members = json?.objectValue else { return nil }
        var out: [String: UInt32] = [:]
        out.reserveCapacity(members.count)
        for (name, value) in members {
            guard let id = value.intValue else { return nil }
            out[name] = UInt32(clamping: id)
        }
        return out
    }

    private static func schemaEntities(_ entities: [JSONValue]) -> [EntityDescription]? {
        var described: [EntityDescription] = []
        for e in entities {
            guard let entity = entity(e) else { return nil }
            described.append(entity)
        }
        return described
    }

    private static func entity(_ e: JSONValue) -> EntityDescription? {
        guard let name = e["name"]?.stringValue, let attributes = e["attributes"]?.arrayValue,
              let relationships = e["relationships"]?.arrayValue else { return nil }
        var entity = EntityDescription(name: name, parent: e["parent"]?.stringValue, isAbstract: e["isAbstract"]?.boolValue ?? false)
        entity.originalName = e["originalName"]?.stringValue
        for a in attributes {
            guard let attribute = attribute(a) else { return nil }
            entity.attributes.append(attribute)
        }
        for r in relationships {
            guard let relationship = relationship(r) else { return nil }
            entity.relationships.append(relationship)
        }
        if let indexes = e["indexes"] {
            guard let indexes = indexes.arrayValue else { return nil }
            for i in indexes {
                guard let names = i["properties"]?.arrayValue else { return nil }
                var properties: [String] = []
                for n in names {
                    guard let name = n.stringValue else { return nil }
                    properties.append(name)
                }
                entity.indexes.append(IndexDescription(properties, isUnique: i["isUnique"]?.boolValue ?? false))
            }
        }
        return entity
    }

    private static func attribute(_ a: JSONValue) -> AttributeDescription? {
        guard let name = a["name"]?.stringValue, let typeName = a["type"]?.stringValue,
              let type = AttributeType(catalogName: typeName) else { return nil }
        var attribute = AttributeDescription(
            name: name, type: type, isOptional: a["isOptional"]?.boolValue ?? false,
            isIndexed: a["isIndexed"]?.boolValue ?? false, isUnique: a["isUnique"]?.boolValue ?? false,
            allowsExternalStorage: a["allowsExternalStorage"]?.boolValue ?? false,
            originalName: a["originalName"]?.stringValue, minimum: a["minimum"]?.doubleValue, maximum: a["maximum"]?.doubleValue,
            minLength: a["minLength"]?.intValue, maxLength: a["maxLength"]?.intValue, pattern: a["pattern"]?.stringValue)
        if let text = a["defaultValue"]?.stringValue {
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

    private static func relationship(_ r: JSONValue) -> RelationshipDescription? {
        guard let name = r["name"]?.stringValue, let destination = r["destination"]?.stringValue,
              let rule = DeleteRule(rawValue: r["deleteRule"]?.stringValue ?? "") else { return nil }
        var relationship = RelationshipDescription(
            name: name, destination: destination, inverse: r["inverse"]?.stringValue,
            isToMany: r["isToMany"]?.boolValue ?? false, isOrdered: r["isOrdered"]?.boolValue ?? false,
            deleteRule: rule, isOptional: r["isOptional"]?.boolValue ?? true,
            minCount: r["minCount"]?.intValue, maxCount: r["maxCount"]?.intValue)
        relationship.originalName = r["originalName"]?.stringValue
        return relationship
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
