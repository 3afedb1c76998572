// Queries against a fixed data set: every predicate is fetched through the planner (indexes,
// relationship links, scans) and compared with the oracle — the predicate evaluated in memory
// (evaluate(with:)) over every object — both on saved data and with unsaved inserts, edits and
// deletes in the context; count(for:) must agree too. Tricky cases are checked against
// hand-computed expectations: nil, empty to-many with ALL/NONE, Unicode folding and
// normalization, NaN, negative zero, dates.

import DocStore
import Foundation
import Testing

@Suite struct QueryConformanceTests {
    struct Info: Codable, Equatable {
        var author: String
        var keywords: [String]
        var year: Int?
    }

    @Model final class Shelf: ManagedObject {
        @Attribute(.unique) var name: String = ""
        @Relationship(deleteRule: .cascade, inverse: \Book.shelf) var books: Set<Book> = []
    }

    @Model final class Book: ManagedObject {
        @Attribute(.indexed) var title: String = ""
        var subtitle: String?
        @Attribute(.indexed) var published: Date = Date(timeIntervalSinceReferenceDate: 0)
        @Attribute(.indexed) var pages: Int = 0
        var rating: Double = 0
        var isRead: Bool = false
        var shelf: Shelf?
        var labels: Set<Label> = []
        var info: Info?
    }

    @Model final class Label: ManagedObject {
        @Attribute(.indexed) var name: String = ""
        @Relationship(inverse: \Book.labels) var books: Set<Book> = []
    }

    static let day: TimeInterval = 86_400
    static let titles = [
        "Saint-Étienne", "Saint-E\u{301}tienne", "saint-etienne", "Straße", "STRASSE", "école", "École",
        "Apple", "apple pie", "Banana", "banana split", "Cherry", "cherry", "date", "Elder", "fig",
        "Grape", "a*b", "a?c", "", "Zebra", "zebra crossing", "Ωmega", "omega", "Delta",
    ]

    /// 5 shelves, 6 labels, 40 books with nils, ties, NaN, -0, Unicode variants; book i has
    /// labels i % 7 (0: none) and every fifth book has no shelf.
    static func makeStore() throws -> (Store, Context) {
        let store = try Store.inMemory(models: [Shelf.self, Book.self, Label.self])
        let c = Context(store: store)
        let shelves = ["Inbox", "Work", "Home", "Archive", "Ideas"].map { name in
            let s = Shelf()
            s.name = name
            return s
        }
        let labels = ["red", "green", "blue", "Rouge", "rouge", "été"].map { name in
            let l = Label()
            l.name = name
            return l
        }
        for s in shelves { try c.insert(s) }
        for l in labels { try c.insert(l) }
        for i in 0..<40 {
            let b = Book()
            b.title = titles[i % titles.count] + (i >= titles.count ? " \(i)" : "")
            b.subtitle = i % 3 == 0 ? nil : "part \(i % 4)"
            b.published = Date(timeIntervalSinceReferenceDate: Double(i % 13) * day)
            b.pages = (i * 37) % 11 * 10          // ties
            b.rating = i == 7 ? .nan : i == 8 ? -0.0 : i == 9 ? 0.0 : Double(i % 6) - 2.5
            b.isRead = i % 2 == 0
            b.info = i % 4 == 0 ? nil : Info(author: ["Ann", "Bob", "Émile"][i % 3], keywords: i % 5 == 0 ? [] : ["k\(i % 3)", "all"], year: i % 6 == 0 ? nil : 1990 + i)
            try c.insert(b)
            if i % 5 != 0 { b.shelf = shelves[i % shelves.count] }
            let n = i % 7
            if n > 0 { b.labels = Set(labels.prefix(n)) }
        }
        try c.save()
        return (store, c)
    }

