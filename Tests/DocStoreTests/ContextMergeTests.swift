// Merging other contexts' saves (Context+Merge.swift M1–M4) and the events that tell observers
// (Context+Events.swift, Store+Changes.swift): automatic merges bring inserts, updates and
// deletes; unsaved edits stay on top; manual merges from a did-save transaction or by ID;
// observers filtered by entity; the store-wide stream hears every commit in order; the main
// context processes changes on its own.

import Foundation
import Observation
import Synchronization
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite(.timeLimit(.minutes(1))) struct ContextMergeTests {
    /// A store with an Inbox holding "milk", "eggs" and "bread", saved.
    func seeded() throws -> (Store, [ObjectID]) {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let c = Context(store: store)
        let inbox = Folder(name: "Inbox")
        let notes = ["milk", "eggs", "bread"].map { Note(title: $0, folder: inbox) }
        try c.insert(inbox)
        try c.save()
        return (store, ([inbox] + notes).compactMap(\.objectID))
    }

    @Test func automaticMergesBringInsertsUpdatesAndDeletes() throws {
        let (store, ids) = try seeded()
        let reader = Context(store: store, name: "reader")
        reader.automaticallyMergesChangesFromParent = true
        let inbox = try #require(try reader.existingObject(with: ids[0]) as? Folder)
        let milk = try #require(try reader.existingObject(with: ids[1]) as? Note)
        #expect(Set(inbox.notes.map(\.title)) == ["milk", "eggs", "bread"])
        var events: [ObjectsDidChange] = []
        _ = reader.addChangeHandler { events.append($0) }

        let writer = Context(store: store, name: "writer")
        let wMilk = try #require(try writer.existingObject(with: ids[1]) as? Note)
        wMilk.title = "oat milk"
        try writer.delete(try writer.existingObject(with: ids[2]))
        let jam = Note(title: "jam", folder: try #require(try writer.existingObject(with: ids[0]) as? Folder))
        try writer.insert(jam)
        try writer.save()

        #expect(milk.title == "milk")              // nothing changes before the reader processes
        reader.processPendingChanges()
        #expect(milk.title == "oat milk")
        #expect(Set(inbox.notes.map(\.title)) == ["oat milk", "bread", "jam"])
        #expect(!reader.hasChanges)
        let event = try #require(events.first)
        #expect(events.count == 1)
        #expect(event.refreshedObjectIDs.contains(ids[1]) && event.changedKeys[ids[1]] == ["title"])
        #expect(event.deletedObjectIDs == [ids[2]])
        #expect(event.insertedObjectIDs == Set([jam.objectID].compactMap { $0 }))
        // M4: the same transaction again changes nothing more.
        let again = try #require(try store.history().last)
        reader.mergeChanges(from: again)
        #expect(milk.title == "oat milk" && inbox.notes.count == 3)
    }

    @Test func observersOfAPropertyHearOfAMergedChange() throws {
        let (store, ids) = try seeded()
        let reader = Context(store: store)
        reader.automaticallyMergesChangesFromParent = true
        let milk = try #require(try reader.existingObject(with: ids[1]) as? Note)
        final class Flags: Sendable { let title = Mutex(0), rating = Mutex(0) }
        let flags = Flags()
        withObservationTracking { _ = milk.title } onChange: { flags.title.withLock { $0 += 1 } }
        withObservationTracking { _ = milk.rating } onChange: { flags.rating.withLock { $0 += 1 } }
        let writer = Context(store: store)
        (try writer.existingObject(with: ids[1]) as? Note)?.title = "oat milk"
        try writer.save()
        reader.processPendingChanges()
        #expect(flags.title.withLock { $0 } == 1)
        #expect(flags.rating.withLock { $0 } == 0)       // unchanged: not told
    }

    @Test func aDeletedObjectLeavesTheContextUnlessItHasUnsavedChanges() throws {
        let (store, ids) = try seeded()
        let reader = Context(store: store)
        reader.automaticallyMergesChangesFromParent = true
        let eggs = try #require(try reader.existingObject(with: ids[2]) as? Note)
        let bread = try #require(try reader.existingObject(with: ids[3]) as? Note)
        bread.isRead = true                     // an unsaved edit

        let writer = Context(store: store)
        try writer.delete(try writer.existingObject(with: ids[2]))
        try writer.delete(try writer.existingObject(with: ids[3]))
        try writer.save()
        reader.processPendingChanges()
        #expect(eggs.isDeleted && eggs.managedObjectContext == nil)
        #expect(!bread.isDeleted && bread.managedObjectContext === reader && reader.hasChanges)
    }

    @Test func unsavedEditsStayOnTopOfMergedValuesAndSaveWithoutConflict() throws {
        let (store, ids) = try seeded()
        let a = Context(store: store, name: "a")
        a.automaticallyMergesChangesFromParent = true
        let milk = try #require(try a.existingObject(with: ids[1]) as? Note)
        milk.body = "2 litres"                  // a's edit, unsaved

        let b = Context(store: store, name: "b")
        let bMilk = try #require(try b.existingObject(with: ids[1]) as? Note)
        bMilk.title = "oat milk"
        bMilk.rating = 5
        try b.save()

        a.processPendingChanges()
        #expect(milk.title == "oat milk" && milk.rating == 5 && milk.body == "2 litres")
        #expect(a.hasChanges)
        try a.save()
        let history = try store.history()
        #expect(history.last?.changes.first?.updatedProperties == ["body"])   // only a's edit is written
        let check = try #require(try Context(store: store).existingObject(with: ids[1]) as? Note)
        #expect(check.title == "oat milk" && check.rating == 5 && check.body == "2 litres")
    }

    @Test func withoutAutomaticMergesAContextChangesOnlyWhenToldTo() async throws {
        let (store, ids) = try seeded()
        let manual = Context(store: store)
        #expect(!manual.automaticallyMergesChangesFromParent)
        let milk = try #require(try manual.existingObject(with: ids[1]) as? Note)
        let writer = Context(store: store)
        let saves = writer.didSave()
        let wMilk = try #require(try writer.existingObject(with: ids[1]) as? Note)
        wMilk.title = "oat milk"
        try writer.save()
        _ = try manual.fetch(Note.self)
        #expect(milk.title == "milk")           // still the value it read
        var iterator = saves.makeAsyncIterator()
        let saved = try #require(await iterator.next())
        #expect(saved.updatedObjectIDs == [ids[1]])
        manual.mergeChanges(from: saved)
        #expect(milk.title == "oat milk")

        wMilk.title = "soy milk"
        try writer.save()
        manual.mergeChanges(updated: [ids[1]])
        #expect(milk.title == "soy milk")
    }

    @Test func observersHearOnlyTheEntitiesTheyWatch() async throws {
        let (store, _) = try seeded()
        let c = Context(store: store)
        let notes = try c.objectsDidChange(entities: ["Note"])
        let everything = try c.objectsDidChange()
        try c.insert(Tag(name: "swift"))
        c.processPendingChanges()
        let note = Note(title: "new")
        try c.insert(note)
        c.processPendingChanges()
        var n = notes.makeAsyncIterator()
        let first = try #require(await n.next())
        #expect(first.insertedObjectIDs == Set([note.objectID].compactMap { $0 }) && first.entityNames == ["Note"])
        var e = everything.makeAsyncIterator()
        #expect(await e.next()?.entityNames == ["Tag"])
        #expect(await e.next()?.entityNames == ["Note"])
        #expect(throws: DocStoreError.self) { try c.objectsDidChange(entities: ["Nope"]) }
    }

    @Test func localEditsAreReportedWithTheirChangedKeys() throws {
        let (store, ids) = try seeded()
        let c = Context(store: store)
        var events: [ObjectsDidChange] = []
        _ = c.addChangeHandler { events.append($0) }
        let milk = try #require(try c.existingObject(with: ids[1]) as? Note)
        milk.title = "oat milk"
        milk.isRead = true
        try c.delete(try c.existingObject(with: ids[2]))
        c.processPendingChanges()
        #expect(events.count == 1)
        #expect(events.first?.updatedObjectIDs.contains(ids[1]) == true)
        #expect(events.first?.changedKeys[ids[1]] == ["title", "isRead"])
        #expect(events.first?.deletedObjectIDs.contains(ids[2]) == true)
        c.rollback()
        #expect(events.count == 2 && events.last?.refreshedObjectIDs.contains(ids[1]) == true)
        c.reset()
        #expect(events.last?.invalidatedAllObjects == true)
    }

    @Test func theStoreStreamHearsEveryCommitInOrderWhicheverContextMadeIt() async throws {
        let (store, _) = try seeded()
        let stream = try store.transactions()
        let notesOnly = try store.transactions(entities: ["Note"])
        let workers = (0..<4).map { store.newBackgroundContext(name: "worker \($0)") }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (w, worker) in workers.enumerated() {
                group.addTask {
                    try await worker.perform { context in
                        for i in 0..<10 {
                            try context.insert(Note(title: "w\(w) \(i)"))
                            try context.save()
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        try await store.performBackgroundTask { context in
            try context.insert(Tag(name: "last"))
            try context.save()
        }
        var seen: [HistoryTransaction] = []
        for await t in stream {
            seen.append(t)
            if seen.count == 41 { break }
        }
        #expect(seen.map(\.token) == seen.map(\.token).sorted())
        #expect(Set(seen.compactMap(\.contextName)).count == 4)
        #expect(seen.map(\.token) == Array(try store.history().map(\.token).suffix(41)))
        var notes: [HistoryTransaction] = []
        for await t in notesOnly {
            notes.append(t)
            if notes.count == 40 { break }
        }
        #expect(notes.allSatisfy { $0.entityNames == ["Note"] })
    }

    @MainActor @Test func theMainContextMergesBackgroundSavesOnItsOwn() async throws {
        let (store, ids) = try seeded()
        let main = store.mainContext
        #expect(main.automaticallyMergesChangesFromParent)
        let milk = try #require(try main.existingObject(with: ids[1]) as? Note)
        let events = try main.objectsDidChange(entities: ["Note"])
        try await store.performBackgroundTask { context in
            let note = try context.existingObject(with: ids[1]) as? Note
            note?.title = "from the background"
            try context.save()
        }
        var iterator = events.makeAsyncIterator()
        let event = try #require(await iterator.next())   // nobody calls processPendingChanges
        #expect(event.refreshedObjectIDs == [ids[1]])
        #expect(milk.title == "from the background")
    }
}
