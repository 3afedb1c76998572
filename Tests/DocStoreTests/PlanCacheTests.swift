// A context's plans kept per predicate shape (PlanCache): a fetch of a shape planned before is
// planned by following the kept plan with its own constants. These tests pin that such a plan
// is the plan the planner makes for it — compared through `explain` with a context that has no
// plans kept — and that the fetch returns the same objects, for random predicates whose
// constants change kind, fit or do not fit their index (an Int16 out of range, nil on a unique
// index), are NaN, or make IN lists that collapse; and that kept plans are used at all.

import DocStore
import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreCore

@Suite struct PlanCacheTests {
    /// Items with indexed attributes of several kinds, a unique one, and an unindexed one.
    static func fixture() throws -> Store {
        let schema = Schema(entities: [
            EntityDescription(name: "Item", attributes: [
                AttributeDescription(name: "small", type: .int16, isIndexed: true),
                AttributeDescription(name: "code", type: .string, isOptional: true, isUnique: true),
                AttributeDescription(name: "rating", type: .double, isOptional: true, isIndexed: true),
                AttributeDescription(name: "name", type: .string, isIndexed: true),
                AttributeDescription(name: "day", type: .date, isIndexed: true),
                AttributeDescription(name: "count", type: .int64),
            ]),
        ])
        let store = try Store.inMemory(schema: schema)
        let c = Context(store: store)
        for i in 0..<40 {
            let item = try c.insertObject(forEntityName: "Item")
            try item.setValue(i % 7, forKey: "small")
            try item.setValue(i % 3 == 0 ? nil : "c\(i)", forKey: "code")
            try item.setValue(i == 5 ? Double.nan : i % 4 == 0 ? nil : Double(i % 6) / 2, forKey: "rating")
            try item.setValue(["ant", "bee", "cat", "antelope", "b"][i % 5], forKey: "name")
            try item.setValue(Date(timeIntervalSinceReferenceDate: Double(i % 9) * 10), forKey: "day")
            try item.setValue(i, forKey: "count")
        }
        try c.save()
        return store
    }

    /// Random predicates of a few shapes, each shape's constants drawn again every time.
    struct Shapes {
        var rng: SplitMix64

        mutating func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }

        mutating func constant(for name: String) -> Any? {
            switch name {
            case "small": return pick([3, 6, 0, 100_000, -40_000, 2.5, nil] as [Any?])
            case "code": return pick(["c1", "c4", "zz", nil, 7] as [Any?])
            case "rating": return pick([0.5, 1.0, Double.nan, 2, nil] as [Any?])
            case "name": return pick(["ant", "b", "cat", "", nil] as [Any?])
            case "day": return pick([Date(timeIntervalSinceReferenceDate: 20), Date(timeIntervalSinceReferenceDate: 55), nil] as [Any?])
            default: return pick([3, 17, nil] as [Any?])
            }
        }

        /// A placeholder's attribute, and whether it takes a list (IN).
        typealias Slot = (name: String, isList: Bool)

        mutating func comparison() -> (String, [Slot]) {
            let name = pick(["small", "code", "rating", "name", "day", "count"])
            switch rng.next() % 6 {
            case 0: return ("\(name) IN %@", [(name, true)])
            case 1 where name == "name" || name == "code": return ("\(name) BEGINSWITH %@", [(name, false)])
            case 2: return ("\(name) \(pick([">", ">=", "<", "<="])) %@", [(name, false)])
            default: return ("\(name) \(pick(["==", "==", "!="])) %@", [(name, false)])
            }
        }

        /// A format and its placeholders: one comparison, or an AND of two or three (two bounds
        /// of one attribute among them now and then).
        mutating func predicate() -> (String, [Slot]) {
            let n = Int(rng.next() % 3) + 1
            var parts: [String] = []
            var slots: [Slot] = []
            for _ in 0..<n {
                let (format, more) = comparison()
                parts.append(format)
                slots += more
            }
            if n == 2 && rng.next() % 3 == 0 {
                let name = pick(["small", "rating", "day", "name"])
                parts = ["\(name) >= %@", "\(name) < %@"]
                slots = [(name, false), (name, false)]
            }
            return (parts.joined(separator: " AND "), slots)
        }

