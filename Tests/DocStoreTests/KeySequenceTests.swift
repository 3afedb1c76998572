// Primary key sequences (Store.nextKey, Store.loadSequences): each entity hands out its own
// numbers 1, 2, 3…; they go on across a reopen from the highest saved, never reusing one; and an
// ID in the catalog's entityIDs that belongs to no schema entity, even one past
// PrimaryKey.maxEntityID, neither breaks the open nor shifts another entity's numbers; an
// entity with the largest ID counts on like any other.

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStoreCore
@testable import DocStoreEngine

@Suite struct KeySequenceTests {
    static let schema = Schema(entities: [
        EntityDescription(name: "Folder", attributes: [AttributeDescription(name: "name", type: .string, isOptional: true)]),
        EntityDescription(name: "Note", attributes: [AttributeDescription(name: "title", type: .string, isOptional: true)]),
    ])

    /// A directory of this test's own (each test gets a new suite value), removed with it.
    let temporary = TemporaryDirectory("key-sequences")
    var url: URL { URL(fileURLWithPath: temporary.path).appendingPathComponent("k.docstore") }

    /// Inserts `count` objects of `entity`, saves, and returns their numbers.
    static func insert(_ count: Int, _ entity: String, into store: Store) throws -> [UInt64] {
        let c = Context(store: store)
        let made = try (0..<count).map { _ in try c.insertObject(forEntityName: entity) }
        try c.save()
        return made.compactMap { $0.objectID?.number }
    }

    @Test func eachEntityCountsOnFromItsHighestSavedNumberAfterAReopen() throws {
        var store = try Store(url: url, schema: Self.schema)
        #expect(try Self.insert(3, "Folder", into: store) == [1, 2, 3])
        #expect(try Self.insert(2, "Note", into: store) == [1, 2])
        // A number handed out and never saved leaves a gap: it is not handed out again.
        let dropped = Context(store: store)
        _ = try dropped.insertObject(forEntityName: "Note")
        dropped.rollback()
        #expect(try Self.insert(1, "Note", into: store) == [4])
        try store.close()

        store = try Store(url: url, schema: Self.schema)
        #expect(try Self.insert(2, "Folder", into: store) == [4, 5])
        #expect(try Self.insert(1, "Note", into: store) == [5])
        try store.close()
    }

    @Test func anIDOfNoEntityInTheCatalogIsLeftAlone() throws {
        var store = try Store(url: url, schema: Self.schema)
        #expect(try Self.insert(2, "Note", into: store) == [1, 2])
        try store.close()

        // The catalog gains names whose IDs no entity has: one in range, one past the largest an
        // entity may have (a sequence array sized by it would take 32 GiB).
        try Self.editCatalog(at: url) { ids in
            ids["Ghost"] = 40
            ids["Far"] = Int(UInt32.max)
        }

        store = try Store(url: url, schema: Self.schema)
        #expect(store.catalog.entityIDs["Far"] == UInt32.max)
        #expect(try Self.insert(1, "Note", into: store) == [3])
        #expect(try Self.insert(1, "Folder", into: store) == [1])
        try store.close()
    }

    /// An entity whose ID is the largest a key can carry counts from 1 and on across a reopen,
    /// as any other (the array of sequences reaches that far).
    @Test func theLargestEntityIDCountsOnLikeAnyOther() throws {
        try Store(url: url, schema: Self.schema).close()
        // Nothing is saved yet: give Note the largest ID in the catalog, and its records tree.
        try Self.editCatalog(at: url, creating: ["records.\(PrimaryKey.maxEntityID)"]) { ids in
            ids["Note"] = Int(PrimaryKey.maxEntityID)
        }

        var store = try Store(url: url, schema: Self.schema)
        #expect(store.catalog.entityIDs["Note"] == PrimaryKey.maxEntityID)
        #expect(try Self.insert(2, "Note", into: store) == [1, 2])
        #expect(try Self.insert(1, "Folder", into: store) == [1])
        try store.close()
        store = try Store(url: url, schema: Self.schema)
        #expect(try Self.insert(1, "Note", into: store) == [3])
        let notes = try Context(store: store).fetch(FetchRequest<ManagedObject>(entityName: "Note"))
        #expect(notes.compactMap { $0.objectID?.number }.sorted() == [1, 2, 3])
        try store.close()
    }

    /// Rewrites the catalog's `entityIDs` with `edit`, and creates `trees`, through the engine.
    static func editCatalog(at url: URL, creating trees: [String] = [], _ edit: (inout [String: Any]) -> Void) throws {
        let engine = try Engine.open(at: url.path)
        try engine.write { txn in
            for tree in trees { try txn.createTreeIfMissing(tree) }
            let bytes = try #require(try txn.get(Catalog.catalogKey, in: Catalog.tree))
            var root = try #require(try JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
            var ids = try #require(root["entityIDs"] as? [String: Any])
            edit(&ids)
            root["entityIDs"] = ids
            try txn.put(Array(try JSONSerialization.data(withJSONObject: root)), for: Catalog.catalogKey, in: Catalog.tree)
        }
        try engine.close()
    }
}
