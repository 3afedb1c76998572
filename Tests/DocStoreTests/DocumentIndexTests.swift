// Indexes on fields inside Codable attributes (`#Index<Recipe>([\.info?.author])`): entries
// follow the stored JSON (numbers as doubles, one entry per array item, nil for a missing
// field), the planner uses them for ==, ranges, BEGINSWITH and ANY over arrays, and results
// always equal the predicate evaluated on every object — through inserts, edits and deletes.

import DocStoreEngine
import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct DocumentIndexTests {
    struct Info: Codable, Equatable {
        var author: String
        var tags: [String]
        var minutes: Int?
        var rating: Double
    }

    @Model final class Recipe: ManagedObject {
        #Index<Recipe>([\.info?.author], [\.info?.tags], [\.course, \.info?.minutes])
        var name: String = ""
        var course: String = ""
        var info: Info?
    }

    static let authors = ["Ada", "Bo", "Émile", "Émile", "zoë"]

    static func makeStore(seed: UInt64 = 3) throws -> (Store, Context) {
        let store = try Store.inMemory(models: [Recipe.self])
        let c = Context(store: store)
        var rng = SplitMix64(seed: seed)
        for i in 0..<150 {
            let r = Recipe()
            r.name = "recipe \(i)"
            r.course = ["starter", "main", "dessert"][i % 3]
            if i % 7 != 0 {
                let tags = ["quick", "vegan", "spicy", "cheap"].filter { _ in rng.next() % 3 == 0 }
                r.info = Info(author: authors[Int(rng.next() % 5)], tags: tags,
                              minutes: i % 5 == 0 ? nil : Int(rng.next() % 90), rating: Double(rng.next() % 50) / 10)
            }
            try c.insert(r)
        }
        try c.save()
        return (store, c)
    }

    @discardableResult
    func check(_ c: Context, _ format: String, _ args: Any?..., sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let predicate = try QueryPredicate(format: format, argumentArray: args)
        let request = FetchRequest<Recipe>(predicate: predicate)
        let oracle = try c.fetch(FetchRequest<Recipe>()).filter { try predicate.evaluate(with: $0) }
        #expect(try c.fetchIdentifiers(request) == oracle.compactMap(\.objectID), "\(format)", sourceLocation: sourceLocation)
        #expect(try c.count(for: request) == oracle.count, "\(format)", sourceLocation: sourceLocation)
        return try c.explain(request, analyze: true)
    }

    @Test func documentFieldsAreIndexedAndQueried() throws {
        let (_, c) = try Self.makeStore()
        let author = try check(c, "info.author == 'Émile'")
        #expect(author.contains("Recipe(info.author), info.author == \"Émile\""), "\(author)")
        let readLine = author.split(separator: "\n").last.map(String.init) ?? ""
        let numbers = readLine.split { !$0.isNumber }.compactMap { Int($0) }
        #expect(numbers.count == 3 && numbers[1] == numbers[2], "only the matching records are read: \(author)")
        let tag = try check(c, "ANY info.tags == 'vegan'")
        #expect(tag.contains("Recipe(info.tags)"), "\(tag)")
        try check(c, "info.tags == 'spicy'")
        let prefix = try check(c, "info.author BEGINSWITH 'É'")
        #expect(prefix.contains("BEGINSWITH"), "\(prefix)")
        let nilAuthor = try check(c, "info.author == nil")
        #expect(nilAuthor.contains("Recipe(info.author)"), "\(nilAuthor)")
        // A compound of an attribute and a document field: an int constant meets stored numbers.
        let minutes = try check(c, "course == 'main' AND info.minutes < 30")
        #expect(minutes.contains("Recipe(course, info.minutes), course == \"main\" and info.minutes < 30"), "\(minutes)")
        try check(c, "course == 'dessert' AND info.minutes >= 45.5")
        try check(c, "course == 'starter' AND info.minutes == nil")
        try check(c, "course == 'main' AND info.minutes BETWEEN {10, 20}")
        // [c] comparisons and fields without an index scan, with the same results.
        try check(c, "info.author ==[cd] 'emile'")
        try check(c, "info.rating > 2.5")
    }

    @Test func entriesFollowEditsAndDeletes() throws {
        let (store, c) = try Self.makeStore(seed: 9)
        var rng = SplitMix64(seed: 21)
        for round in 0..<4 {
            for r in try c.fetch(Recipe.self) where rng.next() % 5 == 0 {
                switch rng.next() % 4 {
                case 0: r.info = nil
                case 1: r.info?.tags.append("round \(round)")
                case 2: r.info = Info(author: "Ada", tags: ["quick", "quick"], minutes: round, rating: 1)
                default: try c.delete(r)
                }
            }
            try c.save()
            try check(c, "info.author == 'Ada'")
            try check(c, "ANY info.tags == 'quick'")
            try check(c, "info.tags == %@", "round \(round)")
            try check(c, "course == 'main' AND info.minutes <= 2")
        }
        // Every entry is what the records say.
        guard let entity = store.model.entity(named: "Recipe") else { Issue.record("no entity"); return }
        for index in entity.compoundIndexes {
            var expected = Set<[UInt8]>()
            for r in try Context(store: store).fetch(Recipe.self) {
                for e in Context.compoundEntries(r.values, index, key: r.objectID?.primaryKey ?? 0) { expected.insert(e.key) }
            }
            var stored = Set<[UInt8]>()
            try store.engine.read { txn in
                var cursor = try txn.cursor(in: index.tree)
                var entry = try cursor.first()
                while let (k, _) = entry {
                    stored.insert(k)
                    entry = try cursor.next()
                }
            }
            #expect(stored == expected, "\(index.text)")
        }
    }

    @Test func aDocumentFieldCannotBeUniqueAndMustNameAField() throws {
        var recipe = try #require(Recipe._$entityDescription)
        recipe.indexes = [IndexDescription(["info.author"], isUnique: true), IndexDescription(["info."])]
        let error = #expect(throws: DocStoreError.self) { try Schema(entities: [recipe]).validate() }
        #expect(error?.problems.contains { $0.message.contains("uniqueness constraint cannot") } == true, "\(String(describing: error))")
        #expect(error?.problems.contains { $0.message.contains("empty document field") } == true, "\(String(describing: error))")
    }
}