        /// Constants for the placeholders, drawn anew.
        mutating func arguments(_ slots: [Slot]) -> [Any?] {
            slots.map { slot in
                slot.isList ? [constant(for: slot.name), constant(for: slot.name)].compactMap { $0 } : constant(for: slot.name)
            }
        }
    }

    /// Each random predicate's plan from a context that keeps plans (and has seen its shape
    /// before, mostly) is the plan of a context that has none, and so are its matches.
    @Test(arguments: [UInt64(1), 2, 3])
    func keptPlansAreThePlannersPlans(seed: UInt64) throws {
        let store = try Self.fixture()
        let warm = Context(store: store)
        var rng = Shapes(rng: SplitMix64(seed: seed))
        var compared = 0
        var last: (String, [Shapes.Slot]) = ("", [])
        for step in 0..<400 {
            // Each format is fetched with three draws of its constants: its shape comes again.
            let (format, slots) = step % 3 == 0 ? rng.predicate() : last
            last = (format, slots)
            guard let predicate = try? QueryPredicate(format: format, argumentArray: rng.arguments(slots)) else { continue }
            var request = FetchRequest<ManagedObject>(entityName: "Item", predicate: predicate)
            switch step / 3 % 3 {
            case 1: request.sortDescriptors = [SortKey("day")]
            case 2: (request.sortDescriptors, request.fetchLimit) = ([SortKey("small", ascending: false)], 3)
            default: break
            }
            let cold = Context(store: store)
            let expected: String
            do { expected = try cold.explain(request) } catch {
                // A predicate the planner refuses is refused from a kept plan too.
                #expect(throws: DocStoreError.self, "seed \(seed) step \(step): \(predicate)") { try warm.explain(request) }
                continue
            }
            let explained = try warm.explain(request)
            #expect(explained == expected, "seed \(seed) step \(step): \(predicate)\nkept: \(explained)\nplanner: \(expected)")
            let keys = try warm.fetch(request).map(\.objectID)
            #expect(keys == (try cold.fetch(request).map(\.objectID)), "seed \(seed) step \(step): \(predicate)")
            compared += 1
        }
        #expect(compared > 300, "seed \(seed): only \(compared) predicates compared")
        #expect(warm.planCache.hits > 150, "seed \(seed): \(warm.planCache.hits) plans followed a kept one")
    }

    /// A constant that does not fit its index (an Int16 out of range) after one that did: the
    /// fetch is planned in full — a scan that finds nothing — rather than bounded by a value the
    /// index cannot hold; and a lookup after it uses the index again.
    @Test func aConstantThatDoesNotFitIsPlannedInFull() throws {
        let store = try Self.fixture()
        let c = Context(store: store)
        func request(_ value: Any) throws -> FetchRequest<ManagedObject> {
            FetchRequest(entityName: "Item", predicate: try QueryPredicate(format: "small == %@", value))
        }
        #expect(try c.fetch(request(3)).count == 6)
        let hits = c.planCache.hits
        #expect(try c.explain(request(100_000)).contains("scan of every Item"))
        #expect(try c.fetch(request(100_000)).isEmpty)
        #expect(try c.explain(request(4)).contains("index"))
        #expect(try c.fetch(request(4)).count == 6)
        #expect(c.planCache.hits > hits)
    }

    /// The planner tells a negative fetch limit from none (only none skips the sort key's
    /// index), so a kept plan of one is not used for the other.
    @Test func aNegativeLimitIsNotPlannedAsNone() throws {
        let store = try Self.fixture()
        let warm = Context(store: store)
        for limit in [0, -1, 0, 5, -1, 0] {
            var request = FetchRequest<ManagedObject>(entityName: "Item", predicate: try QueryPredicate(format: "count > %@", limit + 3),
                                                      sortDescriptors: [SortKey("small")])
            request.fetchLimit = limit
            let expected = try Context(store: store).explain(request)
            #expect(try warm.explain(request) == expected, "limit \(limit)")
        }
        #expect(warm.planCache.hits >= 3)
    }

    /// NaN equals nothing, though the index holds it: after `rating == 1.0` (answered by the
    /// index), `rating == NaN` from the kept plan tests its candidates, and matches none.
    @Test func nanIsTestedFromAKeptPlan() throws {
        let store = try Self.fixture()
        let c = Context(store: store)
        let one = FetchRequest<ManagedObject>(entityName: "Item", predicate: try QueryPredicate(format: "rating == %@", 1.0))
        #expect(try c.explain(one).contains("answered by the index"))
        let nan = FetchRequest<ManagedObject>(entityName: "Item", predicate: try QueryPredicate(format: "rating == %@", Double.nan))
        let hits = c.planCache.hits
        #expect(try c.explain(nan).contains("tested on each candidate"))
        #expect(c.planCache.hits == hits + 1)
        #expect(try c.fetch(nan).isEmpty)
    }
}
