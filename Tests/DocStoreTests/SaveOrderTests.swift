// The order in which a save goes through its changed objects (ChangedObjects.sortedByKey): key
// order, for validation and for the writes alike, taken afresh by each — so objects a
// `validateForUpdate` inserts are written too, and validation problems are listed by key
// whatever order the objects were changed in.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

/// Adds an audit entry to its context while the save validates it; refuses the title "bad".
@Model final class AuditedTask: ManagedObject {
    var title: String = ""

    init(title: String) {
        self.title = title
    }

    override func validateForInsert() throws {
        if title.hasPrefix("bad") { throw DocStoreError(.validation, "a bad title", property: "title") }
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

@Suite struct SaveOrderTests {
    /// Validation inserts objects after the save took its order; the writes take theirs
    /// afterwards and include them (an order kept from before would drop them without a word).
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

    /// Problems come in key order, not in the order the objects were inserted or hashed.
    @Test func validationProblemsAreListedByKey() throws {
        let store = try Store.inMemory(models: [AuditedTask.self, AuditEntry.self])
        let context = Context(store: store)
        let tasks = (0..<40).map { AuditedTask(title: $0 % 3 == 0 ? "bad \($0)" : "good \($0)") }
        for t in tasks.reversed() { try context.insert(t) }
        let error = #expect(throws: DocStoreError.self) { try context.save() }
        let listed = error?.problems.map(\.entity) ?? []
        let expected = tasks.filter { $0.title.hasPrefix("bad") }.sorted { $0.key < $1.key }.map { "AuditedTask/\($0.key & PrimaryKey.sequenceMask)" }
        #expect(listed.count == 14)
        #expect(listed == expected, "\(listed)")
    }
}
