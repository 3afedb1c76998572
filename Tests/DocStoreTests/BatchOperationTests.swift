// Batch operations (Batch/): inserts from dictionaries, Codable values and handlers; updates with
// constants, expressions and to-one relationships; deletes with every delete rule — each in one
// transaction that keeps records, indexes and both sides of every relationship consistent
// (Store.verify's graph audit after each), validates, refuses bad input whole with a typed
// error, records history, and reaches live contexts.

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore

/// An owner whose pets keep it alive (deny), with one passport (one-to-one).
@Model final class Owner: ManagedObject {
    @Attribute(.unique) var name: String = ""
    @Attribute(.minimum(0)) var score: Int = 0
    @Relationship(deleteRule: .deny) var pets: Set<Pet> = []
    var passport: Passport?

    init(name: String) { self.name = name }
}

@Model final class Pet: ManagedObject {
    var name: String = ""
    @Relationship(inverse: \Owner.pets) var owner: Owner?

    init(name: String, owner: Owner? = nil) {
        self.name = name
        self.owner = owner
    }
}

@Model final class Passport: ManagedObject {
    var number: String = ""
    @Relationship(inverse: \Owner.passport) var holder: Owner?

    init(number: String, holder: Owner? = nil) {
        self.number = number
        self.holder = holder
    }
}

@Suite struct BatchOperationTests {
    static let models: [ManagedObject.Type] = ModelClassTests.models + [Owner.self, Pet.self, Passport.self]

    /// A store with folders Inbox and Archive and tags a, b, c, saved.
    func notesStore() throws -> (Store, Context, [Folder], [Tag]) {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        let folders = [Folder(name: "Inbox"), Folder(name: "Archive")]
        let tags = ["a", "b", "c"].map { Tag(name: $0) }
        for f in folders { try c.insert(f) }
        for t in tags { try c.insert(t) }
        try c.insert(Note(title: "already here", folder: folders[0]))
        try c.save()
        return (store, c, folders, tags)
    }

    /// A Note row: Note's createdAt and checklist are required and have no default in the schema.
    static func note(_ fields: [String: Any]) -> [String: Any] {
        ["createdAt": Date(timeIntervalSinceReferenceDate: 0), "checklist": [String]()].merging(fields) { _, given in given }
    }

    /// The notes by title, in `context` (which the caller keeps while it reads them).
    func fetchNotes(_ context: Context) throws -> [Note] {
        try context.fetch(FetchRequest<Note>(sortDescriptors: [SortKey("title")]))
    }

    // MARK: - Insert

    @Test func insertingDictionariesWritesRecordsIndexesAndBothSidesOfEveryLink() throws {
        let (store, _, folders, tags) = try notesStore()
        let start = Date(timeIntervalSinceReferenceDate: 1_000)
        let rows: [[String: Any]] = (0..<300).map { i in
            var row: [String: Any] = Self.note(["title": String(format: "n%03d", i), "createdAt": start.addingTimeInterval(Double(i)),
                                                "rating": i % 7, "folder": folders[i % 2].objectID!])
            if i % 3 == 0 { row["tags"] = [tags[0].objectID!, tags[i % 2 + 1].objectID!] }
            return row
        }
        var request = BatchInsertRequest(entityName: "Note", objects: rows)
        request.resultType = .objectIDs
        let result = try store.execute(request, transactionAuthor: "importer")
        #expect(result.count == 300 && result.objectIDs.count == 300)
        #expect(try store.verify() == [])

        let reader = Context(store: store)
        let notes = try fetchNotes(reader)
        #expect(notes.count == 301)
        let n42 = try #require(notes.first { $0.title == "n042" })
        #expect(n42.rating == 0 && n42.folder?.name == "Inbox" && n42.createdAt == start.addingTimeInterval(42))
        #expect(Set(n42.tags.map(\.name)) == ["a", "b"])
        // The ordered to-many keeps the existing note first, then the batch's in row order.
        let c = Context(store: store)
        let inbox = try #require(try c.fetch(FetchRequest<Folder>(predicate: try QueryPredicate(format: "name == 'Inbox'"))).first)
        #expect(inbox.notes.map(\.title) == ["already here"] + stride(from: 0, to: 300, by: 2).map { String(format: "n%03d", $0) })
        let a = try #require(try c.fetch(FetchRequest<Tag>(predicate: try QueryPredicate(format: "name == 'a'"))).first)
        #expect(a.notes.count == 100)
        // The createdAt index answers a range query.
        let late = FetchRequest<Note>(predicate: try QueryPredicate(format: "createdAt >= %@", start.addingTimeInterval(250)))
        #expect(try c.count(for: late) == 50)
        #expect(try c.explain(late).contains("index"))

        // One transaction: the inserts, and the folders and tags whose links changed.
        let history = try store.history()
        let batch = try #require(history.last)
        #expect(history.count == 2 && batch.author == "importer")
        #expect(batch.insertedObjectIDs == Set(result.objectIDs))
        #expect(batch.updatedObjectIDs == Set((folders.map(\.objectID) + tags.map(\.objectID)).compactMap { $0 }))
        #expect(batch.changes.filter { $0.changeType == .update }.allSatisfy { $0.updatedProperties == ["notes"] })
        #expect(result.transaction?.token == batch.token)
    }

