// The results controller (FetchedResultsController.swift FR1–FR3, ResultsDifference.swift
// RD1–RD3): inserts, deletes, moves and updates with index paths, section inserts and deletes;
// on every step of a random workload (fixed seed) the difference applied to the previous
// snapshot equals the controller's new state and an independent fresh fetch; unrelated entities
// do not refetch; a batch size keeps objects unmade.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct ResultsControllerTests {
    func store() throws -> Store { try Store.inMemory(models: ModelClassTests.models) }

    /// Notes sorted by title (then key): the controller's order computed by hand.
    func expectedByTitle(_ c: Context) throws -> ResultsSnapshot {
        let notes = try Context(store: c.store).fetch(Note.self)
            .sorted { ($0.title, $0.objectID?.primaryKey ?? 0) < ($1.title, $1.objectID?.primaryKey ?? 0) }
        return ResultsSnapshot(sections: notes.isEmpty ? [] : [.init(name: "", objectIDs: notes.compactMap(\.objectID))])
    }

    @Test func rowInsertsDeletesMovesAndUpdatesHaveIndexPaths() throws {
        let store = try store()
        let c = Context(store: store)
        let notes = ["b", "d", "f"].map { Note(title: $0) }
        for n in notes { try c.insert(n) }
        try c.save()
        let controller = try FetchedResultsController(fetchRequest: FetchRequest<Note>(sortDescriptors: [SortKey("title")]), context: c)
        try controller.performFetch()
        var seen: [ResultsDifference] = []
        controller.onChange = { seen.append($0) }
        #expect(controller.count == 3 && controller.sectionNames == [""])
        #expect(try controller.object(at: IndexPath(item: 1, section: 0)).title == "d")

        let a = Note(title: "a")
        try c.insert(a)                                   // insert at 0
        c.processPendingChanges()
        var d = try #require(seen.last)
        #expect(d.changes == [.init(type: .insert, objectID: try #require(a.objectID), indexPath: nil, newIndexPath: IndexPath(item: 0, section: 0))])

        notes[2].title = "c"                              // f → c: moves from 3 to 2
        notes[0].isRead = true                            // b changes in place
        c.processPendingChanges()
        d = try #require(seen.last)
        let f = try #require(notes[2].objectID), b = try #require(notes[0].objectID)
        #expect(d.changes.contains(.init(type: .move, objectID: f, indexPath: IndexPath(item: 3, section: 0), newIndexPath: IndexPath(item: 2, section: 0))))
        #expect(d.changes.contains(.init(type: .update, objectID: b, indexPath: IndexPath(item: 1, section: 0), newIndexPath: IndexPath(item: 1, section: 0))))
        #expect(d.changes.count == 2)

        try c.delete(notes[1])                            // d goes
        c.processPendingChanges()
        d = try #require(seen.last)
        #expect(d.changes.map(\.type) == [.delete] && d.changes.first?.indexPath == IndexPath(item: 3, section: 0))
        #expect(controller.snapshot.objectIDs.count == 3)
        #expect(controller.indexPath(for: a) == IndexPath(item: 0, section: 0))
        #expect(throws: DocStoreError.self) { try controller.object(at: IndexPath(item: 9, section: 0)) }
    }

    @Test func sectionsAppearAndGoAsTheirObjectsDo() throws {
        let store = try store()
        let c = Context(store: store)
        let work = Folder(name: "Work"), home = Folder(name: "Home")
        let report = Note(title: "report", folder: work)
        let milk = Note(title: "milk", folder: home)
        try c.insert(work)
        try c.insert(home)
        try c.save()
        let request = FetchRequest<Note>(sortDescriptors: [SortKey("folder.name"), SortKey("title")])
        let controller = try FetchedResultsController(fetchRequest: request, context: c, sectionNameKeyPath: "folder.name")
        try controller.performFetch()
        #expect(controller.sectionNames == ["Home", "Work"])
        var seen: [ResultsDifference] = []
        controller.onChange = { seen.append($0) }

        report.folder = home                              // Work empties: its section goes; report moves
        c.processPendingChanges()
        var d = try #require(seen.last)
        #expect(d.sectionChanges.map(\.type) == [.delete] && d.sectionChanges.first?.index == 1)
        #expect(controller.sectionNames == ["Home"])
        #expect(controller.snapshot.sections.first?.objectIDs == [milk.objectID, report.objectID].compactMap { $0 })

        let garden = Folder(name: "Garden")
        try c.insert(Note(title: "seeds", folder: garden))
        c.processPendingChanges()
        d = try #require(seen.last)
        #expect(d.sectionChanges.map(\.type) == [.insert] && d.sectionChanges.first?.name == "Garden" && d.sectionChanges.first?.index == 0)
        #expect(d.changes.isEmpty)
        #expect(throws: DocStoreError.self) {
            try FetchedResultsController(fetchRequest: FetchRequest<Note>(sortDescriptors: [SortKey("title")]), context: c, sectionNameKeyPath: "folder.name")
        }
    }

    @Test(arguments: [(0x5EC7_1085, true), (1, true), (42, true), (7, false), (8, false), (9, false)] as [(UInt64, Bool)])
    func everyDifferenceOfARandomWorkloadLeadsToAFreshFetch(_ seed: UInt64, _ sectioned: Bool) throws {
        var rng = SplitMix64(seed: seed)
        let store = try store()
        let ui = Context(store: store, name: "ui")
        ui.automaticallyMergesChangesFromParent = true
        let writer = Context(store: store, name: "writer")
        var folders: [Folder] = (0..<3).map { Folder(name: "F\($0)") }
        for f in folders { try writer.insert(f) }
        try writer.save()

        // Sectioned by folder, or one list in createdAt order (an index: Context+Query F6).
        let request = sectioned
            ? FetchRequest<Note>(sortDescriptors: [SortKey("folder.name"), SortKey("title")])
            : FetchRequest<Note>(sortDescriptors: [SortKey("createdAt")])
        let controller = try FetchedResultsController(fetchRequest: request, context: ui, sectionNameKeyPath: sectioned ? "folder.name" : nil)
        try controller.performFetch()
        var differences: [ResultsDifference] = []
        controller.onChange = { differences.append($0) }
        var titles = 0

        func expected() throws -> ResultsSnapshot {
            let reader = Context(store: store)
            let notes = try reader.fetch(Note.self)
            if !sectioned {
                let sorted = notes.sorted { ($0.createdAt, $0.objectID?.primaryKey ?? 0) < ($1.createdAt, $1.objectID?.primaryKey ?? 0) }
                return ResultsSnapshot(sections: [.init(name: "", objectIDs: sorted.compactMap(\.objectID))])
            }
            let sorted = notes.sorted {
                ($0.folder?.name ?? "", $0.title, $0.objectID?.primaryKey ?? 0) < ($1.folder?.name ?? "", $1.title, $1.objectID?.primaryKey ?? 0)
            }
            var sections: [ResultsSnapshot.Section] = []
            for n in sorted {
                let name = n.folder?.name ?? ""
                if sections.last?.name != name { sections.append(.init(name: name, objectIDs: [])) }
                sections[sections.count - 1].objectIDs.append(n.objectID!)
            }
            return ResultsSnapshot(sections: sections)
        }

        for step in 0..<150 {
            let notes = try writer.fetch(Note.self)
            switch rng.next() % 7 {
            case 0, 1:
                titles += 1
                let folder = rng.next() % 5 == 0 ? nil : folders[Int(rng.next() % UInt64(folders.count))]
                let note = Note(title: "t\(rng.next() % 40)", folder: folder)
                note.createdAt = Date(timeIntervalSinceReferenceDate: Double(rng.next() % 30))
                try writer.insert(note)
            case 2 where !notes.isEmpty:
                try writer.delete(notes[Int(rng.next() % UInt64(notes.count))])
            case 3 where !notes.isEmpty:
                let note = notes[Int(rng.next() % UInt64(notes.count))]
                note.title = "t\(rng.next() % 40)"
                if rng.next() % 2 == 0 { note.createdAt = Date(timeIntervalSinceReferenceDate: Double(rng.next() % 30)) }
            case 4 where !notes.isEmpty:
                notes[Int(rng.next() % UInt64(notes.count))].folder = folders[Int(rng.next() % UInt64(folders.count))]
            case 5:
                folders[Int(rng.next() % UInt64(folders.count))].name = "F\(rng.next() % 1000).\(step)"
            default:
                let f = Folder(name: "N\(step)")
                folders.append(f)
                try writer.insert(f)
                for note in notes.prefix(2) { note.folder = f }
            }
            writer.mergePolicy = .mergeByPropertyObjectTrump
            try writer.save()
            let before = controller.snapshot
            let count = differences.count
            ui.processPendingChanges()
            let after = controller.snapshot
            let fresh = try expected()
            #expect(after == fresh, "seed \(seed) step \(step): the controller's state is not a fresh fetch")
            if differences.count > count, let last = differences.last {
                #expect(before.applying(last) == after, "seed \(seed) step \(step): \(last) does not lead from the old state to the new")
            } else {
                #expect(before == after, "seed \(seed) step \(step): the state changed with no difference reported")
            }
        }
        #expect(differences.count > 100)
        // The list without sections takes most one-note changes from the change itself (FR4).
        if !sectioned { #expect(controller.changesApplied > 50, "seed \(seed): \(controller.changesApplied) changes applied") }
    }

    /// FR4 with a predicate and a descending order, edited in the controller's own context: one
    /// object at a time (inserted, renamed into or out of the predicate, re-rated, deleted, saved
    /// or not) — each difference leads to what a fetch in that context returns, without a fetch.
    @Test(arguments: [3, 4, 5] as [UInt64])
    func oneObjectChangesAreAppliedWithoutAFetch(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let c = Context(store: try store())
        let request = FetchRequest<Note>(predicate: try QueryPredicate(format: "title BEGINSWITH 'a' AND rating < 8"),
                                         sortDescriptors: [SortKey("rating", ascending: false), SortKey("title")])
        let controller = try FetchedResultsController(fetchRequest: request, context: c)
        try controller.performFetch()
        var last: ResultsDifference?
        controller.onChange = { last = $0 }
        var notes: [Note] = []
        let fetches = controller.fetchCount
        for step in 0..<200 {
            let before = controller.snapshot
            last = nil
            switch rng.next() % 6 {
            case 0, 1:
                let note = Note(title: ["a", "b", "ab", "a b"][Int(rng.next() % 4)] + "\(rng.next() % 9)")
                note.rating = Int16(rng.next() % 10)
                try c.insert(note)
                notes.append(note)
            case 2 where !notes.isEmpty:
                notes[Int(rng.next() % UInt64(notes.count))].title = ["a", "b"][Int(rng.next() % 2)] + "\(rng.next() % 9)"
            case 3 where !notes.isEmpty:
                notes[Int(rng.next() % UInt64(notes.count))].rating = Int16(rng.next() % 10)
            case 4 where !notes.isEmpty:
                try c.delete(notes.remove(at: Int(rng.next() % UInt64(notes.count))))
            default:
                try c.save()
            }
            c.processPendingChanges()
            let after = controller.snapshot
            let fetched = try c.fetch(request).compactMap(\.objectID)
            #expect(after.objectIDs == fetched, "seed \(seed) step \(step): the list is not what a fetch returns")
            if let last {
                #expect(before.applying(last) == after, "seed \(seed) step \(step): \(last) does not lead from the old list to the new")
            } else {
                #expect(before == after, "seed \(seed) step \(step): the list changed with no difference reported")
            }
        }
        #expect(controller.fetchCount == fetches && controller.changesApplied > 100, "\(controller.changesApplied) applied")
    }

    /// Two notes with these titles, inserted into `context` and saved.
    static func savedPair(_ first: String, _ second: String, in context: Context) throws -> (Note, Note) {
        let pair = (Note(title: first), Note(title: second))
        try context.insert(pair.0)
        try context.insert(pair.1)
        try context.save()
        return pair
    }

    /// FR4 and events posted outside processPendingChanges: placing the merged object processes
    /// the context's pending delete first, whose own event changes the list — the merged object's
    /// old place is found after that, not before.
    @Test func aMergeThatProcessesPendingChangesFirstKeepsTheListWhole() throws {
        let store = try store()
        let writer = Context(store: store)
        let (n, m) = try Self.savedPair("a", "b", in: writer)
        let c = Context(store: store)
        let controller = try FetchedResultsController(fetchRequest: FetchRequest<Note>(sortDescriptors: [SortKey("title")]), context: c)
        try controller.performFetch()
        let (nID, mID) = (try #require(n.objectID), try #require(m.objectID))
        let mine = try #require(try c.existingObject(with: nID) as? Note)
        let other = try #require(try c.existingObject(with: mID) as? Note)
        #expect(other.title == "b")                          // loaded: the merge refreshes it
        m.title = "c"
        try writer.save()
        try c.delete(mine)                                   // pending, not processed yet
        c.mergeChanges(updated: [mID])                       // an event of its own
        #expect(other.title == "c")
        #expect(controller.snapshot.objectIDs == [mID])
        #expect(try c.fetch(FetchRequest<Note>(sortDescriptors: [SortKey("title")])).map(\.title) == ["c"])
    }

    /// In a child context a fetch sees the parent's unsaved values (CC3): the list is fetched
    /// again rather than placed by the child's own view of the store.
    @Test func aChildContextsListFollowsItsParentsUnsavedValues() throws {
        let store = try store()
        let parent = Context(store: store)
        let (a, b) = try Self.savedPair("b", "c", in: parent)
        a.title = "z"                                        // unsaved in the parent
        let child = Context(parent: parent)
        let request = FetchRequest<Note>(sortDescriptors: [SortKey("title")])
        let controller = try FetchedResultsController(fetchRequest: request, context: child)
        try controller.performFetch()
        try child.insert(Note(title: "m"))
        child.processPendingChanges()
        #expect(controller.snapshot.objectIDs == (try child.fetch(request)).compactMap(\.objectID))
        #expect(try child.fetch(request).map(\.title) == ["c", "m", "z"])
    }

    @Test func changesOfUnrelatedEntitiesDoNotRefetch() throws {
        let store = try store()
        let c = Context(store: store)
        try c.insert(Note(title: "a"))
        try c.save()
        let controller = try FetchedResultsController(fetchRequest: FetchRequest<Note>(sortDescriptors: [SortKey("title")]), context: c)
        try controller.performFetch()
        let fetches = controller.fetchCount
        try c.insert(Tag(name: "swift"))
        c.processPendingChanges()
        #expect(controller.fetchCount == fetches)
        // A change to one note is applied from the change itself (FR4): no fetch either.
        try c.insert(Note(title: "b"))
        c.processPendingChanges()
        #expect(controller.fetchCount == fetches && controller.changesApplied == 1 && controller.count == 2)
        // Two notes at once: fetched again.
        try c.insert(Note(title: "c"))
        try c.insert(Note(title: "d"))
        c.processPendingChanges()
        #expect(controller.fetchCount == fetches + 1 && controller.count == 4)

        // A dot in a literal, or a to-one compared by reference, reads only notes; a path on past
        // the to-one reads folders too.
        let inbox = Folder(name: "Inbox")
        try c.insert(inbox)
        c.processPendingChanges()
        let literal = try FetchedResultsController(fetchRequest: FetchRequest<Note>(
            predicate: try QueryPredicate(format: "title != 'a.b' AND folder != %@", try #require(inbox.objectID)),
            sortDescriptors: [SortKey("title")]), context: c)
        let through = try FetchedResultsController(fetchRequest: FetchRequest<Note>(
            predicate: try QueryPredicate(format: "folder.name != 'x'"), sortDescriptors: [SortKey("title")]), context: c)
        try literal.performFetch()
        try through.performFetch()
        let (l, t) = (literal.fetchCount, through.fetchCount)
        inbox.name = "Archive"
        c.processPendingChanges()
        #expect(literal.fetchCount == l && through.fetchCount == t + 1)
    }

    @Test func aBatchSizeKeepsObjectsUnmadeUntilAsked() throws {
        let store = try store()
        let c = Context(store: store)
        for i in 0..<5000 { try c.insert(Note(title: String(format: "n%05d", i))) }
        try c.save()
        let reader = Context(store: store)
        let controller = try FetchedResultsController(fetchRequest: FetchRequest<Note>(sortDescriptors: [SortKey("title")]), context: reader, batchSize: 50)
        try controller.performFetch()
        #expect(controller.count == 5000)
        #expect(reader.registeredObjects.isEmpty)
        let note = try controller.object(at: IndexPath(item: 4321, section: 0))
        #expect(note.title == "n04321")
        #expect(reader.registeredObjects.count == 1)
    }

    @Test func aListInTheOrderOfAnIndexIsTheSameAsAFetch() throws {
        // createdAt is indexed: the controller walks the index alone (Context+Query F6).
        let store = try store()
        let c = Context(store: store)
        var rng = SplitMix64(seed: 7)
        for i in 0..<300 {
            let note = Note(title: "n\(i)")
            note.createdAt = Date(timeIntervalSinceReferenceDate: Double(rng.next() % 50))   // many ties
            try c.insert(note)
        }
        try c.save()
        for descending in [false, true] {
            let request = FetchRequest<Note>(sortDescriptors: [SortKey("createdAt", ascending: !descending)])
            let controller = try FetchedResultsController(fetchRequest: request, context: c)
            try controller.performFetch()
            let expected = try c.fetch(request).compactMap(\.objectID)
            #expect(controller.snapshot.objectIDs == expected)
            #expect(Set(expected).count == 300)
            // With unsaved changes of the entity, the same.
            let notes = try c.fetch(Note.self)
            notes[3].createdAt = Date(timeIntervalSinceReferenceDate: 25)
            try c.delete(notes[4])
            try c.insert(Note(title: "new"))
            c.processPendingChanges()
            let pendingExpected = try c.fetch(request).compactMap(\.objectID)
            #expect(controller.snapshot.objectIDs == pendingExpected)
            c.rollback()
        }
    }

    @Test func theAsyncStreamCarriesTheSameDifferences() async throws {
        let store = try store()
        let c = Context(store: store)
        let controller = try FetchedResultsController(fetchRequest: FetchRequest<Note>(sortDescriptors: [SortKey("title")]), context: c)
        try controller.performFetch()
        let stream = controller.changes()
        try c.insert(Note(title: "x"))
        c.processPendingChanges()
        var iterator = stream.makeAsyncIterator()
        let first = try #require(await iterator.next())
        #expect(first.changes.map(\.type) == [.insert])
    }
}
