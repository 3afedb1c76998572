// KeySet (a to-many relationship's members, additions and removals) against Set<UInt64>: random
// inserts, removals, lookups, intersections, subtractions and emptyings over the key patterns primary keys
// take (ObjectRegistryTests': consecutive, strided by a power of two, several entities in the high
// bits, random) and key 0 and the whole range — with fixed seeds; a failure prints its seed and step. After every step the KeySet must
// hold exactly the Set's keys, answer every lookup as it does, and iterate each key once; copies
// taken along the way must not change when the original does.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreCore

@Suite struct KeySetTests {
    /// The registry's key patterns (consecutive, strided, four entities, random), then a random
    /// pattern that includes key 0, then keys from the whole range.
    static func key(_ pattern: Int, _ i: UInt64, _ rng: inout SplitMix64) -> UInt64 {
        switch pattern {
        case 0..<4: return ObjectRegistryTests.key(pattern, i, &rng)
        case 4: return i == 7 ? 0 : rng.next() % 700 + 1
        default: return rng.next()
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func matchesASetUnderRandomChanges(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        for pattern in 0..<6 {
            var set = KeySet()
            var model = Set<UInt64>()
            var copies: [(KeySet, Set<UInt64>)] = []
            for step in 0..<3_000 {
                let k = Self.key(pattern, rng.next() % 600, &rng)
                let where_ = "seed \(seed), pattern \(pattern), step \(step), key \(k)"
                switch rng.next() % 10 {
                case 0..<5:
                    let a = set.insert(k).inserted, b = model.insert(k).inserted
                    #expect(a == b, "insert: \(where_)")
                case 5..<8:
                    #expect((set.remove(k) != nil) == (model.remove(k) != nil), "remove: \(where_)")
                case 8:
                    let other = Set((0..<40).map { _ in Self.key(pattern, rng.next() % 600, &rng) })
                    switch rng.next() % 5 {
                    case 0, 1:
                        set.formIntersection(KeySet(other))
                        model.formIntersection(other)
                    case 2, 3:
                        set.subtract(other)
                        model.subtract(other)
                    default:
                        set.removeAll()
                        model.removeAll()
                    }
                default:
                    if copies.count < 4 { copies.append((set, model)) }
                }
                #expect(set.contains(k) == model.contains(k), "contains: \(where_)")
                #expect(set.count == model.count, "count: \(where_)")
                if step % 97 == 0 || step == 2_999 {
                    let listed = Array(set)
                    #expect(listed.count == model.count && Set(listed) == model, "contents: \(where_)")
                    #expect(set == KeySet(model), "equality: \(where_)")
                    for (copy, snapshot) in copies {
                        #expect(Set(copy) == snapshot && copy.count == snapshot.count, "a copy changed: \(where_)")
                    }
                }
            }
            for key in model { set.remove(key) }
            #expect(set.isEmpty && Array(set).isEmpty && !set.contains(1), "seed \(seed), pattern \(pattern): all removed")
        }
    }

    /// Emptying keeps a small table and lets a large one go; either way the set is empty and
    /// takes keys again, and a copy taken before keeps its keys.
    @Test(arguments: [10, 5_000])
    func removeAllEmptiesTheSet(keys: Int) {
        var set = KeySet((1...UInt64(keys)).map { $0 * 3 })
        set.insert(0)
        let copy = set
        set.removeAll()
        #expect(set.isEmpty && Array(set).isEmpty && !set.contains(3) && !set.contains(0))
        #expect(copy.count == keys + 1 && copy.contains(0) && copy.contains(3) && copy.contains(UInt64(keys) * 3))
        #expect(set.insert(0).inserted && set.insert(6).inserted && set.count == 2)
        #expect(Set(set) == [0, 6] && !set.contains(3))
    }

    @Test func zeroIsAKeyLikeAnyOther() {
        var set: KeySet = [0, 5]
        #expect(set.count == 2 && set.contains(0) && set.contains(5))
        #expect(!set.insert(0).inserted)
        #expect(set.remove(0) == 0 && !set.contains(0) && set.count == 1)
        #expect(set.remove(0) == nil)
        #expect(Array(set) == [5])
    }
}
