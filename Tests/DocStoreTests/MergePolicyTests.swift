// Optimistic locking and merge policies (Context+Conflicts.swift K1–K5): a save that touches an
// object changed or deleted in the store since this context read it is a conflict; each policy
// picks the expected winner per property; relationships stay consistent on both sides;
// unique-constraint clashes of inserted objects become upserts.

import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

/// An account identified by its unique handle, for upserts.
@Model final class Account: ManagedObject {
    @Attribute(.unique) var handle: String
    var displayName: String = ""
    var karma: Int = 0

    init(handle: String, displayName: String = "", karma: Int = 0) {
        self.handle = handle
        self.displayName = displayName
        self.karma = karma
    }
}

@Suite struct MergePolicyTests {
    static let models: [ManagedObject.Type] = ModelClassTests.models + [Account.self]

    /// The built-in policy a test argument names.
    static func policy(_ name: String) -> MergePolicy {
        switch name {
        case "storeTrump": .mergeByPropertyStoreTrump
        case "objectTrump": .mergeByPropertyObjectTrump
        case "overwrite": .overwrite
        default: .rollback
        }
    }

    /// A note "t0"/"b0" rated 1 in folder F1, with folders F2 and F3; its ID and the folders'.
    func seeded() throws -> (Store, ObjectID, [ObjectID]) {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        let folders = ["F1", "F2", "F3"].map { Folder(name: $0) }
        let note = Note(title: "t0", folder: folders[0])
        note.body = "b0"
        note.rating = 1
        for f in folders { try c.insert(f) }
        try c.save()
        return (store, try #require(note.objectID), folders.compactMap(\.objectID))
    }

    /// A reads the note; B changes its title and rating and saves; A changes title and body.
    func conflicting(_ policy: MergePolicy) throws -> (Store, Context, Note, ObjectID) {
        let (store, id, _) = try seeded()
        let a = Context(store: store, name: "a")
        a.mergePolicy = policy
        let mine = try #require(try a.existingObject(with: id) as? Note)
        let b = Context(store: store, name: "b")
        let theirs = try #require(try b.existingObject(with: id) as? Note)
        theirs.title = "tB"
        theirs.rating = 2
        try b.save()
        mine.title = "tA"
        mine.body = "bA"
        return (store, a, mine, id)
    }

    func stored(_ store: Store, _ id: ObjectID) throws -> (String, String?, Int16) {
        let n = try #require(try Context(store: store).existingObject(with: id) as? Note)
        return (n.title, n.body, n.rating)
    }

    @Test func theErrorPolicyListsEachConflictWithBothVersionsAndKeepsEverything() throws {
        let (store, a, mine, id) = try conflicting(.error)
        let error = #expect(throws: DocStoreError.self) { try a.save() }
        #expect(error?.code == .mergeConflict)
        let conflict = try #require(error?.conflicts.first)
        #expect(error?.conflicts.count == 1 && conflict.objectID == id && conflict.kind == .changedInStore)
        #expect(conflict.snapshotValues?["title"] == .string("t0"))
        #expect(conflict.objectValues["title"] == .string("tA"))
        #expect(conflict.storeValues?["title"] == .string("tB"))
        #expect(conflict.objectChangedKeys == ["title", "body"] && conflict.storeChangedKeys == ["title", "rating"])
        #expect(error?.message.contains("Note/1") == true)
        // Nothing was written, nothing in the context changed.
        #expect(try stored(store, id) == ("tB", "b0", 2))
        #expect(a.hasChanges && mine.title == "tA" && mine.body == "bA" && mine.rating == 1)
        // After a refresh that keeps its edits, the save goes through.
        a.refresh(mine, mergeChanges: true)
        try a.save()
        #expect(try stored(store, id) == ("tA", "bA", 2))
    }

    @Test(arguments: [
        ("storeTrump", "tB", "bA", 2),
        ("objectTrump", "tA", "bA", 2),
        ("overwrite", "tA", "bA", 1),
        ("rollback", "tB", "b0", 2),
    ] as [(String, String, String, Int16)])
    func eachPolicyPicksItsWinnerPerProperty(_ name: String, _ title: String, _ body: String, _ rating: Int16) throws {
        let (store, a, mine, id) = try conflicting(Self.policy(name))
        try a.save()
        #expect(try stored(store, id) == (title, body, rating))
        #expect(mine.title == title && mine.body == body && mine.rating == rating)
        #expect(!a.hasChanges)
        // The context is current again: its next edit saves without a conflict.
        a.mergePolicy = .error
        mine.isRead = true
        try a.save()
        #expect(try store.verify().isEmpty)
    }

    @Test func aCustomPolicySeesTheConflictAndDecides() throws {
        var seen: [MergeConflict] = []
        let (store, a, _, id) = try conflicting(.custom { conflict in
            seen.append(conflict)
            return .values(["title": .string("t0 + tA + tB")])
        })
        try a.save()
        #expect(seen.count == 1 && seen.first?.objectID == id)
        #expect(try stored(store, id) == ("t0 + tA + tB", "b0", 2))

        let (_, refusing, _, _) = try conflicting(.custom { _ in .fail })
        #expect(throws: DocStoreError.self) { try refusing.save() }
        let (_, naming, _, _) = try conflicting(.custom { _ in .values(["nope": .int(1)]) })
        let error = #expect(throws: DocStoreError.self) { try naming.save() }
        #expect(error?.code == .unknownProperty)
    }

    @Test(arguments: [true, false])
    func toOneConflictsKeepBothSidesOfTheRelationship(_ storeWins: Bool) throws {
        let (store, id, folders) = try seeded()
        let a = Context(store: store)
        a.mergePolicy = storeWins ? .mergeByPropertyStoreTrump : .mergeByPropertyObjectTrump
        let mine = try #require(try a.existingObject(with: id) as? Note)
        let b = Context(store: store)
        let theirs = try #require(try b.existingObject(with: id) as? Note)
        theirs.folder = try #require(try b.existingObject(with: folders[1]) as? Folder)    // F2
        try b.save()
        mine.folder = try #require(try a.existingObject(with: folders[2]) as? Folder)      // F3
        try a.save()

        let check = Context(store: store)
        let note = try #require(try check.existingObject(with: id) as? Note)
        let names = try folders.map { try #require(try check.existingObject(with: $0) as? Folder).notes.map(\.title) }
        #expect(note.folder?.name == (storeWins ? "F2" : "F3"))
        #expect(names == (storeWins ? [[], ["t0"], []] : [[], [], ["t0"]]))
        #expect(try store.verify().isEmpty)
    }

    @Test func anObjectDeletedInTheStoreIsAConflictOrLeavesTheContext() throws {
        let (store, id, folders) = try seeded()
        let a = Context(store: store)
        let mine = try #require(try a.existingObject(with: id) as? Note)
        let b = Context(store: store)
        try b.delete(try b.existingObject(with: id))
        try b.save()
        mine.title = "edited"
        mine.folder = try #require(try a.existingObject(with: folders[2]) as? Folder)
        let error = #expect(throws: DocStoreError.self) { try a.save() }
        #expect(error?.conflicts.first?.kind == .deletedInStore && error?.conflicts.first?.storeValues == nil)
        a.mergePolicy = .mergeByPropertyObjectTrump
        try a.save()
        #expect(mine.isDeleted && mine.managedObjectContext == nil)
        let f3 = try #require(try Context(store: store).existingObject(with: folders[2]) as? Folder)
        #expect(f3.notes.isEmpty)                        // no link to the deleted note was written
        #expect(throws: DocStoreError.self) { try Context(store: store).existingObject(with: id) }
        #expect(try store.verify().isEmpty)
    }

    @Test func aDeleteOfAnObjectChangedInTheStoreConflictsOrGoesThrough() throws {
        let (store, id, _) = try seeded()
        let a = Context(store: store)
        let mine = try #require(try a.existingObject(with: id) as? Note)
        let b = Context(store: store)
        (try b.existingObject(with: id) as? Note)?.title = "changed"
        try b.save()
        try a.delete(mine)
        let error = #expect(throws: DocStoreError.self) { try a.save() }
        #expect(error?.conflicts.first?.isDeletedHere == true)
        a.mergePolicy = .mergeByPropertyStoreTrump
        try a.save()
        #expect(throws: DocStoreError.self) { try Context(store: store).existingObject(with: id) }

        // Deleted on both sides is no conflict, whatever the policy.
        let (store2, id2, _) = try seeded()
        let x = Context(store: store2), y = Context(store: store2)
        try x.delete(try x.existingObject(with: id2))
        try y.delete(try y.existingObject(with: id2))
        try x.save()
        try y.save()
        #expect(try store2.verify().isEmpty)
    }

    @Test func uniqueClashesAreErrorsByDefaultAndUpsertsUnderObjectTrump() throws {
        let store = try Store.inMemory(models: Self.models)
        let first = Context(store: store)
        try first.insert(Account(handle: "ada", displayName: "Ada", karma: 5))
        try first.save()

        let strict = Context(store: store)
        try strict.insert(Account(handle: "ada", displayName: "Ada Lovelace"))
        let error = #expect(throws: DocStoreError.self) { try strict.save() }
        #expect(error?.code == .uniqueConstraint)
        if case .uniqueConstraint(let constraint, _)? = error?.conflicts.first?.kind {
            #expect(constraint == "Account.handle")
        } else {
            Issue.record("no unique-constraint conflict in \(String(describing: error))")
        }

        let upsert = Context(store: store)
        upsert.mergePolicy = .mergeByPropertyObjectTrump
        let incoming = Account(handle: "ada", displayName: "Ada Lovelace")
        try upsert.insert(incoming)
        try upsert.save()
        #expect(incoming.isInvalidated)
        let all = try Context(store: store).fetch(Account.self)
        #expect(all.count == 1)
        #expect(all.first?.displayName == "Ada Lovelace" && all.first?.karma == 5)   // karma 0 is "not set"
        #expect(try store.verify().isEmpty)
    }

    @Test(arguments: [
        ("storeTrump", "Ada", 5),
        ("overwrite", "Lovelace", 0),
        ("rollback", "Ada", 5),
    ] as [(String, String, Int)])
    func upsertValuesFollowThePolicy(_ name: String, _ displayName: String, _ karma: Int) throws {
        let store = try Store.inMemory(models: Self.models)
        let first = Context(store: store)
        try first.insert(Account(handle: "ada", displayName: "Ada", karma: 5))
        try first.save()
        let c = Context(store: store)
        c.mergePolicy = Self.policy(name)
        try c.insert(Account(handle: "ada", displayName: "Lovelace"))
        try c.save()
        let all = try Context(store: store).fetch(Account.self)
        #expect(all.count == 1 && all.first?.displayName == displayName && all.first?.karma == karma)
    }

    @Test func anUpsertMovesTheNewObjectsRelationshipsToTheExistingOne() throws {
        let store = try Store.inMemory(models: Self.models)
        let seed = Context(store: store)
        let swift = Tag(name: "swift")
        let old = Note(title: "old")
        old.tags = [swift]
        try seed.insert(old)
        try seed.save()

        let c = Context(store: store)
        c.mergePolicy = .mergeByPropertyObjectTrump
        let new = Note(title: "new")
        new.tags = [Tag(name: "swift"), Tag(name: "linux")]
        let inbox = Folder(name: "Inbox")
        new.folder = inbox
        try c.insert(new)
        try c.save()
        // The new note's set now holds the stored tag; the stored tag has both notes.
        #expect(Set(new.tags.map(\.name)) == ["swift", "linux"])
        let check = Context(store: store)
        let tags = try check.fetch(Tag.self)
        #expect(tags.count == 2)
        #expect(Set(tags.first { $0.name == "swift" }?.notes.map(\.title) ?? []) == ["old", "new"])

        // A folder upsert with a note: the existing folder gets the note.
        let d = Context(store: store)
        d.mergePolicy = .mergeByPropertyObjectTrump
        let again = Folder(name: "Inbox")
        let third = Note(title: "third", folder: again)
        try d.insert(again)
        try d.save()
        #expect(third.folder?.name == "Inbox" && third.folder !== again)
        let reader = Context(store: store)
        let folder = try #require(try reader.fetch(Folder.self).first)
        #expect(Set(folder.notes.map(\.title)) == ["new", "third"])
        #expect(try store.verify().isEmpty)
    }

    @Test func duplicatesInsertedInOneSaveBecomeOneObject() throws {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        c.mergePolicy = .mergeByPropertyObjectTrump
        let kept = Account(handle: "grace", displayName: "Grace")
        try c.insert(kept)
        try c.insert(Account(handle: "grace", karma: 7))
        try c.insert(Account(handle: "grace", displayName: "Grace Hopper"))
        try c.save()
        let all = try Context(store: store).fetch(Account.self)
        #expect(all.count == 1 && all.first?.displayName == "Grace Hopper" && all.first?.karma == 7)
        #expect(!kept.isInvalidated && kept.displayName == "Grace Hopper")
        // The registered object takes later upserts too.
        try c.insert(Account(handle: "grace", karma: 9))
        try c.save()
        #expect(kept.karma == 9 && !c.hasChanges)
    }
}
