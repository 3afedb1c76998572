// The rest of Core Data's fetch options, on the data set of QueryConformanceTests: object-ID
// results, dictionary results (properties to fetch, distinct, group by with aggregates), batched
// results made a batch at a time, faults, prefetching relationships in one pass per level, and
// keyset pagination — each checked against what a plain fetch of objects says.

import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct FetchResultKindsTests {
    typealias Book = QueryConformanceTests.Book
    typealias Shelf = QueryConformanceTests.Shelf
    typealias Label = QueryConformanceTests.Label

    static func requests() throws -> [FetchRequest<Book>] {
        [
            FetchRequest(),
            FetchRequest(sortDescriptors: [SortKey("title")], fetchLimit: 7, fetchOffset: 3),
            FetchRequest(predicate: try QueryPredicate(format: "pages > 30"), sortDescriptors: [SortKey("published", ascending: false), SortKey("title")]),
            FetchRequest(predicate: try QueryPredicate(format: "shelf.name == 'Work'")),
        ]
    }

    @Test func objectIDResultsAreTheFetchedObjectsIDs() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        for request in try Self.requests() {
            #expect(try c.fetchIdentifiers(request) == c.fetch(request).compactMap(\.objectID))
        }
    }

    @Test func dictionariesHoldThePropertiesAskedFor() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        var request = FetchRequest<Book>(sortDescriptors: [SortKey("title")], fetchLimit: 12)
        request.propertiesToFetch = [FetchProperty("title"), FetchProperty("shelf.name", as: "shelfName"), FetchProperty("shelf"), FetchProperty("subtitle")]
        let rows = try c.fetchDictionaries(request)
        let books = try c.fetch(request)
        #expect(rows.count == books.count && rows.count == 12)
        for (row, book) in zip(rows, books) {
            #expect(row["title"] as? String == book.title)
            #expect(row["shelfName"] as? String == book.shelf?.name)
            #expect(row["shelf"] as? ObjectID == book.shelf?.objectID)
            // A nil value leaves its key out.
            #expect((row["subtitle"] == nil) == (book.subtitle == nil))
            #expect(row["subtitle"] as? String == book.subtitle)
        }

        // No properties named: every attribute and to-one.
        let all = try c.fetchDictionaries(FetchRequest<Book>(predicate: try QueryPredicate(format: "title == 'Banana'")))
        #expect(all.count == 1)
        let keys = Set(all.first?.keys.map { $0 } ?? [])
        #expect(keys.isSuperset(of: ["title", "published", "pages", "rating", "isRead"]))
        #expect(all.first?["labels"] == nil)

        // Distinct values, in the request's order.
        var pages = FetchRequest<Book>(sortDescriptors: [SortKey("pages")])
        pages.propertiesToFetch = [FetchProperty("pages")]
        pages.returnsDistinctResults = true
        let distinct = try c.fetchDictionaries(pages).compactMap { $0["pages"] as? Int }
        #expect(distinct == Array(Set(try c.fetch(Book.self).map(\.pages))).sorted())
        pages.fetchLimit = 3
        pages.fetchOffset = 1
        #expect(try c.fetchDictionaries(pages).compactMap { $0["pages"] as? Int } == Array(distinct.dropFirst().prefix(3)))
    }

    /// The data set with one more book, inserted and not saved (it counts, as in any fetch).
    static func storeWithUnsavedBook(_ title: String, pages: Int) throws -> (Context, Book) {
        let (_, c) = try QueryConformanceTests.makeStore()
        let extra = Book()
        extra.title = title
        extra.pages = pages
        try c.insert(extra)
        return (c, extra)
    }

    @Test func groupsAggregateTheirObjects() throws {
        let (c, extra) = try Self.storeWithUnsavedBook("Unsaved", pages: 1_000)
        extra.shelf = try c.fetch(FetchRequest<Shelf>(predicate: try QueryPredicate(format: "name == 'Work'"))).first

        var request = FetchRequest<Book>(predicate: try QueryPredicate(format: "pages > 0"), sortDescriptors: [SortKey("shelf.name")])
        request.propertiesToGroupBy = ["shelf.name"]
        request.propertiesToFetch = [
            FetchProperty("shelf.name", as: "shelf"), .count(as: "books"), .sum("pages", as: "pages"),
            .average("pages", as: "mean"), .min("published", as: "first"), .max("title", as: "last"), .count("subtitle", as: "subtitled"),
        ]
        let rows = try c.fetchDictionaries(request)

        let books = try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages > 0")))
        let groups = Dictionary(grouping: books) { $0.shelf?.name }
        // Groups in sort order: nil (no shelf) first, then the names.
        #expect(rows.map { $0["shelf"] as? String } == groups.keys.sorted { ($0 ?? "") < ($1 ?? "") || ($0 == nil && $1 != nil) })
        for row in rows {
            let members = groups[row["shelf"] as? String] ?? []
            #expect(row["books"] as? Int == members.count)
            #expect(row["pages"] as? Int == members.map(\.pages).reduce(0, +))
            let mean = try #require(row["mean"] as? Double)
            #expect(abs(mean - Double(members.map(\.pages).reduce(0, +)) / Double(members.count)) < 1e-9)
            #expect(row["first"] as? Date == members.map(\.published).min())
            #expect(row["last"] as? String == members.map(\.title).max { QueryValueSemantics.order(.string($0), .string($1)) ?? 0 < 0 })
            #expect(row["subtitled"] as? Int == members.filter { $0.subtitle != nil }.count)
        }

        // Aggregates without groups: one result, even with no matches.
        var totals = FetchRequest<Book>(predicate: try QueryPredicate(format: "pages > 5000"))
        totals.propertiesToFetch = [.count(as: "n"), .sum("pages", as: "total"), .average("rating", as: "mean")]
        let none = try c.fetchDictionaries(totals)
        #expect(none.count == 1 && none.first?["n"] as? Int == 0 && none.first?["total"] as? Int == 0 && none.first?["mean"] == nil)
        totals.predicate = try QueryPredicate(format: "pages >= 90")
        let some = try c.fetchDictionaries(totals)
        let big = try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages >= 90")))
        #expect(some.count == 1, "\(some)")
        #expect(some.first?["n"] as? Int == big.count && some.first?["total"] as? Int == big.map(\.pages).reduce(0, +))
    }

    @Test func badDictionaryRequestsAreTypedErrorsBeforeAnyRead() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        func code(_ configure: (inout FetchRequest<Book>) -> Void) -> DocStoreError.Code? {
            var request = FetchRequest<Book>()
            configure(&request)
            do { _ = try c.fetchDictionaries(request) } catch { return error.code }
            return nil
        }
        #expect(code { $0.propertiesToGroupBy = ["shelf.name"]; $0.propertiesToFetch = [FetchProperty("title")] } == .invalidQuery)
        #expect(code { $0.propertiesToFetch = [.sum("title", as: "x")] } == .invalidQuery)
        #expect(code { $0.propertiesToFetch = [FetchProperty("labels.name")] } == .invalidQuery)
        #expect(code { $0.propertiesToFetch = [FetchProperty("nope")] } == .invalidQuery)
        #expect(code { $0.propertiesToFetch = [.average("info.author", as: "x")] } == .invalidQuery)   // strings in documents, per value
    }

    @Test func batchedResultsMakeObjectsABatchAtATime() throws {
        let (store, _) = try QueryConformanceTests.makeStore()
        let c = Context(store: store)
        let request = FetchRequest<Book>(sortDescriptors: [SortKey("title")])
        let batched = try c.fetch(request, batchSize: 7)
        #expect(batched.count == 40)
        #expect(c.registeredObjects.isEmpty)   // nothing made by the fetch itself
        let first = batched[0]
        #expect(c.registeredObjects.count == 7)
        #expect(c.registeredObjects.allSatisfy { !$0.isFault })
        _ = batched[6]   // the same batch: nothing more is made
        #expect(c.registeredObjects.count == 7)
        _ = batched[7]
        #expect(c.registeredObjects.count == 14)
        let plain = try Context(store: store).fetch(request)
        #expect(batched.map(\.objectID) == plain.map(\.objectID))
        #expect(batched.map(\.title) == plain.map(\.title))
        #expect(batched.first === first)   // the same object while its batch is held
    }

    @Test func faultsAreReturnedWhenAskedAndFillWhenTouched() throws {
        let (store, _) = try QueryConformanceTests.makeStore()
        for includesValues in [true, false] {
            let c = Context(store: store)
            var request = FetchRequest<Book>(sortDescriptors: [SortKey("title")])
            request.returnsObjectsAsFaults = includesValues
            request.includesPropertyValues = includesValues
            let books = try c.fetch(request)
            #expect(books.count == 40 && books.allSatisfy(\.isFault))
            if includesValues {
                // Their records wait, read ahead, in the faults themselves (Context+Relationships R5).
                #expect(books.allSatisfy { $0.readAhead != nil })
            }
            let reader = Context(store: store)
            let expected = try reader.fetch(request).map(\.title)
            #expect(books.map(\.title) == expected)
            #expect(books.allSatisfy { !$0.isFault })
        }
    }

    @Test func prefetchingLoadsEachLevelForAllResults() throws {
        let (store, _) = try QueryConformanceTests.makeStore()
        let c = Context(store: store)
        var request = FetchRequest<Book>(predicate: try QueryPredicate(format: "pages > 20"))
        request.relationshipKeyPathsForPrefetching = ["labels", "shelf.books"]
        let books = try c.fetch(request)
        #expect(!books.isEmpty)
        guard let entity = store.model.entity(named: "Book"), let labels = entity.property(named: "labels"),
              let shelf = store.model.entity(named: "Shelf"), let shelfBooks = shelf.property(named: "books") else {
            Issue.record("no schema")
            return
        }
        /// Loaded in the context, or its record waiting in the row cache.
        func isAtHand(_ key: UInt64) -> Bool {
            store.rows.row(key) != nil || c.registry[key].map { !$0.takeUnretainedValue().isFault } == true
        }
        for book in books {
            // The to-many state is loaded, and its members are at hand.
            let members = try #require(book.toMany?[labels.slot]?.members, "labels of \(book.title) not loaded")
            #expect(members.allSatisfy(isAtHand))
            if let s = book.shelf {
                let shelved = try #require(s.toMany?[shelfBooks.slot]?.members, "books of \(s.name) not loaded")
                #expect(shelved.allSatisfy(isAtHand))
            }
        }
        // What was loaded is what the relationships hold.
        let reader = Context(store: store)
        let fresh = try reader.fetch(request)
        #expect(books.map { Set($0.labels.map(\.name)) } == fresh.map { Set($0.labels.map(\.name)) })

        for bad in [["title"], ["shelf.nope"], ["labels.books.title"]] {
            var wrong = request
            wrong.relationshipKeyPathsForPrefetching = bad
            let error = #expect(throws: DocStoreError.self) { try c.fetch(wrong) }
            #expect(error?.code == .invalidQuery, "\(bad)")
        }
    }

    @Test func keysetPagesJoinUpToTheWholeOrder() throws {
        let (c, _) = try Self.storeWithUnsavedBook("Mango", pages: 30)   // it takes part in the order too
        let orders: [(QueryPredicate?, [SortKey])] = [
            (nil, [SortKey("title")]),
            (nil, [SortKey("published", ascending: false)]),          // an index walk, with ties
            (nil, [SortKey("pages"), SortKey("subtitle", ascending: false)]),
            (try QueryPredicate(format: "pages > 10"), [SortKey("shelf.name"), SortKey("title", options: .caseInsensitive)]),
            (try QueryPredicate(format: "isRead == YES"), []),            // primary-key order
        ]
        for (predicate, sort) in orders {
            let all = try c.fetch(FetchRequest<Book>(predicate: predicate, sortDescriptors: sort))
            var page = FetchRequest<Book>(predicate: predicate, sortDescriptors: sort, fetchLimit: 6)
            var joined: [Book] = []
            while true {
                let next = try c.fetch(page)
                joined += next
                guard let last = next.last, joined.count <= all.count else { break }
                page = page.after(last)
            }
            #expect(joined.map(\.objectID) == all.map(\.objectID), "\(sort.map(\.description))")
        }

        // Through an index in sort order, a page after an anchor reads about one page of entries.
        let newest = FetchRequest<Book>(sortDescriptors: [SortKey("published", ascending: false)], fetchLimit: 3)
        let firstPage = try c.fetch(newest)
        let anchor = try #require(firstPage.last)
        let plan = try c.explain(newest.after(anchor), analyze: true)
        let numbers = (plan.split(separator: "\n").last.map(String.init) ?? "").split { !$0.isNumber }.compactMap { Int($0) }
        #expect(plan.contains("by the index's order (backward)") && numbers.count == 3 && numbers[0] <= 10, "\(plan)")

        // An anchor that is not stored, or not inserted at all, is a typed error.
        let gone = try #require(try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "title == 'Apple'"))).first)
        let goneID = try #require(gone.objectID)
        try c.delete(gone)
        try c.save()
        var afterGone = newest
        afterGone.fetchAfter = goneID
        #expect((#expect(throws: DocStoreError.self) { try Context(store: c.store).fetch(afterGone) })?.code == .objectNotFound)
        #expect((#expect(throws: DocStoreError.self) { try c.fetch(newest.after(Book())) })?.code == .invalidQuery)
        // An anchor of another entity has no place in the order.
        let shelf = try #require(try c.fetch(FetchRequest<Shelf>()).first)
        let wrongKind = #expect(throws: DocStoreError.self) { try c.fetch(newest.after(shelf)) }
        #expect(wrongKind?.code == .invalidQuery && wrongKind?.message.contains("is not a Book") == true, "\(String(describing: wrongKind))")
    }
}