    /// Predicates with their arguments (objects are given as closures of the context).
    static func cases(_ c: Context) throws -> [(String, [Any?])] {
        let shelves = try c.fetch(FetchRequest<Shelf>(sortDescriptors: [SortKey("name")]))
        let labels = try c.fetch(FetchRequest<Label>(sortDescriptors: [SortKey("name")]))
        let cutoff = Date(timeIntervalSinceReferenceDate: 5 * day)
        return [
            ("TRUEPREDICATE", []), ("FALSEPREDICATE", []),
            ("title == %@", ["Saint-Étienne"]), ("title ==[c] %@", ["saint-étienne"]), ("title ==[cd] %@", ["SAINT-ETIENNE"]),
            ("title ==[n] %@", ["Saint-Étienne"]), ("title != %@", ["Apple"]),
            ("title < %@", ["Cherry"]), ("title <= %@", ["Cherry"]), ("title > %@", ["banana"]), ("title >= %@", ["banana"]),
            ("title BEGINSWITH %@", ["ban"]), ("title BEGINSWITH[c] %@", ["BAN"]), ("title ENDSWITH %@", ["pie"]),
            ("title CONTAINS[cd] %@", ["E"]), ("title CONTAINS %@", ["e"]), ("title LIKE %@", ["a*"]), ("title LIKE[c] %@", ["?pple*"]),
            ("title MATCHES %@", ["[A-Z].*"]), ("title MATCHES[c] %@", ["z.*"]), ("title IN %@", [["Apple", "Cherry", "nope"]]),
            ("title ==[c] 'strasse'", []), ("title ==[c] 'straße'", []), ("title BETWEEN {'B', 'D'}", []),
            ("subtitle == nil", []), ("subtitle != nil", []), ("subtitle == 'part 1'", []), ("subtitle < 'part 2'", []),
            ("pages == 30", []), ("pages != 30", []), ("pages < 30", []), ("pages <= 30", []), ("pages > 70", []), ("pages >= 70", []),
            ("pages BETWEEN {20, 50}", []), ("pages IN {0, 100, 55}", []), ("pages + 10 > 60", []), ("pages * 2 == 100", []),
            ("pages / 4 > 10", []), ("-pages < -50", []),
            ("rating == 0", []), ("rating < 0", []), ("rating > 0", []), ("rating >= -0.5", []), ("rating != rating", []),
            ("rating BETWEEN {-1.5, 0.5}", []),
            ("published == %@", [Date(timeIntervalSinceReferenceDate: 3 * day)]), ("published < %@", [cutoff]),
            ("published BETWEEN %@", [[Date(timeIntervalSinceReferenceDate: 2 * day), cutoff]]),
            ("published >= CAST(864000, \"NSDate\")", []),
            ("isRead == YES", []), ("isRead == NO AND pages > 40", []), ("isRead == 1", []), ("NOT isRead == YES", []),
            ("shelf == %@", [shelves[0]]), ("shelf != %@", [shelves[0]]), ("shelf == nil", []), ("shelf IN %@", [[shelves[1], shelves[2]]]),
            ("shelf.name == 'Work'", []), ("shelf.name BEGINSWITH 'A'", []), ("shelf.name ==[c] 'home' AND pages > 20", []),
            ("ANY labels == %@", [labels[0]]), ("labels CONTAINS %@", [labels[1]]), ("ANY labels.name == 'red'", []),
            ("ANY labels.name ==[c] 'ROUGE'", []), ("ANY labels.name ==[cd] 'ete'", []), ("ALL labels.name BEGINSWITH 'r'", []),
            ("NONE labels.name == 'blue'", []), ("ALL labels.name != 'x'", []), ("labels.@count == 0", []), ("labels.@count >= 3", []),
            ("labels.name == 'green'", []), ("shelf.books.@count > 7", []), ("ANY shelf.books.labels.name == 'été'", []),
            ("SUBQUERY(labels, $l, $l.name BEGINSWITH[c] 'r').@count == 2", []),
            ("SUBQUERY(labels, $l, $l.books.@count > 15).@count > 0", []),
            ("shelf.books.@sum.pages > 300", []), ("shelf.books.@avg.pages < 50", []), ("shelf.books.@max.pages == 100", []),
            ("shelf.books.@min.title == 'Apple'", []),
            ("info.author == 'Ann'", []), ("info.author ==[cd] 'emile'", []), ("info == nil", []), ("info.year > 2010", []),
            ("info.year == nil", []), ("ANY info.keywords == 'k1'", []), ("info.keywords CONTAINS 'all'", []), ("info.keywords.@count == 0", []),
            ("SELF == %@", [shelves[0]]),
            ("pages > 40 OR title BEGINSWITH 'a'", []), ("(pages == 10 OR pages == 20) AND isRead == NO", []),
            ("shelf.name == 'Inbox' OR ANY labels.name == 'blue'", []), ("NOT (pages > 40 OR isRead == YES)", []),
            ("pages > 40 AND title BEGINSWITH 'S' AND subtitle != nil", []),
            // Several bounds on one indexed attribute: one range.
            ("pages >= 20 AND pages < 60", []), ("pages > 20 AND pages <= 60 AND pages != 40", []), ("pages < 50 AND pages > 50", []),
            ("published >= %@ AND published < %@", [Date(timeIntervalSinceReferenceDate: 2 * day), cutoff]),
            ("title >= 'B' AND title < 'D'", []), ("title BEGINSWITH 'C' AND title < 'Cherry 5'", []), ("title BEGINSWITH 'b' AND title > 'banana'", []),
            ("rating > -1 AND rating < 1", []), ("pages <= 30 AND pages >= 30", []), ("pages > 10 AND pages IN {0, 20, 100}", []),
        ]
    }

