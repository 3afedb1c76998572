// Counts whose candidates come from an index and whose other conditions are tested on the
// records' bytes (CandidateReading.countPassing): over an entity and its subentity (the keys of
// each are counted in a run of their own), with unsaved inserts, edits and deletes in the
// counting context, against the same conditions evaluated in Swift on a model of the objects.
// Fixed seeds; a failure prints its seed and predicate.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct IndexedCountTests {
    @Model class Entry: ManagedObject {
        @Attribute(.indexed) var day: Int = 0
        var done: Bool = false
        var label: String = ""
    }

    @Model final class Chore: Entry {
        var effort: Int = 0
    }

    /// What the test knows of one object.
    struct Known {
        var day: Int
        var done: Bool
        var label: String
        var isChore: Bool
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func indexedCountsMatchTheModel(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let store = try Store.inMemory(models: [Entry.self, Chore.self])
        let writer = Context(store: store)
        var objects: [Entry] = []
        var known: [ObjectIdentifier: Known] = [:]
        func make(_ context: Context) throws -> Entry {
            let isChore = rng.next() % 2 == 0
            let e: Entry = isChore ? Chore() : Entry()
            e.day = Int(rng.next() % 100)
            e.done = rng.next() % 3 == 0
            e.label = ["apple", "avocado", "banana", "cherry", ""][Int(rng.next() % 5)]
            try context.insert(e)
            known[ObjectIdentifier(e)] = Known(day: e.day, done: e.done, label: e.label, isChore: isChore)
            return e
        }
        for _ in 0..<600 { objects.append(try make(writer)) }
        try writer.save()

        // The counting context: saved objects fetched into it, some changed, deleted or added.
        let context = Context(store: store)
        var live: [Known] = []
        for e in try context.fetch(FetchRequest<Entry>()) {
            switch rng.next() % 10 {
            case 0:
                try context.delete(e)
            case 1:
                e.day = Int(rng.next() % 100)
                e.done.toggle()
                live.append(Known(day: e.day, done: e.done, label: e.label, isChore: e is Chore))
            default:
                live.append(Known(day: e.day, done: e.done, label: e.label, isChore: e is Chore))
            }
        }
        for _ in 0..<40 {
            let e = try make(context)
            live.append(known[ObjectIdentifier(e)] ?? Known(day: 0, done: false, label: "", isChore: false))
        }

        for round in 0..<60 {
            let day = Int(rng.next() % 100)
            let (format, test): (String, (Known) -> Bool) = switch round % 4 {
            case 0: ("day >= %@ AND done == NO", { $0.day >= day && !$0.done })
            case 1: ("day < %@ AND label BEGINSWITH 'a'", { $0.day < day && $0.label.hasPrefix("a") })
            case 2: ("day > %@ AND done == YES AND label != ''", { $0.day > day && $0.done && !$0.label.isEmpty })
            default: ("day <= %@ AND label == 'banana'", { $0.day <= day && $0.label == "banana" })
            }
            let predicate = try QueryPredicate(format: format, day)
            let label = "seed \(seed), \(format) with \(day)"
            let all = try context.count(for: FetchRequest<Entry>(predicate: predicate))
            #expect(all == live.filter(test).count, "\(label): every entry")
            #expect(all == (try context.fetch(FetchRequest<Entry>(predicate: predicate)).count), "\(label): count and fetch")
            let chores = try context.count(for: FetchRequest<Chore>(predicate: predicate))
            #expect(chores == live.filter { $0.isChore && test($0) }.count, "\(label): chores")
            var only = FetchRequest<Entry>(predicate: predicate)
            only.includesSubentities = false
            #expect(try context.count(for: only) == live.filter { !$0.isChore && test($0) }.count, "\(label): entries alone")
        }
        // Saved as they stand, counted by a new context: the stored records alone.
        try context.save()
        let fresh = Context(store: store)
        for day in [0, 17, 50, 99] {
            let predicate = try QueryPredicate(format: "day >= %@ AND done == NO", day)
            #expect(try fresh.count(for: FetchRequest<Entry>(predicate: predicate)) == live.filter { $0.day >= day && !$0.done }.count,
                    "seed \(seed), saved, day >= \(day)")
        }
    }
}
