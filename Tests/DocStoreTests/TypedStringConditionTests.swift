// The typed front end for what #Predicate cannot say on Linux: case- and diacritic-insensitive
// string conditions on compile-checked key paths (direct, through a to-one, ANY of a to-many),
// combined with && || !, and localized sorting — each checked against the same query in the
// format language, and against Foundation's own localized comparison.

import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

extension QueryConformanceTests.Book {
    /// Not persisted: conditions and sort keys on it are refused.
    var shouting: String { title.uppercased() }
}

@Suite struct TypedStringConditionTests {
    typealias Book = QueryConformanceTests.Book
    typealias Shelf = QueryConformanceTests.Shelf
    typealias Label = QueryConformanceTests.Label

    func ids(_ c: Context, _ predicate: QueryPredicate) throws -> [ObjectID] {
        try c.fetchIdentifiers(FetchRequest<Book>(predicate: predicate))
    }

    @Test func typedConditionsMatchTheirFormatEquivalents() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let pairs: [(QueryPredicate, String)] = [
            (try .string(\Book.title, .contains, "ETIENNE"), "title CONTAINS[cd] 'ETIENNE'"),
            (try .localizedStandardContains(\Book.title, "ecole"), "title CONTAINS[cd] 'ecole'"),
            (try .string(\Book.title, .equals, "strasse"), "title ==[cd] 'strasse'"),
            (try .string(\Book.subtitle, .beginsWith, "PART", options: .caseInsensitive), "subtitle BEGINSWITH[c] 'PART'"),
            (try .string(\Book.title, .like, "?PPLE*"), "title LIKE[cd] '?PPLE*'"),
            (try .string(\Book.shelf, \Shelf.name, .equals, "WORK"), "shelf.name ==[cd] 'WORK'"),
            (try .string(any: \Book.labels, \Label.name, .equals, "ete"), "ANY labels.name ==[cd] 'ete'"),
            (try .string(\Book.title, .beginsWith, "a") && !(try .string(\Book.title, .contains, "pie")),
             "title BEGINSWITH[cd] 'a' AND NOT title CONTAINS[cd] 'pie'"),
            (try .string(\Book.title, .equals, "fig") || (try .string(\Book.title, .equals, "DATE")), "title ==[cd] 'fig' OR title ==[cd] 'DATE'"),
        ]
        for (typed, format) in pairs {
            let expected = try ids(c, try QueryPredicate(format: format))
            #expect(try ids(c, typed) == expected, "\(format)")
            #expect(!expected.isEmpty, "\(format) should match something")
        }
        // The diacritic- and case-insensitive default finds every spelling.
        let etienne = try c.fetch(FetchRequest<Book>(predicate: try .string(\Book.title, .equals, "saint-etienne")))
        #expect(Set(etienne.map(\.title)) == ["Saint-Étienne", "Saint-E\u{301}tienne", "saint-etienne"])
    }

    @Test func aKeyPathThatIsNotPersistedIsATypedError() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let error = #expect(throws: DocStoreError.self) { try QueryPredicate.string(\Book.shouting, .contains, "A") }
        #expect(error?.code == .invalidQuery && error?.message.contains("not a persisted property") == true)
        let sort = #expect(throws: DocStoreError.self) { try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey(\Book.shouting)])) }
        #expect(sort?.code == .invalidQuery)
    }

    @Test func localizedSortingFollowsTheLocaleOnRequest() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let standard = try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey(\Book.title, options: .localizedStandard)])).map(\.title)
        for (a, b) in zip(standard, standard.dropFirst()) {
            #expect(a.localizedStandardCompare(b) != .orderedDescending, "\(a) before \(b)")
        }
        let localized = try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey("title", options: .localized)])).map(\.title)
        for (a, b) in zip(localized, localized.dropFirst()) {
            #expect(a.compare(b, locale: Locale.current) != .orderedDescending, "\(a) before \(b)")
        }
        // By Unicode scalars "Zebra" comes before "apple pie"; by the locale, after.
        let plain = try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey("title")])).map(\.title)
        #expect((plain.firstIndex(of: "Zebra") ?? 0) < (plain.firstIndex(of: "apple pie") ?? 0))
        #expect((localized.firstIndex(of: "Zebra") ?? 0) > (localized.firstIndex(of: "apple pie") ?? 0))
        // Digits as numbers.
        #expect(QueryValueSemantics.stringOrder("file2", "file10", .localizedStandard) < 0)
        #expect(QueryValueSemantics.stringOrder("file2", "file10", []) > 0)
    }
}
