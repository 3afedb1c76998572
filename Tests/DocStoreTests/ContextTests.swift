// The object graph through a context, with the notes model of SchemaValidationTests and objects
// used by key: insert, save, reopen; uniquing; faulting; inverses on every change; delete rules;
// validation; failed saves that keep their changes; rollback; object IDs and URIs.

import DocStore
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct ContextTests {
    static let schema = SchemaValidationTests.notesModel()

    func folder(_ c: Context, _ name: String) throws -> ManagedObject {
        let f = try c.insertObject(forEntityName: "Folder")
        try f.setValue(name, forKey: "name")
        return f
    }

    func note(_ c: Context, _ title: String, in folder: ManagedObject? = nil) throws -> ManagedObject {
        let n = try c.insertObject(forEntityName: "Note")
        try n.setValue(title, forKey: "title")
        try n.setValue(Date(timeIntervalSinceReferenceDate: 1000), forKey: "createdAt")
        try n.setValue(false, forKey: "isRead")
        try n.setValue(3, forKey: "rating")
        if let folder { try n.setValue(folder, forKey: "folder") }
        return n
    }

    func notes(of folder: ManagedObject) throws -> [ManagedObject] {
        try folder.value(forKey: "notes") as? [ManagedObject] ?? []
    }

    @Test func insertedObjectsAreSavedAndReadBackAfterReopening() throws {
        let dir = TemporaryDirectory("ctx")
        defer { withExtendedLifetime(dir) {} }
        let url = URL(fileURLWithPath: dir.file("ctx.docstore"))
        var ids: [ObjectID] = []
        do {
            let store = try Store(url: url, schema: Self.schema)
            let c = Context(store: store)
            let inbox = try folder(c, "Inbox")
            let n = try note(c, "Buy milk", in: inbox)
            try n.setValue("2 litres", forKey: "body")
            #expect(n.objectID != nil && inbox.objectID != nil)
            ids = [try #require(inbox.objectID), try #require(n.objectID)]
            #expect(c.hasChanges)
            try c.save()
            #expect(!c.hasChanges)
            try store.close()
        }
        let store = try Store(url: url, schema: Self.schema)
        let c = Context(store: store)
        let n = try c.existingObject(with: ids[1])
        #expect(n["title"] as? String == "Buy milk")
        #expect(n["body"] as? String == "2 litres")
        #expect(n["rating"] as? Int == 3)
        #expect(n["createdAt"] as? Date == Date(timeIntervalSinceReferenceDate: 1000))
        let f = try #require(n["folder"] as? ManagedObject)
        #expect(f.objectID == ids[0])
        #expect(f["name"] as? String == "Inbox")
        #expect(try notes(of: f) == [n])
        #expect(try store.verify().isEmpty)
        try store.close()
    }

    @Test func reopeningWithTheSameSchemaWritesNothingAndAnotherSchemaIsRefused() throws {
        let dir = TemporaryDirectory("ctx")
        defer { withExtendedLifetime(dir) {} }
        let url = URL(fileURLWithPath: dir.file("ctx.docstore"))
        try Store(url: url, schema: Self.schema).close()
        let before = try Data(contentsOf: url)
        // The same model declared in another order is the same schema.
        let reordered = Schema(entities: Self.schema.entities.reversed())
        try Store(url: url, schema: reordered).close()
        #expect(try Data(contentsOf: url) == before)

        var changed = Self.schema
        changed.entities[1].attributes.append(AttributeDescription(name: "pinned", type: .bool, isOptional: true))
        let error = #expect(throws: DocStoreError.self) { try Store(url: url, schema: changed) }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.problems.map(\.description) == ["Note.pinned: attribute added"])
        #expect(try Data(contentsOf: url) == before)
        try Store(url: url, schema: Self.schema).close()
    }

    @Test func oneObjectPerIDWhateverPathReachedIt() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let inbox = try folder(c, "Inbox")
        let n = try note(c, "a", in: inbox)
        try c.save()
        let id = try #require(n.objectID)

        let c2 = Context(store: store)
        let viaID = try c2.object(with: id)
        let viaURI = try c2.object(withURI: id.uriRepresentation)
        let f = try c2.object(with: try #require(inbox.objectID))
        let viaRelationship = try #require(try notes(of: f).first)
        #expect(viaID === viaURI)
        #expect(viaID === viaRelationship)
        #expect(viaID !== n)
        #expect(id.uriRepresentation.absoluteString == "docstore://\(store.identifier.uuidString)/Note/1")
    }

    @Test func fetchedObjectsAreFaultsUntilAPropertyIsRead() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let n = try note(c, "a", in: try folder(c, "F"))
        try c.save()
        let c2 = Context(store: store)
        let fault = try c2.object(with: try #require(n.objectID))
        #expect(fault.isFault)
        #expect(fault["title"] as? String == "a")
        #expect(!fault.isFault)
        c2.refresh(fault, mergeChanges: false)
        #expect(fault.isFault)
        #expect(fault["title"] as? String == "a")
    }

    @Test func unreferencedObjectsAreReleasedButChangedOnesAreKept() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        weak var weakNote: ManagedObject?
        do {
            let n = try note(c, "kept until saved")
            weakNote = n
        }
        #expect(weakNote != nil)        // inserted: the context holds it (C2)
        try c.save()
        #expect(weakNote == nil)        // saved and unreferenced: released (C1)
        #expect(c.registeredObjects.isEmpty)
    }

    @Test func settingAToOneUpdatesBothToManySides() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let a = try folder(c, "A"), b = try folder(c, "B")
        let n = try note(c, "n", in: a)
        #expect(try notes(of: a) == [n])
        n["folder"] = b
        #expect(try notes(of: a).isEmpty)
        #expect(try notes(of: b) == [n])
        // Through the to-many side: the note's to-one follows.
        try a.setValue([n], forKey: "notes")
        #expect(n["folder"] as? ManagedObject === a)
        #expect(try notes(of: b).isEmpty)
        n["folder"] = nil
        #expect(try notes(of: a).isEmpty)
        try c.save()
        #expect(try store.verify().isEmpty)
    }

    @Test func manyToManyIsKeptBothWays() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let n1 = try note(c, "1"), n2 = try note(c, "2")
        let t = try c.insertObject(forEntityName: "Tag")
        t["name"] = "work"
        try n1.setValue(Set([t]), forKey: "tags")
        try n2.setValue(Set([t]), forKey: "tags")
        #expect(t["notes"] as? Set<ManagedObject> == [n1, n2])
        try t.setValue(Set([n2]), forKey: "notes")
        #expect((n1["tags"] as? Set<ManagedObject>)?.isEmpty == true)
        #expect(n2["tags"] as? Set<ManagedObject> == [t])
        try c.save()
        let c2 = Context(store: store)
        let t2 = try c2.existingObject(with: try #require(t.objectID))
        #expect((t2["notes"] as? Set<ManagedObject>)?.compactMap(\.objectID) == [n2.objectID].compactMap { $0 })
    }

    @Test func orderedToManyKeepsItsOrderAcrossSaves() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let f = try folder(c, "F")
        let ns = try (0..<5).map { try note(c, "n\($0)") }
        try f.setValue([ns[3], ns[1], ns[4], ns[0], ns[2]], forKey: "notes")
        try c.save()
        let c2 = Context(store: store)
        let f2 = try c2.existingObject(with: try #require(f.objectID))
        #expect(try notes(of: f2).map { $0["title"] as? String } == ["n3", "n1", "n4", "n0", "n2"])
        // Appending through the inverse keeps the order and adds at the end.
        let extra = try note(c2, "n5")
        extra["folder"] = f2
        #expect(try notes(of: f2).map { $0["title"] as? String } == ["n3", "n1", "n4", "n0", "n2", "n5"])
    }

    @Test func theInverseOfAnUnloadedToManyIsUpdatedWithoutLoadingIt() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let t = try c.insertObject(forEntityName: "Tag")
        t["name"] = "x"
        let old = try note(c, "old")
        try old.setValue(Set([t]), forKey: "tags")
        try c.save()

        let c2 = Context(store: store)
        let tag = try c2.object(with: try #require(t.objectID))
        let fresh = try note(c2, "new")
        try fresh.setValue(Set([tag]), forKey: "tags")
        #expect(tag.isFault)            // the tag's side changed without loading it
        try c2.save()
        let c3 = Context(store: store)
        let tag3 = try c3.object(with: try #require(t.objectID))
        #expect((tag3["notes"] as? Set<ManagedObject>)?.count == 2)
    }

    @Test func cascadeFollowsChainsAndNullifyLeavesTheOtherSideClean() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let f = try folder(c, "F")
        let n = try note(c, "n", in: f)
        let t = try c.insertObject(forEntityName: "Tag")
        t["name"] = "t"
        try n.setValue(Set([t]), forKey: "tags")
        let a = try c.insertObject(forEntityName: "Attachment")
        a["name"] = "a.txt"
        a["bytes"] = Data([1, 2, 3])
        a["note"] = n
        try c.save()
        let ids = try [f, n, t, a].map { try #require($0.objectID) }

        try c.delete(f)                 // Folder.notes cascades → Note.files cascades → Attachment
        #expect(f.isDeleted && n.isDeleted && a.isDeleted && !t.isDeleted)
        #expect((t["notes"] as? Set<ManagedObject>)?.isEmpty == true)   // Note.tags nullified
        try c.save()

        let c2 = Context(store: store)
        for id in [ids[0], ids[1], ids[3]] {
            let error = #expect(throws: DocStoreError.self) { try c2.existingObject(with: id) }
            #expect(error?.code == .objectNotFound)
        }
        let tag = try c2.existingObject(with: ids[2])
        #expect((tag["notes"] as? Set<ManagedObject>)?.isEmpty == true)
        #expect(try store.verify().isEmpty)
    }

    @Test func denyRefusesTheSaveNamingTheObjectAndRelationship() throws {
        var schema = Self.schema
        schema.entities[2].relationships[0].deleteRule = .deny    // Tag.notes: deny
        let store = try Store.inMemory(schema: schema)
        let c = Context(store: store)
        let n = try note(c, "n")
        let t = try c.insertObject(forEntityName: "Tag")
        t["name"] = "t"
        try n.setValue(Set([t]), forKey: "tags")
        try c.save()
        try c.delete(t)
        let error = #expect(throws: DocStoreError.self) { try c.save() }
        #expect(error?.code == .deleteDenied)
        #expect(error?.entity == "Tag/1")
        #expect(error?.property == "notes")
        #expect(c.hasChanges && t.isDeleted)       // the failed save kept the change
        try c.delete(n)                            // deleting the note too makes it allowed
        try c.save()
    }

    @Test func validationCollectsEveryProblemAndAFixedSaveSucceeds() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let n = try c.insertObject(forEntityName: "Note")   // title, createdAt, isRead, rating missing
        n["slug"] = "Not A Slug"
        n["rating"] = 9
        n["title"] = 42                                     // wrong type: refused, reported at save
        let error = #expect(throws: DocStoreError.self) { try c.save() }
        #expect(error?.code == .validation)
        let problems = Set(error?.problems.map { "\($0.property ?? ""): \($0.message)" } ?? [])
        #expect(problems.contains { $0.hasPrefix("title: a value set by key was refused") })
        #expect(problems.contains("title: is required"))
        #expect(problems.contains("createdAt: is required"))
        #expect(problems.contains("rating: 9 is above the maximum 5.0"))
        #expect(problems.contains("slug: \"Not A Slug\" does not match the pattern ^[a-z0-9-]+$"))
        n["title"] = "fixed"
        n["createdAt"] = Date()
        n["isRead"] = true
        n["rating"] = 5
        n["slug"] = "a-slug"
        try c.save()
    }

    @Test func aUniqueConstraintFailureKeepsTheChangesAndWritesNothing() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        _ = try folder(c, "Inbox")
        try c.save()
        let dup = try folder(c, "Inbox")
        let other = try folder(c, "Other")
        let error = #expect(throws: DocStoreError.self) { try c.save() }
        #expect(error?.code == .uniqueConstraint)
        #expect(c.insertedObjects == [dup, other])
        dup["name"] = "Archive"
        try c.save()
        // Swapping unique values between two objects in one save is allowed (W2).
        dup["name"] = "Other"
        other["name"] = "Archive"
        try c.save()
        #expect(try store.verify().isEmpty)
    }

    @Test func rollbackForgetsInsertsChangesAndDeletes() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let f = try folder(c, "F")
        let n = try note(c, "before", in: f)
        try c.save()
        n["title"] = "after"
        let added = try note(c, "added", in: f)
        try c.delete(f)
        #expect(n.isDeleted)                        // cascade
        c.rollback()
        #expect(!c.hasChanges)
        #expect(!f.isDeleted && !n.isDeleted)
        #expect(n["title"] as? String == "before")
        #expect(added.isInvalidated && added.objectID == nil)
        #expect(try notes(of: f) == [n])
        #expect(n.changedValues().isEmpty)
    }

    @Test func changedAndCommittedValuesDescribeTheEdit() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let n = try note(c, "one")
        try c.save()
        n["title"] = "two"
        #expect(n.changedValues().keys.sorted() == ["title"])
        #expect(n.changedValues()["title"] as? String == "two")
        #expect(n.committedValues(forKeys: ["title"])["title"] as? String == "one")
        #expect(c.updatedObjects == [n])
    }

    @Test func deletedAndInvalidatedObjectsCanStillBeReadWithoutTrapping() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let n = try note(c, "last words")
        try c.save()
        let c2 = Context(store: store)
        let elsewhere = try c2.object(with: try #require(n.objectID))   // a fault
        try c.delete(n)
        try c.save()
        #expect(n.isDeleted)
        #expect(n["title"] as? String == "last words")                 // last known values
        #expect(throws: DocStoreError.self) { try n.setValue("x", forKey: "title") }
        #expect(elsewhere["title"] == nil)                             // row gone: no value, no trap
        #expect(elsewhere.isInvalidated)
        let error = #expect(throws: DocStoreError.self) { try elsewhere.setValue("x", forKey: "title") }
        #expect(error?.code == .objectDeleted)
    }

    @Test func badInputGetsTypedErrors() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        #expect(throws: DocStoreError.self) { try c.insertObject(forEntityName: "Nope") }
        #expect(throws: DocStoreError.self) { try c.insertObject(forEntityName: "File") }     // abstract
        let n = try note(c, "n")
        let e1 = #expect(throws: DocStoreError.self) { try n.value(forKey: "nope") }
        #expect(e1?.code == .unknownProperty)
        let t = try c.insertObject(forEntityName: "Tag")
        let e2 = #expect(throws: DocStoreError.self) { try n.setValue(t, forKey: "folder") }
        #expect(e2?.code == .typeMismatch)
        let other = Context(store: store)
        let f = try folder(other, "elsewhere")
        let e3 = #expect(throws: DocStoreError.self) { try n.setValue(f, forKey: "folder") }
        #expect(e3?.code == .wrongContext)
        let e4 = #expect(throws: DocStoreError.self) { try c.object(withURI: URL(string: "docstore://nope/Note/1")!) }
        #expect(e4?.code == .invalidObjectID)
    }

    @Test func theRowCacheNeverServesARecordOlderThanTheLastSave() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let a = Context(store: store)
        let f = try folder(a, "F")
        for i in 0..<5 { _ = try note(a, "v1-\(i)", in: f) }
        try a.save()
        let id = try #require(f.objectID)

        let reader = Context(store: store)
        let seen = try notes(of: try reader.object(with: id))   // loads the members' records into the row cache
        #expect(seen.compactMap { $0["title"] as? String }.sorted() == (0..<5).map { "v1-\($0)" })

        let writer = Context(store: store)
        for n in try notes(of: try writer.object(with: id)) { n["title"] = "v2" }
        try writer.save()

        let fresh = Context(store: store)
        let titles = try notes(of: try fresh.object(with: id)).compactMap { $0["title"] as? String }
        #expect(titles == Array(repeating: "v2", count: 5))
        for n in seen { reader.refresh(n, mergeChanges: false) }
        #expect(seen.allSatisfy { $0["title"] as? String == "v2" })
    }

    @Test func refreshWithMergeKeepsUnsavedChangesOverTheLatestSavedValues() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let a = Context(store: store)
        let n = try note(a, "first")
        try a.save()
        let id = try #require(n.objectID)

        let b = Context(store: store)
        let elsewhere = try b.existingObject(with: id)
        elsewhere["rating"] = 5
        try b.save()

        n["title"] = "edited"                  // unsaved here
        a.refreshAllObjects()
        #expect(n["title"] as? String == "edited")   // the unsaved change stays
        #expect(n["rating"] as? Int == 5)            // the other context's save shows
        #expect(n.changedValues().keys.sorted() == ["title"])
        try a.save()
        #expect(try Context(store: store).existingObject(with: id)["rating"] as? Int == 5)
    }

    @Test func resetForgetsEveryObjectAndItsChanges() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let saved = try note(c, "saved")
        try c.save()
        let unsaved = try note(c, "never saved")
        saved["title"] = "changed"
        c.reset()
        #expect(!c.hasChanges && c.registeredObjects.isEmpty)
        #expect(saved.isInvalidated && unsaved.isInvalidated)
        #expect(saved.managedObjectContext == nil)
        let again = try c.existingObject(with: try #require(Context(store: store).fetch(entityName: "Note").first?.objectID))
        #expect(again !== saved && again["title"] as? String == "saved")
    }

    @Test func objectIDsAreCodableAndResolveAfterARoundTrip() throws {
        let store = try Store.inMemory(schema: Self.schema)
        let c = Context(store: store)
        let n = try note(c, "n")
        try c.save()
        let id = try #require(n.objectID)
        let data = try JSONEncoder().encode(id)
        let decoded = try JSONDecoder().decode(ObjectID.self, from: data)
        #expect(decoded == id)
        #expect(try Context(store: store).existingObject(with: decoded)["title"] as? String == "n")
        #expect(try store.objectID(forEntityName: "Note", number: 1) == id)
    }
}
