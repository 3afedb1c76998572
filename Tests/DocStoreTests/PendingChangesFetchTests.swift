// Fetches in a context that holds many unsaved changes (F2): deleted objects are left out
// without being tested, so fetching and deleting objects one at a time stays linear; an
// equality on an indexed attribute tests only the unsaved objects holding that value, so
// find-or-create stays linear too, however their values change after the lookup was made;
// objects brought back from deletion (undo, rollback, insert again) are found again; a child
// context sees its parent's deletions. The cost is checked through explain's count of the unsaved
// objects a fetch tests, never through time.

import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct PendingChangesFetchTests {
    typealias Book = QueryConformanceTests.Book

    /// A store of `n` books titled "book 0" … "book n-1", saved.
    static func books(_ n: Int) throws -> Context {
        let store = try Store.inMemory(models: [QueryConformanceTests.Shelf.self, Book.self, QueryConformanceTests.Label.self])
        let c = Context(store: store)
        for i in 0..<n {
            let b = Book()
            b.title = "book \(i)"
            b.pages = i
            try c.insert(b)
        }
        try c.save()
        return c
    }

    static func titled(_ title: String) throws -> FetchRequest<Book> {
        FetchRequest<Book>(predicate: try QueryPredicate(format: "title == %@", title), fetchLimit: 1)
    }

    @Test func fetchingAndDeletingOneAtATimeTestsNoDeletedObject() throws {
        let c = try Self.books(400)
        for i in 0..<300 {
            let request = try Self.titled("book \(i)")
            // The fetch tests no unsaved object: the i deletions before it are left out unseen.
            #expect(!(try c.explain(request)).contains("pending changes"), "fetch \(i)")
            let book = try #require(try c.fetch(request).first, "book \(i)")
            try c.delete(book)
            #expect(try c.fetch(request).isEmpty, "book \(i) is deleted and still found")
        }
        #expect(try c.count(for: FetchRequest<Book>()) == 100)
        #expect(try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages < 300"))).isEmpty)
        try c.save()
        #expect(try Context(store: c.store).count(for: FetchRequest<Book>()) == 100)
    }

    @Test func updatedAndInsertedObjectsAreStillTestedAmongManyDeletions() throws {
        let c = try Self.books(200)
        for book in try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages < 150"))) { try c.delete(book) }
        let kept = try #require(try c.fetch(try Self.titled("book 160")).first)
        kept.title = "renamed"
        let new = Book()
        new.title = "book 5"
        try c.insert(new)
        // Of the two live unsaved objects only the insert holds the title looked up; neither the
        // renamed one nor the 150 deletions are tested.
        #expect(try c.explain(try Self.titled("book 5")).contains("pending changes: 1 unsaved object "))
        #expect(try c.explain(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages > 100"))).contains("pending changes: 2 unsaved objects"))
        #expect(try c.fetch(try Self.titled("book 5")).first === new)
        #expect(try c.fetch(try Self.titled("renamed")).first === kept)
        #expect(try c.fetch(try Self.titled("book 160")).isEmpty)
        #expect(try c.count(for: FetchRequest<Book>()) == 51)
    }

    @Test func findOrCreateTestsOnlyTheUnsavedObjectsWithTheValue() throws {
        let c = try Self.books(10)
        for i in 0..<300 {
            let request = try Self.titled("new \(i)")
            #expect(!(try c.explain(request)).contains("pending changes"), "lookup \(i) tests an unsaved object")
            #expect(try c.fetch(request).isEmpty)
            let b = Book()
            b.title = "new \(i)"
            b.pages = i
            try c.insert(b)
            #expect(try c.fetch(request).first === b, "insert \(i) not found")
        }
        #expect(try c.explain(try Self.titled("new 7")).contains("pending changes: 1 unsaved object "))
        let inList = FetchRequest<Book>(predicate: try QueryPredicate(format: "title IN %@", ["new 3", "new 4", "book 2", "none"]))
        #expect(Set(try c.fetch(inList).map(\.title)) == ["new 3", "new 4", "book 2"])
        #expect(try c.count(for: FetchRequest<Book>()) == 310)
        try c.save()
        #expect(try Context(store: c.store).count(for: FetchRequest<Book>()) == 310)
    }

    @Test func unsavedObjectsSharingAValueAreAllFoundAsTheyComeAndGo() throws {
        let c = try Self.books(5)
        let same = try Self.titled("same")
        let all = FetchRequest<Book>(predicate: try QueryPredicate(format: "title == %@", "same"))
        #expect(try c.fetch(same).isEmpty)     // the lookup by title is made
        var books: [Book] = []
        for i in 0..<4 {
            let b = Book()
            b.title = "same"
            b.pages = i
            try c.insert(b)
            books.append(b)
            #expect(Set(try c.fetch(all).map(\.pages)) == Set(0...i), "after insert \(i)")
        }
        #expect(try c.explain(all).contains("pending changes: 4 unsaved objects"))
        books[1].title = "other"
        #expect(Set(try c.fetch(all).map(\.pages)) == [0, 2, 3])
        try c.delete(books[2])
        #expect(Set(try c.fetch(all).map(\.pages)) == [0, 3])
        books[0].title = "other"
        #expect(try c.fetch(all).map(\.pages) == [3])
        #expect(Set(try c.fetch(try Self.titled("other")).map(\.pages)).isSubset(of: [0, 1]))
        #expect(try c.count(for: FetchRequest<Book>(predicate: try QueryPredicate(format: "title == %@", "other"))) == 2)
        books[3].title = "gone"
        #expect(try c.fetch(all).isEmpty)
        books[1].title = "same"
        #expect(try c.fetch(all).map(\.pages) == [1])
        try c.save()
        #expect(try Context(store: c.store).fetch(all).map(\.pages) == [1])
    }

    @Test func aLookupByValueFollowsEveryLaterChange() throws {
        let c = try Self.books(20)
        c.undoManager = UndoManager()
        let new = Book()
        new.title = "fresh"
        try c.insert(new)
        let stored = try #require(try c.fetch(try Self.titled("book 4")).first)
        stored.pages = 400          // changed, so its unsaved values count
        #expect(try c.fetch(try Self.titled("fresh")).first === new)     // the lookup is made
        #expect(try c.fetch(try Self.titled("book 4")).first === stored)

        new.title = "renamed"
        stored.title = "book 4 renamed"
        #expect(try c.fetch(try Self.titled("fresh")).isEmpty)
        #expect(try c.fetch(try Self.titled("renamed")).first === new)
        #expect(try c.fetch(try Self.titled("book 4")).isEmpty)
        #expect(try c.fetch(try Self.titled("book 4 renamed")).first === stored)

        try c.delete(new)
        #expect(try c.fetch(try Self.titled("renamed")).isEmpty)
        c.undoManager?.undo()
        #expect(try c.fetch(try Self.titled("renamed")).first === new, "after undoing the delete")
        c.undoManager?.undo()       // the two renames, one group each
        c.undoManager?.undo()
        #expect(try c.fetch(try Self.titled("fresh")).first === new, "after undoing the rename")
        #expect(try c.fetch(try Self.titled("book 4")).first === stored)

        // A stored object changed in another context: the merge brings its title here too.
        let other = Context(store: c.store)
        let five = try #require(try other.fetch(try Self.titled("book 5")).first)
        let mine = try #require(try c.fetch(try Self.titled("book 5")).first)
        mine.pages = 500
        #expect(try c.fetch(try Self.titled("book 5")).first === mine)
        five.title = "book 5 elsewhere"
        try other.save()
        c.refresh(mine, mergeChanges: true)
        #expect(try c.fetch(try Self.titled("book 5")).isEmpty, "after the merge")
        #expect(try c.fetch(try Self.titled("book 5 elsewhere")).first === mine)

        c.rollback()
        #expect(try c.fetch(try Self.titled("fresh")).isEmpty, "after rollback")
        #expect(try c.fetch(try Self.titled("book 4")).first === stored)
    }

    @Test func objectsBroughtBackFromDeletionAreFoundAgain() throws {
        let c = try Self.books(20)
        c.undoManager = UndoManager()
        let one = try #require(try c.fetch(try Self.titled("book 1")).first)
        try c.delete(one)
        #expect(try c.fetch(try Self.titled("book 1")).isEmpty)
        c.undoManager?.undo()
        #expect(try c.fetch(try Self.titled("book 1")).first === one, "after undo")
        c.undoManager?.redo()
        #expect(try c.fetch(try Self.titled("book 1")).isEmpty, "after redo")
        c.undoManager?.undo()

        // Changed, then deleted, then inserted again: found with its unsaved title.
        let two = try #require(try c.fetch(try Self.titled("book 2")).first)
        two.title = "two"
        try c.delete(two)
        #expect(try c.fetch(try Self.titled("two")).isEmpty)
        try c.insert(two)
        #expect(try c.fetch(try Self.titled("two")).first === two, "after insert again")

        let three = try #require(try c.fetch(try Self.titled("book 3")).first)
        try c.delete(three)
        c.rollback()
        #expect(try c.fetch(try Self.titled("book 3")).count == 1, "after rollback")
        #expect(try c.count(for: FetchRequest<Book>()) == 20)
    }

    @Test func aChildContextDoesNotFindWhatItsParentDeleted() throws {
        let parent = try Self.books(50)
        for i in 0..<30 { try parent.delete(try #require(try parent.fetch(try Self.titled("book \(i)")).first)) }
        let child = Context(parent: parent)
        #expect(try child.fetch(try Self.titled("book 3")).isEmpty)
        #expect(try child.count(for: FetchRequest<Book>()) == 20)
        let forty = try #require(try child.fetch(try Self.titled("book 40")).first)
        try child.delete(forty)
        #expect(try child.fetch(try Self.titled("book 40")).isEmpty)
        #expect(try parent.fetch(try Self.titled("book 40")).count == 1, "the child has not saved")
        try child.save()
        #expect(try parent.fetch(try Self.titled("book 40")).isEmpty, "after the child's save")
        #expect(try parent.count(for: FetchRequest<Book>()) == 19)
    }
}
