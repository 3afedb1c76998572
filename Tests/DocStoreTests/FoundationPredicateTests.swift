// Foundation's #Predicate through DocStore: each predicate is translated, fetched through the
// planner, and compared with Foundation evaluating the same predicate in memory over every
// object (the oracle) — and expressions DocStore cannot run are typed errors naming them.

import DocStore
import Foundation
import Testing

@Suite struct FoundationPredicateTests {
    typealias Book = QueryConformanceTests.Book
    typealias Shelf = QueryConformanceTests.Shelf

    func check(_ c: Context, _ predicate: Predicate<Book>, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let request = FetchRequest<Book>(predicate: predicate)
        let fetched = try c.fetch(request).compactMap(\.objectID)
        let all = try c.fetch(FetchRequest<Book>()).filter { !$0.isDeleted }
        let expected = try all.filter { try predicate.evaluate($0) }.compactMap(\.objectID).sorted { $0.primaryKey < $1.primaryKey }
        let plan = try c.explain(request)
        #expect(fetched == expected, "\(label)\n\(plan)", sourceLocation: sourceLocation)
    }

    @Test func everyTranslatedExpressionMatchesFoundationsOwnEvaluation() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let cutoff = Date(timeIntervalSinceReferenceDate: 5 * QueryConformanceTests.day)
        let work = try #require(try c.fetch(FetchRequest<Shelf>(predicate: try QueryPredicate(format: "name == 'Work'"))).first)
        let wanted = ["Apple", "Cherry", "missing"]
        try check(c, #Predicate { $0.title == "Apple" }, "equality")
        try check(c, #Predicate { $0.title != "Apple" && $0.pages < 50 }, "and")
        try check(c, #Predicate { $0.pages > 40 && $0.isRead }, "a Bool property as a condition")
        try check(c, #Predicate { $0.pages >= 20 || !$0.isRead }, "or, not")
        try check(c, #Predicate { $0.subtitle == nil }, "nil")
        try check(c, #Predicate { $0.subtitle != nil && $0.subtitle! > "part 1" }, "force unwrap")
        try check(c, #Predicate { $0.shelf?.name == "Work" }, "optional chaining")
        let workID = work.objectID
        try check(c, #Predicate { $0.shelf?.objectID == workID }, "an object, by its ID")
        try check(c, #Predicate { $0.labels.contains { $0.name == "red" } }, "contains(where:)")
        try check(c, #Predicate { $0.labels.allSatisfy { $0.name.starts(with: "r") } }, "allSatisfy")
        try check(c, #Predicate { $0.labels.filter { $0.name == "blue" || $0.name == "green" }.count == 1 }, "filter count")
        try check(c, #Predicate { $0.labels.count >= 3 }, "collection count")
        try check(c, #Predicate { $0.labels.isEmpty }, "collection isEmpty")
        try check(c, #Predicate { $0.title.isEmpty || $0.title.count > 12 }, "string count and isEmpty")
        try check(c, #Predicate { $0.title.contains("an") }, "substring")
        try check(c, #Predicate { $0.title.starts(with: "Ch") }, "prefix")
        try check(c, #Predicate { wanted.contains($0.title) }, "IN")
        try check(c, #Predicate { (20...50).contains($0.pages) }, "closed range")
        try check(c, #Predicate { (20..<50).contains($0.pages) }, "half-open range")
        try check(c, #Predicate { $0.published < cutoff }, "a captured date")
        try check(c, #Predicate { $0.pages * 2 + 10 > 100 }, "arithmetic")
        try check(c, #Predicate { -$0.rating > 1.0 }, "unary minus")
        try check(c, #Predicate { $0.rating / 2.0 < 0.5 }, "float division")
        try check(c, #Predicate { $0.pages / 30 == 1 }, "integer division")
        try check(c, #Predicate { $0.pages % 20 == 10 && -$0.pages % 7 == -3 }, "remainder, with the dividend's sign")
        try check(c, #Predicate { ($0.subtitle ?? "none") == "none" }, "nil coalescing")
        try check(c, #Predicate { $0.isRead ? $0.pages > 50 : $0.pages < 20 }, "conditional")
        try check(c, #Predicate { $0.info?.author == "Ann" }, "a document field")
        try check(c, #Predicate { $0.info?.keywords.contains("k1") == true }, "a document array")
        try check(c, #Predicate { $0.shelf?.books.count ?? 0 > 7 }, "through a to-one, a to-many count")
    }

    @Test func predicatesUseIndexesAndLinksLikeFormatStrings() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let plan = try c.explain(FetchRequest<Book>(predicate: #Predicate { $0.title == "Apple" }))
        #expect(plan.contains("source: index") && plan.contains("Book.title"), "\(plan)")
        let related = try c.explain(FetchRequest<Book>(predicate: #Predicate { $0.shelf?.name == "Work" }))
        #expect(related.contains("through Shelf.books (links"), "\(related)")
        #expect(try QueryPredicate(#Predicate<Book> { $0.pages > 3 && $0.title.starts(with: "A") }) == QueryPredicate(format: "pages > 3 AND title BEGINSWITH 'A'"))
    }

    @Test func expressionsDocStoreCannotRunAreTypedErrorsNamingThem() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        for (predicate, name) in [
            (#Predicate<Book> { $0.labels.first?.name == "red" }, "KeyPath"),          // no order in a set
        ] {
            do {
                _ = try c.fetch(FetchRequest<Book>(predicate: predicate))
                Issue.record("\(name) was accepted")
            } catch {
                #expect(error.code == .unsupportedPredicate && error.message.contains(name), "\(error)")
            }
        }
    }

    /// An inherited property's key path is rooted at the subclass (`\Photo.label`, declared by
    /// Item): the generated tables reach it; a fetch of the parent finds the sub-entity too.
    @Test func inheritedPropertiesTranslateThroughTheSubclass() throws {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let c = Context(store: store)
        for (label, pixels) in [("a", 1), ("b", 2), ("a", 3)] {
            let photo = Photo()
            photo.label = label
            photo.pixels = pixels
            try c.insert(photo)
        }
        try c.save()
        let photos = try c.fetch(FetchRequest<Photo>(predicate: #Predicate { $0.label == "a" && $0.pixels > 1 }))
        #expect(photos.map(\.pixels) == [3])
        let items = try c.fetch(FetchRequest<Item>(predicate: #Predicate { $0.label == "a" }))
        #expect(items.count == 2 && items.allSatisfy { $0 is Photo })
    }

    @Test func foundationSortDescriptorsOrderAsSortKeysDo() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let viaFoundation = try c.fetch(FetchRequest<Book>(predicate: #Predicate { $0.pages > 20 },
                                                           sortBy: [SortDescriptor(\.pages, order: .reverse), SortDescriptor(\.title)]))
        let viaKeys = try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: "pages > 20"),
                                                     sortDescriptors: [SortKey("pages", ascending: false), SortKey("title")]))
        #expect(!viaKeys.isEmpty && viaFoundation.map(\.objectID) == viaKeys.map(\.objectID))
        let limited = try c.fetch(FetchRequest<Book>(sortBy: [SortDescriptor(\.published)], fetchLimit: 4))
        #expect(limited.map(\.published) == Array(try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey("published")])).prefix(4).map(\.published)))
        #expect(throws: DocStoreError.self) { try c.fetch(FetchRequest<Book>(sortBy: [SortDescriptor(\.shelf?.name)])) }
    }
}
