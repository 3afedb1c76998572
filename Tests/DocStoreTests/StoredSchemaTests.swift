// Store.schema(at:) (StoredSchema.swift): the schema a file holds, read without model classes,
// is the one the store was made with and opens it read-only; an engine-only file has none; a
// missing file is a typed error.

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore
@testable import DocStoreEngine

@Suite struct StoredSchemaTests {
    @Test func theStoredSchemaOpensTheStoreWithoutItsClasses() throws {
        let temporary = TemporaryDirectory("stored-schema")
        defer { withExtendedLifetime(temporary) {} }
        let dir = URL(fileURLWithPath: temporary.path)
        let url = dir.appendingPathComponent("n.docstore")
        let store = try Store(url: url, models: ModelClassTests.models)
        let c = Context(store: store)
        try c.insert(Folder(name: "Inbox"))
        try c.save()
        let made = store.schema
        try store.close()

        let stored = try #require(try Store.schema(at: url))
        #expect(stored == made)
        let reopened = try Store(url: url, schema: stored, readOnly: true)
        let folders = try Context(store: reopened).fetch(FetchRequest<ManagedObject>(entityName: "Folder"))
        #expect(try folders.map { try $0.value(forKey: "name") as? String } == ["Inbox"])

        let raw = dir.appendingPathComponent("raw.docstore")
        let engine = try Engine.open(at: raw.path)
        try engine.close()
        #expect(try Store.schema(at: raw) == nil)

        let missing = #expect(throws: DocStoreError.self) { try Store.schema(at: dir.appendingPathComponent("none.docstore")) }
        #expect(missing?.code == .storage && missing?.underlying?.code == .notFound, "\(String(describing: missing))")
    }
}
