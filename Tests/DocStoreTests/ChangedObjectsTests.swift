// ChangedObjects (a context's unsaved objects, with per-kind live keys and value indexes) against a
// plain model, with objects made by hand: after every step of a fixed-seed random run of sets,
// removals, deletions, undeletions, value changes and lookups, the live objects of each kind, the
// keys of each kind and every value lookup answer as the model does; a kind that loses its last
// object drops its value indexes and a later lookup finds the kind's new objects; and a copy taken
// along the way (as a fetch's closure takes one) keeps answering as the model did when it was
// taken.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreCore

@Suite struct ChangedObjectsTests {
    /// An object of `kind` with `value` in its one slot, made without a context.
    static func object(kind: UInt32, sequence: UInt64, value: Int64) -> ManagedObject {
        let object = ManagedObject()
        object.key = PrimaryKey.make(entity: kind, sequence: sequence)
        object.values = [.int(value)]
        return object
    }

    /// What a lookup of `value` in slot 0 must return among `objects`: the live ones holding it.
    static func expected(_ objects: [UInt64: ManagedObject], kind: UInt32, value: Int64) -> Set<UInt64> {
        Set(objects.values.filter {
            PrimaryKey.entity(of: $0.key) == kind && !$0.isDeleted && $0.values.first == .int(value)
        }.map(\.key))
    }

    static func lookup(_ changed: inout ChangedObjects, kind: UInt32, value: Int64) -> Set<UInt64> {
        let point = Context.indexValue(.int(value)) ?? []
        // The caller of a lookup loads what objectsToEncode names; these objects are loaded.
        _ = changed.objectsToEncode(kind: kind, slot: 0)
        // A lookup may return objects whose value shares a hash; the fetch tests each one.
        return Set(changed.liveObjects(of: kind, slot: 0, encodedAs: [point]).filter { $0.values.first == .int(value) }.map(\.key))
    }

    /// `sparse`: lookups and checks only every 150 steps, so that kinds gather inserts,
    /// deletions, undeletions and removals before the first lookup that tracks their live keys.
    @Test(arguments: [UInt64(1), 2, 3, 4], [false, true])
    func answersAsAModel(seed: UInt64, sparse: Bool) {
        var rng = SplitMix64(seed: seed)
        func pick(_ n: UInt64) -> UInt64 { rng.next() % n }
        var changed = ChangedObjects()
        var model: [UInt64: ManagedObject] = [:]   // the objects in `changed`
        var pool: [ManagedObject] = []             // every object made, in or out
        var copies: [(ChangedObjects, Set<UInt64>)] = []
        var kindsEmptied = 0
        for step in 0..<1_500 {
            let kind = UInt32(pick(3) + 1)
            let place = "seed \(seed), step \(step)\(sparse ? ", sparse" : "")"
            let checks = !sparse || step % 150 == 149
            switch pick(10) {
            case 0...2:   // a new object, or one made before coming back
                if pool.isEmpty || pick(3) > 0 {
                    let o = Self.object(kind: kind, sequence: UInt64(pool.count + 1), value: Int64(pick(6)))
                    pool.append(o)
                    changed[o.key] = o
                    model[o.key] = o
                } else {
                    let o = pool[Int(pick(UInt64(pool.count)))]
                    changed[o.key] = o
                    model[o.key] = o
                }
            case 3, 4:   // removed (saved or rolled back): now and then every object of a kind
                if pick(6) == 0 {
                    let all = model.keys.filter { PrimaryKey.entity(of: $0) == kind }
                    for key in all {
                        #expect(changed.removeValue(forKey: key) != nil, "removal: \(place)")
                        model[key] = nil
                    }
                    if !all.isEmpty { kindsEmptied += 1 }
                    break
                }
                guard let key = model.keys.sorted().dropFirst(Int(pick(UInt64(max(model.count, 1))))).first else { continue }
                let wasLast = model.keys.filter { PrimaryKey.entity(of: $0) == PrimaryKey.entity(of: key) }.count == 1
                #expect(changed.removeValue(forKey: key) != nil, "removal: \(place)")
                model[key] = nil
                if wasLast { kindsEmptied += 1 }
            case 5:   // deleted, or brought back
                guard let o = model.values.sorted(by: { $0.key < $1.key }).dropFirst(Int(pick(UInt64(max(model.count, 1))))).first else { continue }
                if o.isDeleted {
                    o.flags.remove(.deleted)
                    changed.noteUndeleted(o)
                } else {
                    o.flags.insert(.deleted)
                    changed.noteDeleted(o)
                }
            case 6, 7:   // a value changes (the context says so first)
                guard let o = model.values.sorted(by: { $0.key < $1.key }).dropFirst(Int(pick(UInt64(max(model.count, 1))))).first else { continue }
                changed.noteValuesMayChange(o.key)
                o.values = [.int(Int64(pick(6)))]
            case 8:
                let value = Int64(pick(6))
                guard checks else { continue }
                #expect(Self.lookup(&changed, kind: kind, value: value) == Self.expected(model, kind: kind, value: value), "lookup: \(place)")
            default:
                if copies.count < 3 { copies.append((changed, Set(model.keys))) }
            }
            for k in UInt32(1)...3 where checks {
                // Sparse: every other checkpoint a lookup by value is the first to read each
                // kind's live keys, the others `liveObjects(of:)`.
                if sparse && step / 150 % 2 == 1 {
                    let value = Int64(pick(6))
                    #expect(Self.lookup(&changed, kind: k, value: value) == Self.expected(model, kind: k, value: value), "first lookup: \(place)")
                }
                let live = Set(changed.liveObjects(of: [k]).map(\.key))
                let wanted = Set(model.values.filter { PrimaryKey.entity(of: $0.key) == k && !$0.isDeleted }.map(\.key))
                #expect(live == wanted, "live objects of kind \(k): \(place)")
                #expect(changed.keys(of: [k]) == Set(model.keys.filter { PrimaryKey.entity(of: $0) == k }), "keys of kind \(k): \(place)")
                #expect(changed.containsAny(of: [k]) == model.keys.contains { PrimaryKey.entity(of: $0) == k }, "containsAny \(k): \(place)")
            }
        }
        #expect(kindsEmptied >= 10, "seed \(seed): a kind lost its last object only \(kindsEmptied) times")
        // Copies keep the keys they had. (Their objects are shared, so their flags are today's:
        // only the keys are checked.)
        for (copy, keys) in copies {
            #expect(Set(copy.values.map(\.key)) == keys, "seed \(seed): a copy changed")
        }
    }