    struct NoteRow: Codable {
        var title: String
        var createdAt = Date(timeIntervalSinceReferenceDate: 0)
        var checklist: [String] = []
        var rating: Int16
        var body: String?
        var folder: ObjectID?
        var location: Location?
    }

    @Test func insertingCodableValuesAndHandlerRows() throws {
        let (store, _, folders, _) = try notesStore()
        let values = (0..<5).map { NoteRow(title: "codable \($0)", rating: Int16($0), body: $0 == 0 ? "first" : nil,
                                            folder: folders[1].objectID, location: Location(latitude: 1, longitude: Double($0))) }
        #expect(try store.execute(BatchInsertRequest(entityName: "Note", values: values)).count == 5)

        var n = 0
        let byDictionary = BatchInsertRequest(entityName: "Note") { row in
            guard n < 7 else { return true }
            n += 1
            row = Self.note(["title": "dict \(n)"])
            row["body"] = Optional<String>.none as Any      // BR2: an Optional in Any
            return false
        }
        #expect(try store.execute(byDictionary).count == 7)

        let c = Context(store: store)
        let archive = try #require(try c.existingObject(with: folders[1].objectID!) as? Folder)
        var m = 0
        let byObject = BatchInsertRequest(Note.self) { note in
            guard m < 4 else { return true }
            m += 1
            #expect(note.title == "" && note.folder == nil)     // reset before each call
            note.title = "object \(m)"
            note.createdAt = Date(timeIntervalSinceReferenceDate: 0)
            note.rating = Int16(m * 10)
            note.checklist = ["x", "y"]
            note.folder = archive
            return false
        }
        #expect(try store.execute(byObject).count == 4)
        #expect(try store.verify() == [])

        let reader = Context(store: store)
        let notes = try fetchNotes(reader)
        #expect(notes.count == 1 + 5 + 7 + 4)
        let first = try #require(notes.first { $0.title == "codable 0" })
        #expect(first.body == "first" && first.folder?.name == "Archive" && first.location?.longitude == 0)
        #expect(notes.first { $0.title == "codable 3" }?.location?.longitude == 3)
        #expect(notes.filter { $0.title.hasPrefix("dict") }.allSatisfy { $0.body == nil && $0.folder == nil })
        let object2 = try #require(notes.first { $0.title == "object 2" })
        #expect(object2.rating == 20 && object2.checklist == ["x", "y"] && object2.folder?.name == "Archive")
        let reloaded = try #require(try reader.existingObject(with: folders[1].objectID!) as? Folder)
        #expect(reloaded.notes.count == 9)
    }