    func ids(_ objects: [ManagedObject]) -> [ObjectID] { objects.compactMap(\.objectID) }

    /// The oracle: every book of the context (unsaved ones included, deleted ones not) tested
    /// in memory, in primary-key order.
    func oracle(_ p: QueryPredicate, _ c: Context) throws -> [ObjectID] {
        let all = try c.fetch(FetchRequest<Book>()).filter { !$0.isDeleted }
        return ids(try all.filter { try p.evaluate(with: $0) }).sorted { $0.primaryKey < $1.primaryKey }
    }

    func checkEveryCase(_ c: Context, _ label: String) throws {
        for (format, args) in try Self.cases(c) {
            let p = try QueryPredicate(format: format, argumentArray: args)
            let request = FetchRequest<Book>(predicate: p)
            let fetched = ids(try c.fetch(request))
            let expected = try oracle(p, c)
            let plan = try c.explain(request)
            #expect(fetched == expected, "\(label): \(format) — plan:\n\(plan)")
            #expect(try c.count(for: request) == expected.count, "\(label): count of \(format)")
        }
    }

    @Test func everyPredicateMatchesTheOracleOnSavedData() throws {
        let (_, c) = try Self.makeStore()
        try checkEveryCase(c, "saved")
        // And in a fresh context, where nothing is loaded.
        let (store2, c2) = try Self.makeStore()
        let fresh = Context(store: store2)
        _ = c2
        try checkEveryCase(fresh, "fresh context")
    }

    @Test func everyPredicateMatchesTheOracleWithUnsavedChanges() throws {
        let (_, c) = try Self.makeStore()
        let books = try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey("title")]))
        let shelves = try c.fetch(FetchRequest<Shelf>(sortDescriptors: [SortKey("name")]))
        let labels = try c.fetch(FetchRequest<Label>(sortDescriptors: [SortKey("name")]))
        // An unsaved insert, edits (indexed and not), a relationship moved, a delete, a relabel.
        let new = Book()
        new.title = "Banana bread"
        new.pages = 30
        new.published = Date(timeIntervalSinceReferenceDate: 3 * Self.day)
        try c.insert(new)
        new.shelf = shelves[0]
        new.labels = [labels[0], labels[2]]
        books[0].title = "Cherry jam"
        books[1].pages = 100
        books[2].shelf = shelves[3]
        try c.delete(books[3])
        books[4].labels = []
        shelves[1].name = "Labour"
        try checkEveryCase(c, "unsaved")
        #expect(c.hasChanges)
    }

    /// Hand-computed results for the cases where the semantics are easy to get wrong.
    @Test func trickyCasesGiveTheDocumentedResults() throws {
        let (_, c) = try Self.makeStore()
        func count(_ format: String, _ args: Any?...) throws -> Int {
            try c.count(for: FetchRequest<Book>(predicate: try QueryPredicate(format: format, argumentArray: args)))
        }
        func titles(_ format: String, _ args: Any?...) throws -> [String] {
            try c.fetch(FetchRequest<Book>(predicate: try QueryPredicate(format: format, argumentArray: args))).map(\.title).sorted()
        }
        // Unicode: NFC and NFD spellings are one value; [cd] folds case and accents.
        #expect(try titles("title == %@", "Saint-Étienne") == ["Saint-E\u{301}tienne", "Saint-Étienne"])
        #expect(try titles("title == %@", "Saint-E\u{301}tienne").count == 2)
        #expect(try titles("title ==[n] %@", "Saint-Étienne") == ["Saint-Étienne"])
        #expect(try titles("title ==[cd] 'saint-etienne'").count == 3)
        #expect(try titles("title ==[c] 'école'") == ["École", "école"])
        #expect(try titles("title ==[c] 'STRASSE'") == ["STRASSE", "Straße"])   // full case folding: ß is ss
        // nil: equal only to nil; no order.
        #expect(try count("subtitle == nil") == 14)          // i % 3 == 0 for i in 0..<40
        #expect(try count("subtitle != nil") == 26)
        #expect(try count("subtitle < 'zzz'") == 26)
        #expect(try count("subtitle > ''") == 26)
        // Empty to-many: ANY false, ALL and NONE true. Books with i % 7 == 0 have no labels.
        #expect(try count("labels.@count == 0") == 6)
        #expect(try count("ALL labels.name == 'nothing'") == 6)
        #expect(try count("NONE labels.name == 'red'") == 6)
        #expect(try count("ANY labels.name == 'red'") == 34)
        // NaN matches no comparison; -0 equals 0.
        #expect(try count("rating == 0") == 2)               // books 8 (-0.0) and 9 (0.0)
        #expect(try count("rating != rating") == 1)          // NaN is not equal to itself
        #expect(try count("rating < 100 OR rating >= 100") == 39)
        // Dates: day 0…12 cycle; BETWEEN is inclusive.
        #expect(try count("published BETWEEN %@", [Date(timeIntervalSinceReferenceDate: 0), Date(timeIntervalSinceReferenceDate: Self.day)]) == 7)
        // Numbers across kinds: an integer attribute against a double, a Bool against 1.
        #expect(try count("pages == 30.0") == (try count("pages == 30")))
        #expect(try count("isRead == 1") == 20)
        // Documents: a missing field is nil; an empty array is an empty collection.
        // info is nil for i % 4 == 0 (10 books); keywords are [] for i % 5 == 0 otherwise (6).
        #expect(try count("info.keywords.@count == 0") == 16)
        #expect(try count("info == nil") == 10)
    }
}

