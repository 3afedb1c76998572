// Who keeps whom alive, as in Core Data: the app keeps its contexts, a context keeps its changed
// objects, an object does not keep its context. A context dropped with unsaved changes — made
// every way a context can hold objects (inserts, updates, deletes, relationship edits, an undo
// stack, a prefetching fetch, a child context) — is freed with its objects; an object that
// outlives its context reads its last values and refuses changes with a typed error.

import DocStore
import Foundation
import Testing

@Suite struct ContextLifetimeTests {
    /// Weak references to see what is freed.
    final class Watch {
        weak var context: Context?
        var objects: [Weak] = []
        func add(_ o: ManagedObject) { objects.append(Weak(o)) }
        var liveObjects: Int { objects.filter { $0.object != nil }.count }
    }
    final class Weak {
        weak var object: ManagedObject?
        init(_ object: ManagedObject) { self.object = object }
    }

    /// A store with an inbox of three notes and a tag, saved.
    func seeded() throws -> Store {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let c = Context(store: store)
        let inbox = Folder(name: "Inbox")
        try c.insert(inbox)
        let tag = Tag(name: "red")
        try c.insert(tag)
        for t in ["a", "b", "c"] {
            let n = Note(title: t, folder: inbox)
            try c.insert(n)
            n.tags.insert(tag)
        }
        try c.save()
        return store
    }

    /// Makes every kind of unsaved change in a fresh context and returns what to watch.
    func dropAContextWithUnsavedChanges(_ store: Store, undo: Bool, child: Bool) throws -> Watch {
        let watch = Watch()
        let c = Context(store: store)
        if undo { c.undoManager = UndoManager() }
        watch.context = c
        var request = FetchRequest<Folder>()
        request.relationshipKeyPathsForPrefetching = ["notes", "notes.tags"]
        let inbox = try #require(try c.fetch(request).first)
        watch.add(inbox)
        let notes = inbox.notes
        notes.forEach(watch.add)
        notes[0].title = "changed"                       // an update
        try c.delete(notes[1])                           // a delete (nullifies the folder link)
        let archive = Folder(name: "Archive")            // inserts, related both ways
        try c.insert(archive)
        watch.add(archive)
        notes[2].folder = archive                        // a relationship moved
        let fresh = Note(title: "new", folder: archive)
        try c.insert(fresh)
        watch.add(fresh)
        if child {
            let scratch = Context(parent: c)
            let archiveID = try #require(archive.objectID)
            let mine = try #require(try scratch.existingObject(with: archiveID) as? Folder)
            mine.name = "Archive 2"
            watch.add(mine)
        }
        #expect(c.hasChanges)
        return watch
    }

    @Test(arguments: [(false, false), (true, false), (false, true), (true, true)])
    func aContextDroppedWithUnsavedChangesIsFreedWithItsObjects(undo: Bool, child: Bool) throws {
        let store = try seeded()
        let watch = try dropAContextWithUnsavedChanges(store, undo: undo, child: child)
        #expect(watch.context == nil, "the context outlived every reference to it (undo \(undo), child \(child))")
        #expect(watch.liveObjects == 0, "\(watch.liveObjects) of \(watch.objects.count) objects outlived their context")
        // Nothing of the abandoned changes reached the store.
        let c = Context(store: store)
        #expect(try c.fetch(FetchRequest<Note>(sortDescriptors: [SortKey("title")])).map(\.title) == ["a", "b", "c"])
        #expect(try c.fetch(Folder.self).map(\.name) == ["Inbox"])
    }

    @Test func aContextWithoutChangesIsFreedWithItsObjects() throws {
        let store = try seeded()
        let watch = Watch()
        do {
            let c = Context(store: store)
            watch.context = c
            for n in try c.fetch(Note.self) { watch.add(n) }
            try c.save()
        }
        #expect(watch.context == nil && watch.liveObjects == 0)
    }

    @Test func anObjectThatOutlivesItsContextReadsItsLastValuesAndRefusesChanges() throws {
        let store = try seeded()
        var note: Note?
        var changed: Note?
        weak var gone: Context?
        do {
            let c = Context(store: store)
            gone = c
            let notes = try c.fetch(FetchRequest<Note>(sortDescriptors: [SortKey("title")]))
            note = notes[0]
            changed = notes[1]
            notes[1].title = "unsaved"
        }
        #expect(gone == nil, "an object kept its context alive")
        let kept = try #require(note)
        #expect(kept.managedObjectContext == nil)
        #expect(kept.title == "a")                                  // its loaded values stay readable
        #expect(kept["title"] as? String == "a")
        #expect(kept.folder == nil && kept.tags.isEmpty)            // relationships need a context
        let error = #expect(throws: DocStoreError.self) { try kept.setValue("b", forKey: "title") }
        #expect(error?.code == .wrongContext)
        kept.title = "b"                                            // a typed setter cannot throw:
        #expect(kept.title == "a")                                  // nothing changes
        #expect(changed?.title == "unsaved")                        // the abandoned change, never saved
        #expect(try Context(store: store).fetch(FetchRequest<Note>(sortDescriptors: [SortKey("title")])).map(\.title) == ["a", "b", "c"])
        // Such an object goes into no other context: its ID fetches it afresh.
        let other = Context(store: store)
        #expect(throws: DocStoreError.self) { try other.insert(kept) }
        let keptID = try #require(kept.objectID)
        let again = try #require(try other.existingObject(with: keptID) as? Note)
        #expect(again.title == "a" && again.folder?.name == "Inbox")
    }

    /// A fault (never loaded) whose context is gone: `value(forKey:)` throws `wrongContext`
    /// naming the property, where it used to give nil — and the typed property, which cannot
    /// throw, used to read "" (what made ObjectBenchmark's child report an empty title).
    @Test func aFaultWhoseContextIsGoneThrowsRatherThanReadAsADefault() throws {
        let store = try seeded()
        var fault: Note?
        do {
            let c = Context(store: store)
            let id = try #require(try c.fetch(FetchRequest<Note>(sortDescriptors: [SortKey("title")])).first?.objectID)
            fault = try #require(try Context(store: store).object(with: id) as? Note)
            #expect(fault?.isFault == true)
        }
        let kept = try #require(fault)
        #expect(kept.managedObjectContext == nil)
        let error = #expect(throws: DocStoreError.self) { try kept.value(forKey: "title") }
        #expect(error?.code == .wrongContext && error?.property == "title", "\(String(describing: error))")
        #expect(kept["title"] == nil)
    }

    /// The typed property of such a fault stops the process, naming the object and property
    /// (an exit test: a child process runs the body).
    @Test func aTypedReadOfAFaultWhoseContextIsGoneStopsTheProgram() async {
        await #expect(processExitsWith: .failure) {
            let store = try Store.inMemory(models: ModelClassTests.models)
            let c = Context(store: store)
            try c.insert(Note(title: "a"))
            try c.save()
            let id = try #require(try c.fetch(Note.self).first?.objectID)
            var fault: Note?
            do { fault = try Context(store: store).object(with: id) as? Note }
            _ = fault?.title
        }
    }

    @Test func objectsOfAContextTheAppKeepsWorkAsBefore() throws {
        let store = try seeded()
        let c = Context(store: store)
        let inbox = try #require(try c.fetch(Folder.self).first)
        let before = inbox.notes.count
        // Objects made while the app holds only the context stay usable through it.
        let note = Note(title: "d")
        try c.insert(note)
        inbox.notes.append(note)
        #expect(inbox.notes.count == before + 1 && note.folder === inbox)
        try c.save()
        #expect(!c.hasChanges && note.managedObjectContext === c)
    }
}
