// Fetch options on the data set of QueryConformanceTests: several sort keys with nil first and
// ties broken by primary key, offset and limit, pending changes included or not, sorting
// through a to-one relationship, and typed errors raised before anything is read.

import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct QueryFetchOptionsTests {
    typealias Book = QueryConformanceTests.Book
    typealias Shelf = QueryConformanceTests.Shelf

    @Test func sortKeysOrderWithNilFirstAndTiesByPrimaryKey() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let books = try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey("subtitle"), SortKey("pages", ascending: false)]))
        #expect(books.count == 40)
        // Nil subtitles first; within equal subtitles, pages descending; within equal pages, key order.
        for (a, b) in zip(books, books.dropFirst()) {
            func tiedByPagesThenKey() {
                if a.pages == b.pages {
                    #expect(a.objectID?.primaryKey ?? 0 < b.objectID?.primaryKey ?? 0)
                } else {
                    #expect(a.pages > b.pages)
                }
            }
            switch (a.subtitle, b.subtitle) {
            case (nil, nil): tiedByPagesThenKey()
            case (.some, .some) where a.subtitle == b.subtitle: tiedByPagesThenKey()
            case (nil, .some): break
            case (.some(let x), .some(let y)): #expect(x < y)
            case (.some, nil): Issue.record("a nil subtitle after \(a.subtitle ?? "")")
            }
        }
        let byShelf = try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "shelf != nil"), sortDescriptors: [SortKey("shelf.name", ascending: false)]))
        #expect(byShelf.compactMap { $0.shelf?.name } == byShelf.compactMap { $0.shelf?.name }.sorted(by: >))
        let folded = try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "title BEGINSWITH[c] 'c'"), sortDescriptors: [SortKey("title", options: .caseInsensitive)]))
        // Folded equal titles keep primary-key order (books 11 and 12, then 36 and 37).
        #expect(folded.map(\.title) == ["Cherry", "cherry", "Cherry 36", "cherry 37"])
    }

    @Test func offsetAndLimitCutTheOrderedResult() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let all = try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey("title")]))
        for (offset, limit) in [(0, 5), (5, 5), (38, 5), (40, 3), (0, 0), (7, 0)] {
            let page = try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey("title")], fetchLimit: limit, fetchOffset: offset))
            let expected = Array(all.dropFirst(offset).prefix(limit == 0 ? Int.max : limit))
            #expect(page.map(\.objectID) == expected.map(\.objectID), "offset \(offset) limit \(limit)")
            #expect(try c.count(for: FetchRequest<Book>(fetchLimit: limit, fetchOffset: offset)) == expected.count)
        }
    }

    @Test func pendingChangesCountUnlessTheRequestSaysNot() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let apple = try #require(try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "title == 'Apple'"))).first)
        let cherry = try #require(try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "title == 'Cherry'"))).first)
        apple.title = "Avocado"
        try c.delete(cherry)
        let new = Book()
        new.title = "Apple"
        try c.insert(new)

        var request = FetchRequest<Book>(predicate: try QueryPredicate(format: "title == 'Apple' OR title == 'Cherry' OR title == 'Avocado'"))
        let withPending = try c.fetch(request)
        #expect(Set(withPending.map(\.title)) == ["Apple", "Avocado"])
        #expect(withPending.contains { $0 === new } && withPending.contains { $0 === apple } && !withPending.contains { $0 === cherry })

        request.includesPendingChanges = false
        let saved = try c.fetch(request)
        // The saved values choose: the old Apple (now titled Avocado in memory) and Cherry; not the insert.
        #expect(saved.count == 2)
        #expect(saved.contains { $0 === apple } && saved.contains { $0 === cherry } && !saved.contains { $0 === new })
        #expect(try c.count(for: request) == 2)
    }

    @Test func badKeyPathsAndVariablesAreTypedErrorsBeforeAnyRead() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        func error(_ request: FetchRequest<Book>) -> DocStoreError? {
            do { _ = try c.fetch(request); return nil } catch { return error }
        }
        let unknown = error(FetchRequest<Book>(predicate: try QueryPredicate(format: "titel == 'x'")))
        #expect(unknown?.code == .invalidQuery && unknown?.entity == "Book" && unknown?.property == "titel")
        let deep = error(FetchRequest<Book>(predicate: try QueryPredicate(format: "shelf.nmae == 'x'")))
        #expect(deep?.code == .invalidQuery && deep?.entity == "Shelf" && deep?.property == "nmae")
        let throughValue = error(FetchRequest<Book>(predicate: try QueryPredicate(format: "title.length == 1")))
        #expect(throughValue?.code == .invalidQuery)
        let unbound = error(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages > $min")))
        #expect(unbound?.code == .invalidQuery && unbound?.message.contains("$min") == true)
        let toManySort = error(FetchRequest<Book>(sortDescriptors: [SortKey("labels.name")]))
        #expect(toManySort?.code == .invalidQuery)
        let bound = try QueryPredicate(format: "pages > $min").withSubstitutionVariables(["min": 90])
        #expect(try c.fetch(FetchRequest<Book>(predicate: bound)).allSatisfy { $0.pages > 90 })
        #expect(throws: DocStoreError.self) { try c.fetch(FetchRequest<ManagedObject>(entityName: "Nope")) }
    }

    @Test func evaluateWithTestsOneObjectAsAFetchWould() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let p = try QueryPredicate(format: "shelf.name == 'Work' AND ANY labels.name == 'red'")
        let fetched = Set(try c.fetch(FetchRequest<Book>(predicate: p)).compactMap(\.objectID))
        for book in try c.fetch(FetchRequest<Book>()) {
            #expect(try p.evaluate(with: book) == fetched.contains(book.objectID!))
        }
        #expect(throws: DocStoreError.self) { try p.evaluate(with: Book()) }
    }

    /// A unique index holds no nils, so it cannot give the order of an optional attribute: a
    /// sort with a limit must still return the objects whose value is nil (first, ascending).
    @Test func sortingByAnOptionalUniqueAttributeKeepsItsNils() throws {
        let schema = Schema(entities: [
            EntityDescription(name: "Person", attributes: [
                AttributeDescription(name: "code", type: .string, isOptional: true, isUnique: true),
            ]),
        ])
        let store = try Store.inMemory(schema: schema)
        let c = Context(store: store)
        for code in ["b", nil, "a", nil, "c"] as [String?] {
            try c.insertObject(forEntityName: "Person").setValue(code, forKey: "code")
        }
        try c.save()
        let fresh = Context(store: store)
        let first = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Person", sortDescriptors: [SortKey("code")], fetchLimit: 3))
        #expect(first.map { $0["code"] as? String } == [nil, nil, "a"])
    }

    /// `x IN {nil, …}` does not match a nil x, but an index holds nils under the nil item's
    /// bound: the index cannot answer it alone, and fetch and count agree with evaluation.
    @Test func inWithNilIsTestedNotAnsweredByTheIndex() throws {
        let schema = Schema(entities: [
            EntityDescription(name: "Reading", attributes: [
                AttributeDescription(name: "level", type: .int64, isOptional: true, isIndexed: true),
            ]),
        ])
        let store = try Store.inMemory(schema: schema)
        let c = Context(store: store)
        for level in [1, nil, 2, nil, 1] as [Int?] {
            try c.insertObject(forEntityName: "Reading").setValue(level, forKey: "level")
        }
        try c.save()
        let fresh = Context(store: store)
        for format in ["level IN {nil, 1}", "level IN {1, nil, 2}", "level IN {nil}", "level IN {1}"] {
            let request = FetchRequest<ManagedObject>(entityName: "Reading", predicate: try QueryPredicate(format: format))
            let expected = try fresh.fetch(FetchRequest<ManagedObject>(entityName: "Reading")).filter { try request.predicate?.evaluate(with: $0) ?? true }
            #expect(try fresh.fetch(request).count == expected.count, "\(format)")
            #expect(try fresh.count(for: request) == expected.count, "\(format)")
        }
        #expect(try fresh.count(for: FetchRequest<ManagedObject>(entityName: "Reading", predicate: try QueryPredicate(format: "level IN {nil, 1}"))) == 2)
    }

    /// F4: a count the index answers alone reads no record; with a filter beyond the index, or
    /// an unsaved change of the entity, it reads records and still counts right.
    @Test func aCountTheIndexAnswersReadsNoRecord() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let byIndex = try c.counted(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages IN {0, 100}")))
        #expect(byIndex.count == 7 && byIndex.recordsRead == 0)
        let filtered = try c.counted(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages IN {0, 100} AND isRead == YES")))
        let fetched = try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages IN {0, 100} AND isRead == YES")))
        #expect(filtered.recordsRead == 7 && filtered.count == fetched.count)
        let book = try #require(try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages == 0"))).first)
        book.pages = 55
        let pending = try c.counted(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages IN {0, 100}")))
        #expect(pending.count == 6 && pending.recordsRead > 0)
    }
}