/// The planner's choices, through explain(analyze:): which source, and how much it read.
@Suite struct QueryPlanTests {
    typealias Book = QueryConformanceTests.Book

    func explain(_ c: Context, _ format: String, _ args: Any?..., sort: [SortKey] = [], limit: Int = 0) throws -> String {
        let request = FetchRequest<Book>(predicate: try QueryPredicate(format: format, argumentArray: args), sortDescriptors: sort, fetchLimit: limit)
        return try c.explain(request, analyze: true)
    }

    /// The figures of the last line: index entries read, records read, results.
    func reads(_ plan: String) -> (entries: Int, records: Int, results: Int) {
        let line = plan.split(separator: "\n").last.map(String.init) ?? ""
        let numbers = line.split { !$0.isNumber }.compactMap { Int($0) }
        return numbers.count == 3 ? (numbers[0], numbers[1], numbers[2]) : (-1, -1, -1)
    }

    @Test func indexedComparisonsReadOnlyTheirEntries() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let equal = try explain(c, "title == 'Apple'")
        #expect(equal.contains("source: index") && equal.contains("Book.title, == \"Apple\""), "\(equal)")
        #expect(reads(equal) == (1, 1, 1), "\(equal)")
        let prefix = try explain(c, "title BEGINSWITH 'ban'")
        #expect(prefix.contains("BEGINSWITH \"ban\"") && reads(prefix) == (2, 2, 2), "\(prefix)")
        let between = try explain(c, "pages >= 20 AND pages < 60")
        #expect(between.contains(">= 20 and < 60") && reads(between).entries <= reads(between).results + 1, "\(between)")
        let range = try explain(c, "pages > 70")
        #expect(range.contains("index") && reads(range).records == reads(range).results, "\(range)")
        let list = try explain(c, "pages IN {0, 100}")
        #expect(list.contains("== 0 or == 100"), "\(list)")
        // A [c] comparison cannot use the case-sensitive index: a scan.
        let folded = try explain(c, "title ==[c] 'apple'")
        #expect(folded.contains("source: scan") && reads(folded).records == 40, "\(folded)")
    }

    @Test func relationshipPredicatesGoThroughLinksNotTables() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let toOne = try explain(c, "shelf.name == 'Work'")
        #expect(toOne.contains("through Shelf.books (links"), "\(toOne)")
        #expect(reads(toOne).records == reads(toOne).results, "\(toOne)")   // only the shelf's books
        let many = try explain(c, "ANY labels.name == 'blue'")
        #expect(many.contains("through Label.books (links") && reads(many).records == reads(many).results, "\(many)")
    }

    @Test func sortWithLimitReadsOnlyTheWindowAndItsTies() throws {
        let (_, c) = try QueryConformanceTests.makeStore()
        let latest = try explain(c, "TRUEPREDICATE", sort: [SortKey("published", ascending: false)], limit: 3)
        #expect(latest.contains("by the index's order (backward)"), "\(latest)")
        // Day 12 holds exactly three books; the fourth entry read is the first of day 11.
        #expect(reads(latest) == (4, 3, 3), "\(latest)")
        let first = try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey("published", ascending: false), SortKey("title")], fetchLimit: 3))
        let all = try c.fetch(FetchRequest<Book>(sortDescriptors: [SortKey("published", ascending: false), SortKey("title")]))
        #expect(first.map(\.objectID) == all.prefix(3).map(\.objectID))
        let ranged = try explain(c, "pages > 20", sort: [SortKey("pages")], limit: 3)
        #expect(ranged.contains("forward") && reads(ranged).records <= 5, "\(ranged)")
    }
}
