// The conjuncts an index range answers are not tested again on the stored candidates it yields
// (QueryPlan.storedPredicate): what the plan keeps to test for each shape, that counts, fetches
// and key fetches stay those of evaluating the predicate on every object — unsaved objects
// included, which the index does not hold — and the comparisons an index holds entries for
// that do not match them (NaN, a URL ordered against a string), which stay tested.

import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore
import DocStoreTestSupport

@Suite struct DecidedConjunctTests {
    /// 60 readings: `at` 0…59 (indexed), `flag` on every third, `name` "r<at>".
    static func makeStore() throws -> (Store, Context) {
        let schema = Schema(entities: [
            EntityDescription(name: "Reading", attributes: [
                AttributeDescription(name: "at", type: .int64, isOptional: true, isIndexed: true),
                AttributeDescription(name: "flag", type: .bool),
                AttributeDescription(name: "name", type: .string, isOptional: true),
            ]),
        ])
        let store = try Store.inMemory(schema: schema)
        let c = Context(store: store)
        for i in 0..<60 {
            let r = try c.insertObject(forEntityName: "Reading")
            try r.setValue(i, forKey: "at")
            try r.setValue(i % 3 == 0, forKey: "flag")
            try r.setValue("r\(i)", forKey: "name")
        }
        try c.save()
        return (store, c)
    }

    static func request(_ format: String) throws -> FetchRequest<ManagedObject> {
        FetchRequest<ManagedObject>(entityName: "Reading", predicate: try QueryPredicate(format: format), sortDescriptors: [SortKey("at")])
    }

    /// The objects `format` selects by evaluating it on every object of the context.
    static func evaluated(_ format: String, in c: Context) throws -> [Int] {
        let all = try c.fetch(FetchRequest<ManagedObject>(entityName: "Reading"))
        let predicate = try QueryPredicate(format: format)
        return try all.filter { try predicate.evaluate(with: $0) }.compactMap { $0["at"] as? Int }.sorted()
    }

    @Test func storedCandidatesAreTestedOnlyOnWhatTheIndexLeaves() throws {
        let (store, _) = try Self.makeStore()
        let c = Context(store: store)
        let format = "flag == NO AND at > 40"
        let plan = try c.explain(try Self.request(format))
        #expect(plan.contains("tested on each candidate: flag == NO; the index answers the rest"), "\(plan)")
        let counted = try c.counted(try Self.request(format))
        #expect(counted.count == 13 && counted.recordsRead == 19, "\(counted)")
        #expect(try c.fetch(try Self.request(format)).compactMap { $0["at"] as? Int } == (41..<60).filter { $0 % 3 != 0 })
    }

    /// Unsaved objects are not in the index: they are tested against the whole predicate, the
    /// conjunct the index answers for stored ones included.
    @Test func unsavedObjectsAreTestedAgainstTheWholePredicate() throws {
        let (store, _) = try Self.makeStore()
        let c = Context(store: store)
        let inside = try c.insertObject(forEntityName: "Reading")
        try inside.setValue(45, forKey: "at")
        try inside.setValue(false, forKey: "flag")
        let outside = try c.insertObject(forEntityName: "Reading")
        try outside.setValue(5, forKey: "at")
        try outside.setValue(false, forKey: "flag")
        let moved = try #require(try c.fetch(try Self.request("at == 50")).first)
        try moved.setValue(3, forKey: "at")                      // stored in range, now out of it
        let kept = try #require(try c.fetch(try Self.request("at == 20")).first)
        try kept.setValue(47, forKey: "at")                      // stored out of range, now in it
        for format in ["flag == NO AND at > 40", "at > 40 AND flag == NO AND name != nil", "at >= 41 AND at < 55 AND flag == NO"] {
            let expected = try Self.evaluated(format, in: c)
            #expect(try c.fetch(try Self.request(format)).compactMap { $0["at"] as? Int }.sorted() == expected, "\(format)")
            #expect(try c.count(for: try Self.request(format)) == expected.count, "\(format)")
        }
        let selected = try Self.evaluated("flag == NO AND at > 40", in: c)
        #expect(selected.contains(45) && selected.contains(47) && !selected.contains(5) && !selected.contains(3) && !selected.contains(50))
    }

    /// Two bounds of one index, each answered exactly, make a range the index answers alone:
    /// the count reads no record.
    @Test func twoBoundsTheIndexAnswersCountWithoutReadingRecords() throws {
        let (store, _) = try Self.makeStore()
        let c = Context(store: store)
        let format = "at > 10 AND at <= 30"
        #expect(try c.explain(try Self.request(format)).contains("(answered by the index)"))
        let counted = try c.counted(try Self.request(format))
        #expect(counted.count == 20 && counted.recordsRead == 0, "\(counted)")
        #expect(try c.fetch(try Self.request(format)).compactMap { $0["at"] as? Int } == Array(11...30))
    }

