// The context's object registry (ObjectRegistry) against a Dictionary: random adds, lookups,
// replacements and removals over key patterns primary keys take — consecutive, strided by
// powers of two (which a hash of the low bits would pile into one run), several entities in the
// high bits, and random — with fixed seeds; a failure prints its seed and step. After every step
// the registry must hold exactly the dictionary's keys and objects, and iterate them all once.
// The context tests then check uniquing through it: one object per key, however objects come and
// go.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreCore

@Suite struct ObjectRegistryTests {
    /// Keys of one pattern: `pattern` 0 consecutive, 1 a stride of 1024, 2 four entities, 3 random.
    static func key(_ pattern: Int, _ i: UInt64, _ rng: inout SplitMix64) -> UInt64 {
        switch pattern {
        case 0: return 1 + i
        case 1: return (1 + i) << 10
        case 2: return (UInt64(1 + i % 4) << 48) | (1 + i / 4)
        default: return rng.next() % 512 + 1
        }
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func matchesADictionaryUnderRandomChanges(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        // The registry holds objects unretained: the test keeps them alive here.
        let pool = (0..<64).map { _ in ManagedObject() }
        var registry = ObjectRegistry()
        var reference: [UInt64: Int] = [:]
        let pattern = Int(seed % 4)
        for step in 0..<4000 {
            let k = Self.key(pattern, rng.next() % 600, &rng)
            let which = Int(rng.next() % UInt64(pool.count))
            switch rng.next() % 10 {
            case 0..<5:
                registry[k] = Unmanaged.passUnretained(pool[which])
                reference[k] = which
            case 5..<8:
                let removed = registry.removeValue(forKey: k)
                let expected = reference.removeValue(forKey: k)
                #expect(removed.map { $0.takeUnretainedValue() } === expected.map { pool[$0] }, "seed \(seed) step \(step): removal of \(k)")
            case 8:
                registry[k] = nil
                reference[k] = nil
            default:
                registry.reserveCapacity(Int(rng.next() % 2000))
            }
            let probe = Self.key(pattern, rng.next() % 600, &rng)
            #expect(registry[probe]?.takeUnretainedValue() === reference[probe].map { pool[$0] }, "seed \(seed) step \(step): lookup of \(probe)")
            #expect(registry.count == reference.count, "seed \(seed) step \(step): count")
            if step % 100 == 0 || step == 3999 {
                var seen: [UInt64: Int] = [:]
                for (key, value) in registry {
                    #expect(seen[key] == nil, "seed \(seed) step \(step): \(key) iterated twice")
                    seen[key] = pool.firstIndex { $0 === value.takeUnretainedValue() }
                }
                #expect(seen == reference, "seed \(seed) step \(step): contents")
                for (key, index) in reference {
                    #expect(registry[key]?.takeUnretainedValue() === pool[index], "seed \(seed) step \(step): \(key) not found")
                }
            }
        }
        for key in reference.keys { registry.removeValue(forKey: key) }
        var iterator = registry.makeIterator()
        #expect(registry.isEmpty && iterator.next() == nil)
    }

    @Test func findOrMakeMakesOnlyForAMissingKey() {
        var registry = ObjectRegistry()
        let first = ManagedObject()
        var made = 0
        let a = registry.object(forKey: 7) { made += 1; return first }
        let b = registry.object(forKey: 7) { made += 1; return ManagedObject() }
        #expect(a === first && b === first && made == 1 && registry.count == 1)
    }

    @Test func aContextKeepsOneObjectPerKeyWhileObjectsComeAndGo() throws {
        let dir = TemporaryDirectory("ctx")
        defer { withExtendedLifetime(dir) {} }
        let url = URL(fileURLWithPath: dir.file("ctx.docstore"))
        let store = try Store(url: url, schema: ContextTests.schema)
        let context = Context(store: store)
        for i in 0..<300 { _ = try ContextTests().note(context, "n\(i)") }
        try context.save()
        var keep: [ManagedObject] = []
        for round in 0..<3 {
            let all = try context.fetch(entityName: "Note")
            #expect(all.count == 300)
            // Every other round keeps a third of them; the rest are released (and unregistered).
            if round % 2 == 0 { keep = all.enumerated().filter { $0.offset % 3 == 0 }.map(\.element) } else { keep = [] }
            let again = try context.fetch(entityName: "Note")
            #expect(Set(again.map(ObjectIdentifier.init)) == Set(all.map(ObjectIdentifier.init)), "round \(round): a second fetch made other objects")
        }
        let kept = Set(keep.map(ObjectIdentifier.init))
        let fetched = Set(try context.fetch(entityName: "Note").map(ObjectIdentifier.init))
        #expect(kept.isSubset(of: fetched))
        #expect(context.registeredObjects.count >= keep.count)
    }
}
