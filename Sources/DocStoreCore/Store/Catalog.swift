// Catalog: what a store file says about itself — the schema it was written with and the IDs
// DocStore gave every entity and property, plus each entity's key sequence. Implements
// Format/schema.md. It lives in the tree `docstore.catalog`: key "catalog" → the JSON below
// (keys sorted, so the same schema always encodes to the same bytes); key "seq." + entity ID
// (4 bytes big-endian) → the highest sequence number handed out (8 bytes little-endian).
//
// Invariants: an ID, once given, is never given to another entity or property (renames keep it,
// removals retire it), so records, relationship and index trees keyed by ID stay valid across
// schema versions.

import Foundation
internal import DocStoreEngine

/// The stored description of a store's schema and IDs (Format/schema.md).
struct Catalog: Encodable, Equatable {
    /// The catalog format (this is 1).
    var format: Int = 1
    /// Bumped by each migration; records name the version that wrote them.
    var schemaVersion: UInt32 = 1
    var schema: Schema
    /// Entity name → entity ID (1…65535; it is the top 16 bits of the entity's primary keys).
    var entityIDs: [String: UInt32]
    /// "Entity.property" → field ID, unique across the store.
    var fieldIDs: [String: UInt32]
    var nextEntityID: UInt32
    var nextFieldID: UInt32
    /// The app's version number of `schema`, once the store was opened through a migration
    /// plan (written only when known).
    var versionIdentifier: SchemaVersion?
    /// Every earlier schema the store has had, oldest first, with the IDs it had then
    /// (Format/schema.md § Versions; written only when not empty).
    var versions: [CatalogVersion] = []

    static let tree = "docstore.catalog"
    static let catalogKey: [UInt8] = Array("catalog".utf8)

    static func sequenceKey(_ entityID: UInt32) -> [UInt8] {
        Array("seq.".utf8) + withUnsafeBytes(of: entityID.bigEndian) { Array($0) }
    }

    /// A `seq.` value: the highest sequence number handed out, u64 little-endian.
    static func sequenceValue(_ highest: UInt64) -> [UInt8] {
        withUnsafeBytes(of: highest.littleEndian) { Array($0) }
    }

    /// The highest sequence number a `seq.` value holds (0 for none or a malformed one).
    static func sequence(from value: [UInt8]?) -> UInt64 {
        guard let value, value.count == 8 else { return 0 }
        var highest: UInt64 = 0
        for i in 0..<8 { highest |= UInt64(value[i]) << (8 * UInt64(i)) }
        return highest
    }

    /// A first catalog for `schema`: IDs handed out in declaration order.
    init(new schema: Schema) {
        self.schema = schema
        entityIDs = [:]
        fieldIDs = [:]
        nextEntityID = 1
        nextFieldID = 1
        for entity in schema.entities {
            entityIDs[entity.name] = nextEntityID
            nextEntityID += 1
            for name in entity.attributes.map(\.name) + entity.relationships.map(\.name) {
                fieldIDs["\(entity.name).\(name)"] = nextFieldID
                nextFieldID += 1
            }
        }
    }

    private enum CodingKeys: String, CodingKey {
        case format, schemaVersion, schema, entityIDs, fieldIDs, nextEntityID, nextFieldID, versionIdentifier, versions
    }

    func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(format, forKey: .format)
        try c.encode(schemaVersion, forKey: .schemaVersion)
        try c.encode(schema, forKey: .schema)
        try c.encode(entityIDs, forKey: .entityIDs)
        try c.encode(fieldIDs, forKey: .fieldIDs)
        try c.encode(nextEntityID, forKey: .nextEntityID)
        try c.encode(nextFieldID, forKey: .nextFieldID)
        try c.encodeIfPresent(versionIdentifier, forKey: .versionIdentifier)
        if !versions.isEmpty { try c.encode(versions, forKey: .versions) }
    }

    /// This catalog's schema as an earlier version, for `versions`.
    var asVersion: CatalogVersion {
        CatalogVersion(schemaVersion: schemaVersion, versionIdentifier: versionIdentifier, schema: schema,
                       entityIDs: entityIDs, fieldIDs: fieldIDs)
    }

    func encoded() throws(DocStoreError) -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        do { return Array(try encoder.encode(self)) } catch {
            throw DocStoreError(.invalidSchema, "the schema could not be encoded: \(error)")
        }
    }

    static func decode(_ bytes: [UInt8]) throws(DocStoreError) -> Catalog {
        guard let catalog = read(bytes) else {
            // Where the JSON itself fails, say where; else its shape is wrong.
            var fault = "is not JSON of the catalog's shape (Format/schema.md)"
            do { _ = try JSONValue.parse(bytes) } catch { fault = "is \(error)" }
            throw DocStoreError(.corrupt, "the catalog (tree \(tree), key \"catalog\") \(fault)")
        }
        guard catalog.format == 1 else {
            throw DocStoreError(.corrupt, "the catalog has format \(catalog.format); this DocStore reads format 1")
        }
        // Every entity and property must have an ID in range, or keys would be ambiguous.
        for entity in catalog.schema.entities {
            guard let id = catalog.entityIDs[entity.name], id >= 1, id <= PrimaryKey.maxEntityID else {
                throw DocStoreError(.corrupt, "the catalog gives entity \(entity.name) no valid ID", entity: entity.name)
            }
            for name in entity.attributes.map(\.name) + entity.relationships.map(\.name)
            where catalog.fieldIDs["\(entity.name).\(name)"] == nil {
                throw DocStoreError(.corrupt, "the catalog gives \(entity.name).\(name) no field ID", entity: entity.name, property: name)
            }
        }
        return catalog
    }

    func entityID(_ name: String) -> UInt32 { entityIDs[name] ?? 0 }

    /// The catalog of an earlier version (to read objects as that version had them).
    func catalog(of version: CatalogVersion) -> Catalog {
        var old = self
        old.schemaVersion = version.schemaVersion
        old.versionIdentifier = version.versionIdentifier
        old.schema = version.schema
        old.entityIDs = version.entityIDs
        old.fieldIDs = version.fieldIDs
        old.versions = []
        return old
    }
    func fieldID(_ entity: String, _ property: String) -> UInt32 { fieldIDs["\(entity).\(property)"] ?? 0 }
}

/// A schema a store had before a migration (Format/schema.md § Versions).
struct CatalogVersion: Encodable, Equatable {
    var schemaVersion: UInt32
    var versionIdentifier: SchemaVersion?
    var schema: Schema
    var entityIDs: [String: UInt32]
    var fieldIDs: [String: UInt32]
}
