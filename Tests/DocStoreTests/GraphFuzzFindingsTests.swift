// Findings of the graph-operations fuzz target (GraphOperationsFuzzTarget.swift), each kept as
// the smallest sequence that showed it, with the fix's expectation; and near cases the fuzzer's
// findings suggested (a to-one moved twice, a loaded to-many losing a deleted member). `look`
// reads every object by ID as the target does, so objects are released and come back as faults
// between steps (the state the first finding needed).

import DocStoreCore
import DocStoreQueryTestSupport
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct GraphFuzzFindingsTests {
    /// The fuzz target's own schema: Note.project nullifies, Project.notes denies.
    static let schema = FuzzTargets.graphSchema

    func insert(_ c: Context, _ entity: String, _ key: String, _ value: String) throws -> ManagedObject {
        let o = try c.insertObject(forEntityName: entity)
        try o.setValue(value, forKey: key)
        return o
    }

    func notes(_ o: ManagedObject) throws -> Set<String> {
        Set((try o.value(forKey: "notes") as? Set<ManagedObject> ?? []).map { $0["title"] as? String ?? "?" })
    }

    @Test func aToOneMovedTwiceBeforeASaveLeavesNoStaleInverse() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let n = try insert(c, "Note", "title", "n")
        let p1 = try insert(c, "Project", "name", "p1"), p2 = try insert(c, "Project", "name", "p2")
        try c.save()
        #expect(try notes(p1) == [] && notes(p2) == [])    // both to-manys loaded
        try n.setValue(p1, forKey: "project")
        #expect(try notes(p1) == ["n"])
        try n.setValue(p2, forKey: "project")
        #expect(try notes(p1) == [])
        #expect(try notes(p2) == ["n"])
        try c.save()
        #expect(try notes(p1) == [])
        #expect(try notes(p2) == ["n"])
        let fresh = Context(store: store)
        #expect(try notes(try fresh.existingObject(with: #require(p1.objectID))) == [])
        #expect(try store.verify().isEmpty)
    }

    @Test func aDeletedMemberLeavesALoadedToManyAtSave() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let n = try insert(c, "Note", "title", "n")
        let p = try insert(c, "Project", "name", "p")
        try c.save()
        #expect(try notes(p) == [])
        try n.setValue(p, forKey: "project")
        #expect(try notes(p) == ["n"])
        try c.delete(n)
        #expect(try notes(p) == [])
        try c.save()
        #expect(try notes(p) == [])
        #expect(try notes(try Context(store: store).existingObject(with: #require(p.objectID))) == [])
        #expect(try store.verify().isEmpty)
    }

    /// Reads every property of `ids` and fetches every entity, as the fuzz target does between steps.
    func look(_ c: Context, _ ids: [ObjectID]) throws {
        let keys = ["Note": ["title", "folder", "tags", "project", "files"], "Project": ["name", "notes"], "Tag": ["name", "notes"]]
        for id in ids {
            let o = try c.existingObject(with: id)
            for key in keys[id.entityName] ?? [] { _ = try o.value(forKey: key) }
        }
        for entity in ["Folder", "Note", "Tag", "Project", "Attachment"] { _ = try c.fetch(entityName: entity) }
    }

    /// Found by seed 8: setting a to-one to the target it already had recorded, on the target's
    /// unloaded to-many, an "addition" of the stored link; deleting the object then merely
    /// cancelled it, and the save left the link pointing at a deleted row (R4).
    @Test func settingAToOneToItsValueThenDeletingTheObjectRemovesTheStoredLink() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        func o(_ id: ObjectID) throws -> ManagedObject { try c.existingObject(with: id) }
        let n1 = try #require(try insert(c, "Note", "title", "n1").objectID)
        let p1 = try #require(try insert(c, "Project", "name", "p1").objectID)
        try o(p1).setValue(Set([try o(n1)]), forKey: "notes")
        try c.save()
        try look(c, [n1, p1])
        try o(n1).setValue(try o(p1), forKey: "project")
        try look(c, [n1, p1])
        try c.delete(try o(n1))
        try c.save()
        #expect(try notes(try o(p1)) == [])
        #expect(try notes(try Context(store: store).existingObject(with: p1)) == [])
        #expect(try store.verify().isEmpty)
    }

    /// Found by seeds 5, 6 and 8: an object inserted and deleted before the save skipped the
    /// deny check, and the save stored notes pointing at a project never written.
    @Test func aDenyRuleHoldsForAnObjectInsertedInTheSameContext() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let n = try insert(c, "Note", "title", "n")
        let p = try insert(c, "Project", "name", "p")
        try n.setValue(p, forKey: "project")
        try c.delete(p)
        let error = #expect(throws: DocStoreError.self) { try c.save() }
        #expect(error?.code == .deleteDenied)
        try c.delete(n)
        try c.save()
        #expect(try store.verify().isEmpty)
    }
}
