// StoredSchema: the schema a store file holds, read from its catalog — what a tool without the
// app's model classes (the `docstore` command) opens a store with. Reading it never changes the
// files: the store is opened read-only, without the writer's lock.

import Foundation
internal import DocStoreEngine

extension Store {
    /// The schema of the store at `url` as its catalog holds it (the current version's), or nil
    /// when the file is a DocStore engine file without an object catalog.
    ///
    /// ```swift
    /// if let schema = try Store.schema(at: url) {
    ///     let store = try Store(url: url, schema: schema, readOnly: true)   // no model classes needed
    /// }
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/storage`` when the file cannot be opened (its
    ///   ``DocStoreError/underlying`` error says why: not found, not a DocStore file, a newer
    ///   format, damage); ``DocStoreError/Code/corrupt`` for a catalog that does not decode.
    public static func schema(at url: URL) throws(DocStoreError) -> Schema? {
        var options = EngineOptions()
        options.readOnly = true
        let engine: Engine
        do {
            engine = try Engine.open(at: url.filePath, options: options)
        } catch {
            throw DocStoreError(.storage, "opening \(url.filePath) failed: \(error.message)", underlying: error)
        }
        defer { try? engine.close() }
        let bytes: [UInt8]?
        do {
            bytes = try engine.read { txn -> [UInt8]? in
                guard try txn.treeExists(Catalog.tree) else { return nil }
                return try txn.get(Catalog.catalogKey, in: Catalog.tree)
            }
        } catch {
            throw storageError(error)
        }
        guard let bytes else { return nil }
        return try Catalog.decode(bytes).schema
    }

    /// The schema a catalog's bytes hold (the value of the key "catalog" in the tree
    /// `docstore.catalog`, Format/schema.md), checked as opening a store checks it. For tools
    /// that read a catalog by other means — a dump's header, a salvaged page.
    ///
    /// - Throws: ``DocStoreError/Code/corrupt`` when the bytes are not a catalog of format 1
    ///   naming an ID for every entity and property.
    public static func schema(fromCatalog bytes: [UInt8]) throws(DocStoreError) -> Schema {
        try Catalog.decode(bytes).schema
    }
}
