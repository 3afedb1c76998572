// Store.applyRemote (Store+RemoteChanges.swift), the store side of applying sync's pages, on
// the cases a page's collapsed entries produce: removals of links that are not there followed
// by an addition of a link to an object the same call inserts. The graph fuzz target's schema
// (Note.tags ↔ Tag.notes, many-to-many).

import DocStoreCore
import DocStoreQueryTestSupport
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct RemoteChangesTests {
    func tagNames(_ note: ManagedObject) throws -> Set<String> {
        Set((try note.value(forKey: "tags") as? Set<ManagedObject> ?? []).map { $0["name"] as? String ?? "?" })
    }

    /// Found by the sync convergence test (seed 14): a page removed a note's link to a tag it
    /// did not have, twice, then added it; the note's side was lost and the tag's side kept.
    @Test func aRemovedLinkThatIsNotThereThenAddedIsSavedOnBothSides() throws {
        let store = try Store.inMemory(schema: FuzzTargets.graphSchema)
        let c = Context(store: store)
        let note = try c.insertObject(forEntityName: "Note")
        try note.setValue("n", forKey: "title")
        try c.save()
        let noteKey = try #require(note.objectID).primaryKey
        let tagKey = try store.reserveKey(entity: "Tag")
        _ = try store.applyRemote([
            .upsert(entity: "Tag", key: tagKey, isNew: true, values: ["name": .string("x")]),
            .link(key: noteKey, relationship: "tags", target: tagKey, present: false),
            .link(key: noteKey, relationship: "tags", target: tagKey, present: false),
            .link(key: noteKey, relationship: "tags", target: tagKey, present: true),
        ], author: "test") { _ in }
        #expect(try store.verify() == [])
        let fresh = Context(store: store)
        #expect(try tagNames(fresh.existingObject(with: #require(note.objectID))) == ["x"])
    }
}