    @Test func aBadRowRefusesTheWholeInsertNamingEveryProblem() throws {
        let (store, _, folders, _) = try notesStore()
        let historyBefore = try store.history().count
        let gone = try store.objectID(forEntityName: "Folder", number: 99)
        let rows: [[String: Any]] = [
            ["title": "fine"],
            ["title": "typo", "titel": "x"],                          // unknown property
            ["title": 42],                                             // wrong type
            ["title": String(repeating: "x", count: 201)],              // maxLength 200
            ["title": "lost", "folder": gone],                         // no such object
            ["title": "wrong entity", "folder": folders[0].objectID!, "tags": [folders[0].objectID!]],
        ].map(Self.note)
        let error = #expect(throws: DocStoreError.self) { try store.execute(BatchInsertRequest(entityName: "Note", objects: rows)) }
        #expect(error?.code == .validation)
        let problems = error?.problems ?? []
        #expect(problems.count == 5, "\(problems.map(\.description))")
        #expect(problems.contains { $0.entity == "Note row 2" && $0.property == "titel" })
        #expect(problems.contains { $0.entity == "Note row 3" && $0.property == "title" && $0.message.contains("does not fit") })
        #expect(problems.contains { $0.entity == "Note row 4" && $0.message.contains("at most 200") })
        #expect(problems.contains { $0.entity == "Note row 5" && $0.message.contains("Folder/99 is not in the store") })
        #expect(problems.contains { $0.entity == "Note row 6" && $0.property == "tags" && $0.message.contains("leads to Tag") })
        // Nothing was written: the one fine row neither.
        #expect(try fetchNotes(Context(store: store)).count == 1)
        #expect(try store.history().count == historyBefore)
        #expect(try store.verify() == [])

        // Required values: a Folder needs a name.
        let missing = #expect(throws: DocStoreError.self) { try store.execute(BatchInsertRequest(entityName: "Folder", objects: [[:]])) }
        #expect(missing?.code == .validation && missing?.problems.first?.property == "name")
        // Abstract entities and unknown ones are refused before anything is read.
        #expect(throws: DocStoreError.self) { try store.execute(BatchInsertRequest(entityName: "Item", objects: [[:]])) }
        #expect(throws: DocStoreError.self) { try store.execute(BatchInsertRequest(entityName: "Nope", objects: [[:]])) }
        // A Codable value that is not a keyed object.
        let scalar = #expect(throws: DocStoreError.self) { try store.execute(BatchInsertRequest(entityName: "Note", values: ["just a string"])) }
        #expect(scalar?.code == .typeMismatch)
    }

