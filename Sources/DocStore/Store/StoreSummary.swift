// StoreSummary: what objects a store file holds, read from its catalog alone — no schema or
// model classes needed — for tools such as `docstore inspect`. Counts come from the records trees'
// key ranges (an entity's primary keys carry its ID, Format/record.md § Primary keys).

public import DocStoreEngine

/// The entities of a store file and how many objects each has.
public struct StoreSummary: Sendable {
    /// The catalog's schema version.
    public var schemaVersion: Int
    /// Each entity (its own objects, not its sub-entities'), in the schema's order.
    public var entities: [(name: String, objects: Int)]

    /// The summary of the object store in `engine`, or nil when the file has no DocStore catalog
    /// (a store written through the engine alone).
    ///
    /// - Throws: ``DocStoreError/Code/corrupt`` for a damaged catalog; ``DocStoreError/Code/storage``.
    public static func read(from engine: Engine) throws(DocStoreError) -> StoreSummary? {
        do {
            return try engine.read { txn -> StoreSummary? in
                guard try txn.treeExists(Catalog.tree), let bytes = try txn.get(Catalog.catalogKey, in: Catalog.tree) else { return nil }
                let catalog = try Catalog.decode(bytes)
                var entities: [(name: String, objects: Int)] = []
                for entity in catalog.schema.entities {
                    let id = catalog.entityID(entity.name)
                    let root = catalog.schema.lineage(of: entity.name).last?.name ?? entity.name
                    let tree = "records.\(catalog.entityID(root))"
                    var count = 0
                    if try txn.treeExists(tree) {
                        let end = PrimaryKey.make(entity: id + 1, sequence: 0)
                        var cursor = try txn.cursor(in: tree)
                        var entry = try cursor.seek(to: PrimaryKey.bytes(PrimaryKey.make(entity: id, sequence: 0)))
                        while let (k, _) = entry, let key = PrimaryKey.read(k), key < end {
                            count += 1
                            entry = try cursor.next()
                        }
                    }
                    entities.append((entity.name, count))
                }
                return StoreSummary(schemaVersion: Int(catalog.schemaVersion), entities: entities)
            }
        } catch {
            throw Store.storageError(error)
        }
    }
}