    /// The case a review named: a kind whose last object goes after a lookup made its value
    /// index, then a new object of the kind with the value looked up.
    @Test func aKindEmptiedAfterALookupFindsItsNextObject() {
        var changed = ChangedObjects()
        let first = Self.object(kind: 1, sequence: 1, value: 7)
        changed[first.key] = first
        #expect(Self.lookup(&changed, kind: 1, value: 7) == [first.key])
        changed.removeValue(forKey: first.key)
        #expect(Self.lookup(&changed, kind: 1, value: 7).isEmpty)
        let second = Self.object(kind: 1, sequence: 2, value: 7)
        changed[second.key] = second
        #expect(Self.lookup(&changed, kind: 1, value: 7) == [second.key])
        let copy = changed
        let third = Self.object(kind: 1, sequence: 3, value: 7)
        changed[third.key] = third
        #expect(Self.lookup(&changed, kind: 1, value: 7) == [second.key, third.key])
        var copied = copy
        #expect(Self.lookup(&copied, kind: 1, value: 7) == [second.key], "the copy sees a later insert")
    }

    /// Objects removed and added again many times before a kind's first lookup (its untracked
    /// keys compacted along the way): the first lookup still finds exactly the live objects.
    @Test func aKindChurnedBeforeItsFirstLookupAnswersAsAModel() {
        var changed = ChangedObjects()
        let objects = (1...5).map { Self.object(kind: 2, sequence: UInt64($0), value: Int64($0 % 2)) }
        for o in objects { changed[o.key] = o }
        for round in 0..<1_000 {
            let o = objects[round % 5]
            changed.removeValue(forKey: o.key)
            if round % 7 == 0 { o.flags.insert(.deleted) } else { o.flags.remove(.deleted) }
            if round % 11 != 0 { changed[o.key] = o }
        }
        // Then one object alone, so that the others' keys were added before the compactions.
        for round in 0..<500 {
            changed.removeValue(forKey: objects[0].key)
            if round % 3 != 0 { changed[objects[0].key] = objects[0] }
        }
        let here = objects.filter { changed[$0.key] != nil }
        #expect(Set(changed.liveObjects(of: [2]).map(\.key)) == Set(here.filter { !$0.isDeleted }.map(\.key)))
        #expect(Self.lookup(&changed, kind: 2, value: 1) == Set(here.filter { !$0.isDeleted && $0.values.first == .int(1) }.map(\.key)))
    }
}
