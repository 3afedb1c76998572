// Child contexts (Context+Child.swift CC1–CC4): a child reads its parent's unsaved state, its
// save hands its changes to the parent (inserts under the same IDs, values, links both ways,
// deletes with their rules), nothing reaches the store until the parent saves, and dropping a
// child forgets its edits.

import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct ChildContextTests {
    func seeded() throws -> (Store, Context, Folder, [Note]) {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let parent = Context(store: store, name: "main")
        let inbox = Folder(name: "Inbox")
        let notes = ["milk", "eggs"].map { Note(title: $0, folder: inbox) }
        try parent.insert(inbox)
        try parent.save()
        return (store, parent, inbox, notes)
    }

    /// The object of `context` with `object`'s ID.
    func twin<T: ManagedObject>(_ object: T, in context: Context) throws -> T {
        guard let id = object.objectID, let found = try context.existingObject(with: id) as? T else {
            throw DocStoreError(.objectNotFound, "no twin of \(object) in \(context)")
        }
        return found
    }

    func storedTitles(_ store: Store) throws -> Set<String> {
        Set(try Context(store: store).fetch(Note.self).map(\.title))
    }

    @Test func aChildsSaveReachesTheParentAndOnlyTheParentsSaveTheStore() throws {
        let (store, parent, inbox, notes) = try seeded()
        let child = Context(parent: parent, name: "sheet")
        #expect(child.parent === parent && child.store === store)
        let milk = try twin(notes[0], in: child)
        let childInbox = try twin(inbox, in: child)
        milk.title = "oat milk"
        let jam = Note(title: "jam", folder: childInbox)
        try child.insert(jam)
        try child.delete(try twin(notes[1], in: child))
        #expect(!parent.hasChanges && notes[0].title == "milk")

        try child.save()
        #expect(!child.hasChanges && parent.hasChanges)
        #expect(notes[0].title == "oat milk" && notes[1].isDeleted)
        let parentJam = try twin(jam, in: parent)
        #expect(parentJam.title == "jam" && parentJam.folder === inbox)
        #expect(Set(inbox.notes.map(\.title)) == ["oat milk", "jam"])
        #expect(try storedTitles(store) == ["milk", "eggs"])

        try parent.save()
        #expect(try storedTitles(store) == ["oat milk", "jam"])
        let reader = Context(store: store)
        let check = try #require(try reader.fetch(Folder.self).first)
        #expect(Set(check.notes.map(\.title)) == ["oat milk", "jam"])
        #expect(try store.history().last?.contextName == "main")
    }

    @Test func aChildSeesItsParentsUnsavedChanges() throws {
        let (_, parent, inbox, notes) = try seeded()
        notes[0].title = "oat milk"                        // unsaved in the parent
        let bread = Note(title: "bread", folder: inbox)
        try parent.insert(bread)
        try parent.delete(notes[1])
        let child = Context(parent: parent)

        let milk = try twin(notes[0], in: child)
        #expect(milk.title == "oat milk")
        let all = try child.fetch(Note.self).map(\.title)
        #expect(Set(all) == ["oat milk", "bread"], "\(all)")
        let found = try child.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "title BEGINSWITH 'oat'")))
        #expect(found.map(\.title) == ["oat milk"])
        let childInbox = try twin(inbox, in: child)
        #expect(Set(childInbox.notes.map(\.title)) == ["oat milk", "bread"])
        #expect(try child.count(for: FetchRequest<Note>()) == 2)
        // A grandchild sees the same.
        let grandchild = Context(parent: child)
        #expect(Set(try grandchild.fetch(Note.self).map(\.title)) == ["oat milk", "bread"])
    }

    @Test func manyToManyLinksMadeInAChildReachBothSidesInTheParent() throws {
        let (store, parent, _, notes) = try seeded()
        let swift = Tag(name: "swift")
        try parent.insert(swift)
        try parent.save()
        let child = Context(parent: parent)
        let milk = try twin(notes[0], in: child)
        let tag = try twin(swift, in: child)
        milk.tags.insert(tag)
        let linux = Tag(name: "linux")
        milk.tags.insert(linux)
        try child.save()
        #expect(Set(notes[0].tags.map(\.name)) == ["swift", "linux"])
        #expect(swift.notes.map(\.title) == ["milk"])
        try parent.save()
        let reader = Context(store: store)
        let check = try twin(notes[0], in: reader)
        #expect(Set(check.tags.map(\.name)) == ["swift", "linux"])
        #expect(try store.verify().isEmpty)
    }

    @Test func droppingOrRollingBackAChildForgetsItsEdits() throws {
        let (_, parent, _, notes) = try seeded()
        do {
            let child = Context(parent: parent)
            (try twin(notes[0], in: child)).title = "never"
            try child.insert(Note(title: "never either"))
        }
        #expect(!parent.hasChanges && notes[0].title == "milk")
        let child = Context(parent: parent)
        let milk = try twin(notes[0], in: child)
        milk.title = "changed"
        child.rollback()
        try child.save()
        #expect(!parent.hasChanges && milk.title == "milk")
    }

    @Test func aChildsSaveValidatesFirst() throws {
        let (_, parent, _, _) = try seeded()
        let child = Context(parent: parent)
        try child.insert(Note(title: String(repeating: "x", count: 300)))   // maxLength 200
        let error = #expect(throws: DocStoreError.self) { try child.save() }
        #expect(error?.code == .validation)
        #expect(!parent.hasChanges && child.hasChanges)
    }
}
