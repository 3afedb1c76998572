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
    /// What each of the object layer's trees holds, in words: "records of Note",
    /// "links of Note.tags", "index of Note.createdAt", … (Format/record.md).
    public var trees: [String: String] = [:]

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
                    try txn.forEachRecordKey(of: entity) { _ in count += 1 }
                    entities.append((entity.name, count))
                }
                return StoreSummary(schemaVersion: Int(catalog.schemaVersion), entities: entities, trees: describeTrees(model))
            }
        } catch {
            throw Store.storageError(error)
        }
    }

    /// What each tree of `model` holds (`trees`).
    static func describeTrees(_ model: StoreModel) -> [String: String] {
        var out: [String: String] = [Catalog.tree: "the object catalog and key sequences", "docstore.history": "persistent history"]
        var records: [String: [String]] = [:]
        for entity in model.entities {
            records[entity.recordsTree, default: []].append(entity.name)
            // The properties this entity declares (inherited ones are its ancestor's trees).
            let declared = Set(entity.description.attributes.map(\.name) + entity.description.relationships.map(\.name))
            for p in entity.properties where declared.contains(p.name) {
                if p.isToMany { out[p.linkTree] = "links of \(entity.name).\(p.name)" }
                if let tree = p.indexTree { out[tree] = "\(p.isUnique ? "unique index" : "index") of \(entity.name).\(p.name)" }
            }
            for index in entity.compoundIndexes { out[index.tree] = index.isUnique ? index.text : "index \(index.text)" }
        }
        for (tree, names) in records { out[tree] = "records of \(names.joined(separator: ", "))" }
        return out
    }
}