    @Test func uniqueConstraintsHoldAgainstTheStoreAndWithinTheBatch() throws {
        let (store, _, _, _) = try notesStore()
        let existing = #expect(throws: DocStoreError.self) {
            try store.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "new"], ["name": "a"]]))
        }
        #expect(existing?.code == .uniqueConstraint && existing?.message.contains("already used") == true)
        let twice = #expect(throws: DocStoreError.self) {
            try store.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "x"], ["name": "x"]]))
        }
        #expect(twice?.code == .uniqueConstraint)
        #expect(try Context(store: store).count(for: FetchRequest<Tag>()) == 3)
        #expect(try store.execute(BatchInsertRequest(entityName: "Tag", objects: [["name": "x"], ["name": "y"]])).count == 2)
        // An update that gives one value to two objects is refused too; a swap is not a clash.
        let clash = #expect(throws: DocStoreError.self) {
            try store.execute(BatchUpdateRequest(entityName: "Tag", predicate: try QueryPredicate(format: "name IN {'x', 'y'}"), propertiesToUpdate: ["name": "z"]))
        }
        #expect(clash?.code == .uniqueConstraint)
        #expect(try store.verify() == [])
    }

    /// A batch longer than BatchInserter.flushEvery (BI5) is applied to the trees in chunks: a
    /// unique value repeated across chunks still refuses the whole batch, nothing stays of the
    /// chunks applied before, and a valid long batch writes every row and its links.
    @Test func aBatchLongerThanOneChunkIsStillOneTransaction() throws {
        let (store, _, folders, tags) = try notesStore()
        let rows = 2 * BatchInserter.flushEvery + 500
        let clash = #expect(throws: DocStoreError.self) {
            try store.execute(BatchInsertRequest(entityName: "Tag", objects: (0..<rows).map { ["name": "t\($0 == rows - 1 ? 7 : $0)"] }))
        }
        #expect(clash?.code == .uniqueConstraint)
        #expect(try Context(store: store).count(for: FetchRequest<Tag>()) == 3)
        var request = BatchInsertRequest(entityName: "Note", objects: (0..<rows).map { i in
            Self.note(["title": "n\(i)", "folder": folders[i % 2].objectID as Any, "tags": [tags[i % 3].objectID].compactMap { $0 }])
        })
        request.resultType = .objectIDs
        #expect(try store.execute(request).objectIDs.count == rows)
        let c = Context(store: store)
        #expect(try c.count(for: FetchRequest<Note>()) == rows + 1)
        let archive = try #require(try c.fetch(FetchRequest<Folder>(predicate: try QueryPredicate(format: "name == 'Archive'"))).first)
        #expect(archive.notes.count == rows / 2 && archive.notes.prefix(2).map(\.title) == ["n1", "n3"])
        #expect(try c.count(for: FetchRequest<Note>(predicate: try QueryPredicate(format: "ANY tags.name == 'c'"))) == rows / 3)
        #expect(try store.verify() == [])
        // Deleting most of both folders' ordered lists (B8: each list read once, not per member).
        let deleted = try store.execute(BatchDeleteRequest(entityName: "Note", predicate: try QueryPredicate(format: "title BEGINSWITH 'n' AND title != 'n1'")))
        #expect(deleted.count == rows - 1)
        let fresh = Context(store: store)
        let lists = try fresh.fetch(FetchRequest<Folder>(sortDescriptors: [SortKey("name")])).map { $0.notes.map(\.title) }
        #expect(lists == [["n1"], ["already here"]])
        #expect(try store.verify() == [])
    }

    // MARK: - Update

    @Test func updatingWithConstantsAndExpressions() throws {
        let (store, _, folders, _) = try notesStore()
        let rows: [[String: Any]] = (0..<50).map { Self.note(["title": "n\($0)", "rating": $0 % 5, "folder": folders[$0 % 2].objectID!]) }
        _ = try store.execute(BatchInsertRequest(entityName: "Note", objects: rows))

        let reader = Context(store: store)
        let n2 = try #require(try reader.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "title == 'n2'"))).first)
        let versionBefore = n2.rowVersion

        var request = BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "folder.name == 'Inbox' AND rating < 3"))
        request.propertiesToUpdate = ["rating": try QueryExpression(format: "rating * 2 + 1"), "isRead": true, "body": nil]
        request.resultType = .objectIDs
        let result = try store.execute(request)
        // Inbox holds the even n's (and "already here", rating 0): ratings 0, 1, 2 qualify.
        let expected = (0..<50).filter { $0 % 2 == 0 && $0 % 5 < 3 }.count + 1
        #expect(result.count == expected && result.objectIDs.count == expected)
        #expect(try store.verify() == [])

        let fresh = Context(store: store)
        let notes = try fetchNotes(fresh)
        for note in notes where note.title.hasPrefix("n") {
            let i = Int(note.title.dropFirst())!
            let hit = i % 2 == 0 && i % 5 < 3
            #expect(note.rating == Int16(hit ? (i % 5) * 2 + 1 : i % 5), "\(note.title)")
            #expect(note.isRead == hit)
        }
        // The row version moved: a context still holding the old values meets a conflict.
        #expect(try reader.existingObject(with: n2.objectID!).rowVersion == versionBefore)
        n2.title = "edited"
        let conflict = #expect(throws: DocStoreError.self) { try reader.save() }
        #expect(conflict?.code == .mergeConflict)

        // Values that come out the same are not rewritten, counted or recorded.
        let historyCount = try store.history().count
        let same = try store.execute(BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "isRead == YES"), propertiesToUpdate: ["isRead": true]))
        let historyAfter = try store.history().count
        #expect(same.count == 0 && same.transaction == nil && historyAfter == historyCount)

        // Expressions widen integers to the attribute's type; a result that does not fit is a problem.
        let overflow = #expect(throws: DocStoreError.self) {
            try store.execute(BatchUpdateRequest(entityName: "Note", propertiesToUpdate: ["rating": try QueryExpression(format: "rating + 40000")]))
        }
        #expect(overflow?.code == .validation && overflow?.problems.count == 51)
        // Bad requests are refused before anything is read.
        #expect(throws: DocStoreError.self) { try store.execute(BatchUpdateRequest(entityName: "Note", propertiesToUpdate: ["nope": 1])) }
        #expect(throws: DocStoreError.self) { try store.execute(BatchUpdateRequest(entityName: "Note", propertiesToUpdate: ["rating": "high"])) }
        #expect(throws: DocStoreError.self) { try store.execute(BatchUpdateRequest(entityName: "Note", propertiesToUpdate: ["tags": [Any]()])) }
    }

    @Test func updatingValidatesAndKeepsIndexesExact() throws {
        let (store, _, _, _) = try notesStore()
        let t0 = Date(timeIntervalSinceReferenceDate: 0)
        _ = try store.execute(BatchInsertRequest(entityName: "Note", objects: (0..<40).map { Self.note(["title": "n\($0)", "createdAt": t0.addingTimeInterval(Double($0))]) }))
        let long = String(repeating: "y", count: 201)
        let refused = #expect(throws: DocStoreError.self) {
            try store.execute(BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "title BEGINSWITH 'n1'"), propertiesToUpdate: ["title": long]))
        }
        #expect(refused?.code == .validation && refused?.problems.count == 11)
        #expect(try fetchNotes(Context(store: store)).filter { $0.title == long }.isEmpty)

        // Moving createdAt moves the index entries: the index answers with the new values.
        _ = try store.execute(BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "createdAt < %@", t0.addingTimeInterval(10)),
                                                 propertiesToUpdate: ["createdAt": t0.addingTimeInterval(1000)]))
        let c = Context(store: store)
        #expect(try c.count(for: FetchRequest<Note>(predicate: try QueryPredicate(format: "createdAt >= %@", t0.addingTimeInterval(999)))) == 11)   // "already here" too
        #expect(try c.count(for: FetchRequest<Note>(predicate: try QueryPredicate(format: "createdAt < %@", t0.addingTimeInterval(10)))) == 0)
        #expect(try c.count(for: FetchRequest<Note>(predicate: try QueryPredicate(format: "createdAt >= %@", t0.addingTimeInterval(10)))) == 41)
        #expect(try store.verify() == [])
    }

    @Test func updatingAToOneMovesBothSidesOfTheLink() throws {
        let (store, _, folders, _) = try notesStore()
        _ = try store.execute(BatchInsertRequest(entityName: "Note", objects: (0..<10).map { Self.note(["title": "n\($0)", "folder": folders[0].objectID!]) }))
        let moved = try store.execute(BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "title IN {'n2', 'n5', 'n7'}"),
                                                         propertiesToUpdate: ["folder": folders[1].objectID!]))
        #expect(moved.count == 3)
        #expect(try store.verify() == [])
        let c = Context(store: store)
        let inbox = try #require(try c.existingObject(with: folders[0].objectID!) as? Folder)
        let archive = try #require(try c.existingObject(with: folders[1].objectID!) as? Folder)
        #expect(archive.notes.map(\.title) == ["n2", "n5", "n7"])
        #expect(inbox.notes.map(\.title) == ["already here", "n0", "n1", "n3", "n4", "n6", "n8", "n9"])
        let transaction = try #require(moved.transaction)
        #expect(transaction.updatedObjectIDs.count == 5)     // three notes, both folders
        #expect(transaction.changes.first { $0.changedObjectID == folders[1].objectID }?.updatedProperties == ["notes"])

        // To nil: the notes leave their folder.
        _ = try store.execute(BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "folder == %@", folders[1].objectID!),
                                                 propertiesToUpdate: ["folder": nil]))
        #expect(try store.verify() == [])
        let fresh = try #require(try Context(store: store).existingObject(with: folders[1].objectID!) as? Folder)
        #expect(fresh.notes.isEmpty)
    }

    @Test func aOneToOneTakenByAnotherObjectLeavesItsFormerPartner() throws {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        let ann = Owner(name: "Ann"), bob = Owner(name: "Bob")
        let p1 = Passport(number: "P1", holder: ann), p2 = Passport(number: "P2", holder: bob)
        for o in [ann, bob] as [ManagedObject] + [p1, p2] { try c.insert(o) }
        try c.save()
        // P1 now belongs to Bob: Ann has none, and P2 (Bob's former passport) has no holder.
        _ = try store.execute(BatchUpdateRequest(entityName: "Passport", predicate: try QueryPredicate(format: "number == 'P1'"),
                                                 propertiesToUpdate: ["holder": bob.objectID!]))
        #expect(try store.verify() == [])
        let r = Context(store: store)
        #expect((try r.existingObject(with: ann.objectID!) as? Owner)?.passport == nil)
        #expect((try r.existingObject(with: bob.objectID!) as? Owner)?.passport?.number == "P1")
        #expect((try r.existingObject(with: p2.objectID!) as? Passport)?.holder == nil)
        // A batch insert that takes a passport's holder does the same.
        _ = try store.execute(BatchInsertRequest(entityName: "Passport", objects: [["number": "P3", "holder": bob.objectID!]]))
        #expect(try store.verify() == [])
        #expect((try Context(store: store).existingObject(with: p1.objectID!) as? Passport)?.holder == nil)
    }

    // MARK: - Delete

    @Test func deletingCascadesAndNullifiesThroughTheLinks() throws {
        let (store, _, folders, tags) = try notesStore()
        let rows: [[String: Any]] = (0..<60).map { Self.note(["title": "n\($0)", "folder": folders[$0 % 2].objectID!, "tags": [tags[$0 % 3].objectID!]]) }
        _ = try store.execute(BatchInsertRequest(entityName: "Note", objects: rows))
        // Deleting the Inbox cascades to its 31 notes; their tags lose them (nullify).
        var request = BatchDeleteRequest(entityName: "Folder", predicate: try QueryPredicate(format: "name == 'Inbox'"))
        request.resultType = .objectIDs
        let result = try store.execute(request, transactionAuthor: "cleanup")
        #expect(result.count == 1 && result.objectIDs == [folders[0].objectID!])
        #expect(try store.verify() == [])
        let reader = Context(store: store)
        let notes = try fetchNotes(reader)
        #expect(notes.count == 30 && notes.allSatisfy { $0.folder?.name == "Archive" })
        let c = Context(store: store)
        for tag in tags {
            let t = try #require(try c.existingObject(with: tag.objectID!) as? Tag)
            #expect(t.notes.count == 10 && t.notes.allSatisfy { $0.folder?.name == "Archive" })
        }
        let transaction = try #require(result.transaction)
        #expect(transaction.deletedObjectIDs.count == 32 && transaction.author == "cleanup")
        #expect(transaction.updatedObjectIDs == Set(tags.compactMap(\.objectID)))

        // Deleting notes by ID nullifies their folder's ordered links and their tags' links.
        let doomed = notes.prefix(5).compactMap(\.objectID)
        var byID = BatchDeleteRequest(objectIDs: doomed + [try store.objectID(forEntityName: "Note", number: 9_999)])
        byID.resultType = .objectIDs
        // The ID of no stored note is passed over: the result names the five that were there.
        #expect(Set(try store.execute(byID).objectIDs) == Set(doomed))
        #expect(try store.verify() == [])
        #expect(try fetchNotes(Context(store: store)).count == 25)
        let after = Context(store: store)
        let archive = try #require(try after.existingObject(with: folders[1].objectID!) as? Folder)
        #expect(archive.notes.count == 25)
    }

    @Test func aDenyRuleRefusesTheWholeBatch() throws {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        let ann = Owner(name: "Ann"), bob = Owner(name: "Bob"), cy = Owner(name: "Cy")
        let rex = Pet(name: "Rex", owner: ann)
        for o in [ann, bob, cy, rex] as [ManagedObject] { try c.insert(o) }
        try c.save()
        let error = #expect(throws: DocStoreError.self) { try store.execute(BatchDeleteRequest(entityName: "Owner")) }
        #expect(error?.code == .deleteDenied)
        #expect(error?.problems.count == 1 && error?.problems.first?.entity == "Owner/1" && error?.problems.first?.property == "pets")
        #expect(try Context(store: store).count(for: FetchRequest<Owner>()) == 3)
        // Deleting the pet in the same batch lets its owner go.
        let both = try store.execute(BatchDeleteRequest(objectIDs: [ann.objectID!, rex.objectID!]))
        #expect(both.count == 2)
        #expect(try Context(store: store).count(for: FetchRequest<Owner>()) == 2)
        #expect(try store.verify() == [])
    }

    // MARK: - Contexts

    @Test func liveContextsCatchUpWithABatch() throws {
        let (store, _, folders, _) = try notesStore()
        _ = try store.execute(BatchInsertRequest(entityName: "Note", objects: (0..<6).map { Self.note(["title": "n\($0)", "folder": folders[0].objectID!]) }))
        let auto = Context(store: store)
        auto.automaticallyMergesChangesFromParent = true
        let manual = Context(store: store)
        let autoNotes = try auto.fetch(FetchRequest<Note>(sortDescriptors: [SortKey("title")]))
        let manualNotes = try manual.fetch(FetchRequest<Note>(sortDescriptors: [SortKey("title")]))

        let updated = try store.execute(BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "title == 'n1'"), propertiesToUpdate: ["rating": 5]))
        let deleted = try store.execute(BatchDeleteRequest(entityName: "Note", predicate: try QueryPredicate(format: "title == 'n2'")))
        auto.processPendingChanges()
        #expect(autoNotes.first { $0.title == "n1" }?.rating == 5)
        #expect(autoNotes.first { $0.title == "n2" }?.isDeleted == true)

        // By hand: the static merge brings the other context up to date.
        #expect(manualNotes.first { $0.title == "n1" }?.rating == 0)
        Context.mergeChanges(fromRemoteContextSave: try #require(updated.transaction), into: [manual])
        Context.mergeChanges(fromRemoteContextSave: try #require(deleted.transaction), into: [manual])
        #expect(manualNotes.first { $0.title == "n1" }?.rating == 5)
        #expect(manualNotes.first { $0.title == "n2" }?.isDeleted == true)

        // A context's own execute merges into itself, with its author and name in history.
        let editor = Context(store: store, name: "editor")
        editor.transactionAuthor = "app"
        let n3 = try #require(try editor.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "title == 'n3'"))).first)
        let own = try editor.execute(BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "title == 'n3'"), propertiesToUpdate: ["title": "renamed"]))
        #expect(n3.title == "renamed" && !editor.hasChanges)
        #expect(own.transaction?.author == "app" && own.transaction?.contextName == "editor")
        n3.rating = 9
        try editor.save()     // no conflict: the context took the batch's row version
        #expect(try store.verify() == [])
    }
}
