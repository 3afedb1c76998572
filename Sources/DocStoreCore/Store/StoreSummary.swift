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
                let model = StoreModel(catalog: catalog, classes: [:])
                var entities: [(name: String, objects: Int)] = []
                for entity in model.entities {
                    var count = 0
                    try txn.forEachRecord(of: entity) { _, _ in count += 1 }
                    entities.append((entity.name, count))
                }
                return StoreSummary(schemaVersion: Int(catalog.schemaVersion), entities: entities)
            }
        } catch {
            throw Store.storageError(error)
        }
    }
}
