// Query generations (Context+Generation.swift G1–G4): a pinned context reads one state across
// fetches, counts and faults while others save; pinning again moves it on and merges; its own
// save moves it to what it saved; a save is still checked against the latest state.

import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct QueryGenerationTests {
    func seeded() throws -> (Store, [ObjectID]) {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let c = Context(store: store)
        let notes = ["a", "b", "c"].map { Note(title: $0) }
        for n in notes { try c.insert(n) }
        try c.save()
        return (store, notes.compactMap(\.objectID))
    }

    @Test func aPinnedContextReadsOneStateWhileOthersSave() throws {
        let (store, ids) = try seeded()
        let reader = Context(store: store)
        reader.automaticallyMergesChangesFromParent = true
        #expect(reader.queryGenerationToken == nil)
        try reader.setQueryGenerationFrom(.current)
        let token = try #require(reader.queryGenerationToken)
        let a = try #require(try reader.existingObject(with: ids[0]) as? Note)
        #expect(a.title == "a")

        let writer = Context(store: store)
        (try writer.existingObject(with: ids[0]) as? Note)?.title = "A"
        (try writer.existingObject(with: ids[1]) as? Note)?.title = "B"
        try writer.delete(try writer.existingObject(with: ids[2]))
        for i in 0..<200 { try writer.insert(Note(title: "new \(i)")) }
        try writer.save()
        try store.engine.checkpoint()            // pages the snapshot reads must survive it

        // Fetches, counts and faults all see the pinned state.
        #expect(Set(try reader.fetch(Note.self).map(\.title)) == ["a", "b", "c"])
        #expect(try reader.count(for: FetchRequest<Note>()) == 3)
        let b = try #require(try reader.object(with: ids[1]) as? Note)   // a fault until read
        #expect(b.title == "b" && a.title == "a")
        #expect(reader.queryGenerationToken == token)

        // Moving on shows the latest state and merges what waited.
        try reader.setQueryGenerationFrom(.current)
        #expect(try #require(reader.queryGenerationToken).value ?? 0 > token.value ?? 0)
        #expect(a.title == "A" && b.title == "B")
        #expect(try reader.count(for: FetchRequest<Note>()) == 202)

        // Unpinned, it reads the latest state.
        try reader.setQueryGenerationFrom(nil)
        #expect(reader.queryGenerationToken == nil)
        (try writer.existingObject(with: ids[0]) as? Note)?.title = "AA"
        try writer.save()
        #expect(try reader.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "title == 'AA'"))).count == 1)
    }

    @Test func aSaveMovesThePinnedContextAndIsCheckedAgainstTheLatestState() throws {
        let (store, ids) = try seeded()
        let pinned = Context(store: store)
        try pinned.setQueryGenerationFrom(.current)
        let a = try #require(try pinned.existingObject(with: ids[0]) as? Note)

        let other = Context(store: store)
        (try other.existingObject(with: ids[0]) as? Note)?.rating = 9
        try other.insert(Note(title: "d"))
        try other.save()

        a.title = "mine"
        let error = #expect(throws: DocStoreError.self) { try pinned.save() }   // G4
        #expect(error?.code == .mergeConflict)
        pinned.mergePolicy = .mergeByPropertyObjectTrump
        let before = try #require(pinned.queryGenerationToken)
        try pinned.save()
        let after = try #require(pinned.queryGenerationToken)
        #expect(after.value ?? 0 > before.value ?? 0)
        #expect(Set(try pinned.fetch(Note.self).map(\.title)) == ["mine", "b", "c", "d"])
        #expect(a.rating == 9)
    }

    @Test func onlyTheCurrentGenerationCanBePinned() throws {
        let (store, _) = try seeded()
        let c = Context(store: store)
        let error = #expect(throws: DocStoreError.self) { try c.setQueryGenerationFrom(QueryGenerationToken(value: 1)) }
        #expect(error?.code == .invalidQuery)
        try c.setQueryGenerationFrom(.current)
        let token = try #require(c.queryGenerationToken)
        try c.setQueryGenerationFrom(token)          // its own generation: stays
        #expect(c.queryGenerationToken == token)
    }
}