    /// An equality merged with a range of one index is one range both bounds hold: empty when
    /// the range leaves the value out. The index answers it alone, with no record read.
    @Test func anEqualityAndARangeOfOneIndexAreAnsweredTogether() throws {
        let (store, _) = try Self.makeStore()
        let c = Context(store: store)
        for (format, expected) in [("at == 5 AND at > 7", [Int]()), ("at == 12 AND at > 7", [12]), ("at > 7 AND at == 5", []),
                                   ("at == 5 AND at >= 5", [5]), ("at == 9 AND at < 9", []), ("at < 9 AND at == 9", [])] {
            #expect(try c.fetch(try Self.request(format)).compactMap { $0["at"] as? Int } == expected, "\(format)")
            let counted = try Context(store: store).counted(try Self.request(format))
            #expect(counted.count == expected.count && counted.recordsRead == 0, "\(format): \(counted)")
            #expect(try Self.evaluated(format, in: c) == expected, "\(format)")
            // Unsaved objects with the equality's value and the range's bound are tested whole.
            let unsaved = try c.insertObject(forEntityName: "Reading")
            try unsaved.setValue(expected.first ?? 8, forKey: "at")
            let withUnsaved = try Self.evaluated(format, in: c)
            #expect(try c.count(for: try Self.request(format)) == withUnsaved.count, "\(format) with an unsaved object")
            try c.delete(unsaved)
        }
    }

