// A context's changed objects in key order (ChangedObjects.sortedByKey), which a save validates
// and then writes: the order is kept between the two, so it must follow every object that comes,
// goes or is replaced under its key. Random changes with fixed seeds, against a dictionary; a
// failure prints its seed and step.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

/// Adds an audit entry to its context while the save validates it: the save's kept order of
/// changed objects must take the new entry in.
@Model final class AuditedTask: ManagedObject {
    var title: String = ""

    init(title: String) {
        self.title = title
    }

    override func validateForUpdate() throws {
        guard let context = managedObjectContext else { return }
        let entry = AuditEntry()
        entry.text = "changed \(title)"
        try context.insert(entry)
    }
}

@Model final class AuditEntry: ManagedObject {
    var text: String = ""
}

@Suite struct ChangedObjectsOrderTests {
    @Test(arguments: [1, 2, 3, 4] as [UInt64])
    func keyOrderFollowsEveryChange(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        let pool = (0..<48).map { _ in ManagedObject() }
        var changed: ChangedObjects = [:]
        var reference: [UInt64: ManagedObject] = [:]
        for step in 0..<3000 {
            let key = (UInt64(1 + rng.next() % 3) << 48) | (1 + rng.next() % 200)
            switch rng.next() % 8 {
            case 0..<4:
                // A new object, or another instance under a key already here.
                let object = pool[Int(rng.next() % UInt64(pool.count))]
                changed[key] = object
                reference[key] = object
            case 4..<6:
                changed.removeValue(forKey: key)
                reference.removeValue(forKey: key)
            case 6:
                // The same object set again (a change to it): the order stands as it is.
                if let object = reference[key] { changed[key] = object }
            default:
                break
            }
            // Asked often (kept) and between changes (dropped): both must match.
            if rng.next() % 3 == 0 || step == 2999 {
                let order = changed.sortedByKey()
                let expected = reference.keys.sorted()
                let same = order.count == expected.count && zip(order, expected).allSatisfy { $0 === reference[$1] }
                #expect(same, "seed \(seed), step \(step): \(order.count) objects in the kept order, \(expected.count) changed")
                if !same { return }
                #expect(changed.sortedByKey().elementsEqual(order, by: ===), "seed \(seed), step \(step): asked again")
            }
        }
    }

    /// The save path: validation inserts objects after the order was taken; the commit writes
    /// them too (a kept order that missed them would drop them without a word).
    @Test func objectsInsertedDuringValidationAreSaved() throws {
        let store = try Store.inMemory(models: [AuditedTask.self, AuditEntry.self])
        let context = Context(store: store)
        let tasks = (0..<5).map { AuditedTask(title: "task \($0)") }
        for t in tasks { try context.insert(t) }
        try context.save()
        for t in tasks { t.title += " done" }
        try context.save()
        let check = Context(store: store)
        let texts = try check.fetch(FetchRequest<AuditEntry>()).map(\.text).sorted()
        #expect(texts == (0..<5).map { "changed task \($0) done" })
        #expect(try check.fetch(FetchRequest<AuditedTask>()).map(\.title).sorted() == (0..<5).map { "task \($0) done" })
    }
}
