// A delete that fails half-way leaves the context exactly as it was (Context+Delete: the
// delete's journal). The failure here is real: a folder's cascade reaches a note another context
// deleted and saved meanwhile, whose row is gone, so `delete` throws `.objectDeleted` after it
// has already deleted the folder and some of its notes and taken them out of their tags — on
// both loaded to-many sets (an ordered one among them) and a tag's unloaded one, whose removals
// are only recorded. Afterwards every object's flags and values and every relationship's state,
// an unsaved addition included, must be what they were; a save then writes just the earlier
// unsaved work.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct FailedDeleteTests {
    /// Every registered object's flags, values and to-many states, as text — not the values of
    /// `faults` (objects that were faults before: the delete may have loaded them, which
    /// changes nothing), nor a to-many state that is unloaded and unchanged (as good as none).
    static func describe(_ context: Context, faults: Set<UInt64>) -> [String] {
        var out: [String] = []
        for object in context.registeredObjects {
            var line = "\(object.entityName ?? "?")/\(object.key & PrimaryKey.sequenceMask) flags \(object.flags.subtracting(.fault).rawValue)"
            if !faults.contains(object.key) { line += " values \(object.values)" }
            for (slot, state) in object.toMany ?? ToManyStates() {
                if state.members == nil && state.added.isEmpty && state.removed.isEmpty && !state.orderChanged { continue }
                line += " [\(slot): members \(state.members.map { "\($0)" } ?? "unloaded") added \(state.added.sorted()) removed \(state.removed.sorted()) order \(state.orderChanged) new \(state.isNew)]"
            }
            out.append(line)
        }
        return out.sorted()
    }

    static func one(_ context: Context, _ entity: String, _ format: String, _ value: String) throws -> ManagedObject {
        let found = try context.fetch(FetchRequest<ManagedObject>(entityName: entity, predicate: try QueryPredicate(format: format, value)))
        guard let object = found.first else { throw DocStoreError(.unknownProperty, "no \(entity) \(value)") }
        return object
    }

    @Test func aDeleteThatFailsHalfWayLeavesTheContextAsItWas() throws {
        let dir = TemporaryDirectory("ctx")
        defer { withExtendedLifetime(dir) {} }
        let url = URL(fileURLWithPath: dir.file("ctx.docstore"))
        let store = try Store(url: url, schema: ContextTests.schema)
        let setup = Context(store: store)
        let inbox = try ContextTests().folder(setup, "Inbox")
        let red = try setup.insertObject(forEntityName: "Tag")
        try red.setValue("red", forKey: "name")
        let blue = try setup.insertObject(forEntityName: "Tag")
        try blue.setValue("blue", forKey: "name")
        for i in 1...5 {
            let note = try ContextTests().note(setup, "n\(i)", in: inbox)
            try note.setValue(Set(i == 5 ? [red, blue] : [red]), forKey: "tags")   // n5 is cascaded first
        }
        try setup.save()

        // Context A: the folder's (ordered) notes and red's notes loaded, blue's not; an unsaved
        // note tagged blue (a pending addition on blue's unloaded side).
        let a = Context(store: store)
        let folder = try Self.one(a, "Folder", "name == %@", "Inbox")
        let notes = try #require(try folder.value(forKey: "notes") as? [ManagedObject])
        #expect(notes.count == 5)
        let redA = try Self.one(a, "Tag", "name == %@", "red")
        #expect((try redA.value(forKey: "notes") as? Set<ManagedObject>)?.count == 5)
        let blueA = try Self.one(a, "Tag", "name == %@", "blue")
        let extra = try ContextTests().note(a, "unsaved")
        try extra.setValue(Set([blueA]), forKey: "tags")

        // Context B deletes the third note; A still holds it as a fault.
        let b = Context(store: store)
        try b.delete(try Self.one(b, "Note", "title == %@", "n3"))
        try b.save()

        let faults = Set(a.registeredObjects.filter(\.isFault).map(\.key))
        let before = Self.describe(a, faults: faults)
        let error = #expect(throws: DocStoreError.self) { try a.delete(folder) }
        #expect(error?.code == .objectDeleted, "\(String(describing: error))")
        let after = Self.describe(a, faults: faults).filter { !$0.hasPrefix("Note/3 ") }   // the gone note: invalidated now
        #expect(after == before.filter { !$0.hasPrefix("Note/3 ") })
        #expect(!folder.isDeleted && notes.allSatisfy { !$0.isDeleted })
        if let slot = blueA.entityInfo?.property(named: "notes")?.slot {
            #expect(blueA.toMany?[slot]?.removed.isEmpty ?? true, "blue's unloaded notes kept a removal of the failed delete")
        }

        // A save writes only the unsaved note; the folder and its notes are all still stored.
        try a.save()
        let check = Context(store: store)
        let stored = try #require(try Self.one(check, "Folder", "name == %@", "Inbox").value(forKey: "notes") as? [ManagedObject])
        #expect(try stored.map { try $0.value(forKey: "title") as? String } == ["n1", "n2", "n4", "n5"])
        let redNotes = try #require(try Self.one(check, "Tag", "name == %@", "red").value(forKey: "notes") as? Set<ManagedObject>)
        #expect(Set(try redNotes.map { try $0.value(forKey: "title") as? String }) == ["n1", "n2", "n4", "n5"])
        let blueNotes = try #require(try Self.one(check, "Tag", "name == %@", "blue").value(forKey: "notes") as? Set<ManagedObject>)
        #expect(Set(try blueNotes.map { try $0.value(forKey: "title") as? String }) == ["n5", "unsaved"])
    }
}