    /// Fetches and counts of many conjunctions agree with evaluating them on every object,
    /// stored and unsaved (fixed seed; a failure prints its seed and format).
    @Test func conjunctionsAgreeWithEvaluation() throws {
        let (store, _) = try Self.makeStore()
        let c = Context(store: store)
        for i in stride(from: 1, to: 60, by: 7) {
            let o = try #require(try c.fetch(try Self.request("at == \(i)")).first)
            try o.setValue((i * 13) % 60, forKey: "at")
        }
        let extra = try c.insertObject(forEntityName: "Reading")
        try extra.setValue(33, forKey: "at")
        let seed: UInt64 = 2211
        var rng = SplitMix64(seed: seed)
        let ops = ["==", "!=", "<", "<=", ">", ">="]
        for _ in 0..<300 {
            var conjuncts: [String] = []
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                switch rng.next() % 4 {
                case 0: conjuncts.append("flag == \(rng.next() % 2 == 0 ? "YES" : "NO")")
                case 1: conjuncts.append("name BEGINSWITH 'r\(rng.next() % 6)'")
                default: conjuncts.append("at \(ops[Int(rng.next() % 6)]) \(rng.next() % 64)")
                }
            }
            let format = conjuncts.joined(separator: " AND ")
            let expected = try Self.evaluated(format, in: c)
            #expect(try c.fetch(try Self.request(format)).compactMap { $0["at"] as? Int }.sorted() == expected, "seed \(seed): \(format)")
            #expect(try c.count(for: try Self.request(format)) == expected.count, "seed \(seed): \(format)")
            let fresh = Context(store: store)
            let stored = try Self.evaluated(format, in: fresh)
            #expect(try fresh.count(for: try Self.request(format)) == stored.count, "seed \(seed): \(format) (stored only)")
        }
    }

    /// What each shape leaves to test on a stored candidate: a test that ignored
    /// `storedPredicate` and tested the whole predicate would pass the result checks above, so
    /// the plans are checked here.
    @Test func thePlanKeepsOnlyWhatTheIndexDoesNotAnswer() throws {
        let (store, _) = try Self.makeStore()
        let c = Context(store: store)
        func plan(_ format: String) throws -> QueryPlan { try c.prepare(try Self.request(format)).0 }
        func p(_ format: String) throws -> QueryPredicate { try QueryPredicate(format: format) }
        #expect(try plan("flag == NO AND at > 40").storedPredicate == (try p("flag == NO")))
        #expect(try plan("at IN {1, 2, 3} AND flag == NO").storedPredicate == (try p("flag == NO")))
        #expect(try plan("at >= 5 AND name BEGINSWITH 'r1' AND at < 20").storedPredicate == (try p("name BEGINSWITH 'r1'")))
        #expect(try plan("at IN {1, nil} AND flag == NO").storedPredicate == (try p("at IN {1, nil} AND flag == NO")))
        let both = try plan("at > 10 AND at <= 30")
        #expect(both.sourceIsExact && both.storedPredicate == nil)
        let scan = try plan("flag == NO AND name != nil")
        let whole = try p("flag == NO AND name != nil")
        #expect(!scan.sourceIsExact && scan.storedPredicate == whole)
    }

    /// A key fetch whose predicate the index answers reads no record, and its keys are those of
    /// the fetch — with and without unsaved objects.
    @Test func aKeyFetchTheIndexAnswersMatchesTheFetch() throws {
        let (store, _) = try Self.makeStore()
        let c = Context(store: store)
        let request = try Self.request("at > 10 AND at <= 30")
        #expect(try c.fetchKeys(request) == c.fetch(request).compactMap { $0.objectID?.primaryKey })
        let moved = try #require(try c.fetch(try Self.request("at == 20")).first)
        try moved.setValue(50, forKey: "at")
        let added = try c.insertObject(forEntityName: "Reading")
        try added.setValue(25, forKey: "at")
        let keys = try c.fetchKeys(request)
        let movedKey = try #require(moved.objectID?.primaryKey)
        #expect(keys.count == 20 && !keys.contains(movedKey))
        #expect(Set(keys) == Set(try c.fetch(request).compactMap { $0.objectID?.primaryKey }))
    }

    /// Items with an indexed double, an indexed URL and two compound indexes: `(name, flag)`
    /// declared first, then `code` unique.
    static func makeItems() throws -> (Store, Context) {
        let schema = Schema(entities: [
            EntityDescription(name: "Item", attributes: [
                AttributeDescription(name: "code", type: .string, isOptional: true),
                AttributeDescription(name: "name", type: .string, isOptional: true),
                AttributeDescription(name: "flag", type: .bool),
                AttributeDescription(name: "score", type: .double, isOptional: true, isIndexed: true),
                AttributeDescription(name: "homepage", type: .url, isOptional: true, isIndexed: true),
            ], indexes: [IndexDescription(["name", "flag"]), IndexDescription(["code"], isUnique: true)]),
        ])
        let store = try Store.inMemory(schema: schema)
        let c = Context(store: store)
        for i in 0..<12 {
            let item = try c.insertObject(forEntityName: "Item")
            try item.setValue("c\(i)", forKey: "code")
            try item.setValue("n\(i % 3)", forKey: "name")
            try item.setValue(i % 2 == 0, forKey: "flag")
            try item.setValue(i % 4 == 0 ? Double.nan : Double(i) / 2, forKey: "score")
            try item.setValue(URL(string: "https://site\(i).example/"), forKey: "homepage")
        }
        try c.save()
        return (store, c)
    }

    /// Comparisons whose index entries are not all matches stay tested, alone or in an AND:
    /// NaN equals nothing (yet the index holds NaN), a URL orders only against a URL (yet the
    /// index holds it as a string), and a one-element unique compound index chosen for one
    /// conjunct answers that one only.
    @Test func entriesThatDoNotMatchStayTested() throws {
        let (store, _) = try Self.makeItems()
        let c = Context(store: store)
        let all = try c.fetch(FetchRequest<ManagedObject>(entityName: "Item"))
        #expect(all.count == 12)
        let requests: [(String, QueryPredicate)] = [
            ("score == NaN", try QueryPredicate(format: "score == %@", Double.nan)),
            ("score == NaN AND flag == YES", try QueryPredicate(format: "score == %@ AND flag == YES", Double.nan)),
            ("score IN {NaN, 0.5}", try QueryPredicate(format: "score IN %@", [Double.nan, 0.5])),
            ("homepage > string", try QueryPredicate(format: "homepage > %@", "https://site5")),
            ("homepage > string AND flag == NO", try QueryPredicate(format: "homepage > %@ AND flag == NO", "https://site5")),
            ("homepage BETWEEN strings", try QueryPredicate(format: "homepage BETWEEN %@", ["https://a", "https://z"])),
            ("unique code AND name", try QueryPredicate(format: "code == 'c5' AND name == 'n0'")),
            ("unique code AND name, matching", try QueryPredicate(format: "code == 'c6' AND name == 'n0'")),
            ("score == NaN, compound-free", try QueryPredicate(format: "name == 'n0' AND flag == YES AND score == %@", Double.nan)),
        ]
        for (label, predicate) in requests {
            let expected = try all.filter { try predicate.evaluate(with: $0) }.count
            let request = FetchRequest<ManagedObject>(entityName: "Item", predicate: predicate)
            #expect(try c.fetch(request).count == expected, "\(label)")
            #expect(try c.count(for: request) == expected, "\(label)")
            #expect(try c.fetchKeys(request).count == expected, "\(label)")
        }
        // The two that match something, so the checks above are not all of empty results.
        #expect(try c.count(for: FetchRequest<ManagedObject>(entityName: "Item", predicate: try QueryPredicate(format: "code == 'c6' AND name == 'n0'"))) == 1)
        #expect(try c.count(for: FetchRequest<ManagedObject>(entityName: "Item", predicate: try QueryPredicate(format: "score IN %@", [Double.nan, 0.5]))) == 1)
    }
}
