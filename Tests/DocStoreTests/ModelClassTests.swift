// Model classes declared with @Model: the notes model as an app would write it, saved, reopened,
// with relationships kept on both sides (one side declares the inverse), a cascade delete, an
// abstract parent entity fetched with its sub-entity, Codable attributes, objects related before
// insert, and Observation of typed properties.

import DocStore
import DocStoreTestSupport
import Foundation
import Observation
import Testing

struct Location: Codable, Equatable {
    var latitude: Double
    var longitude: Double
}

@Model final class Folder: ManagedObject {
    @Attribute(.unique) var name: String
    @Relationship(deleteRule: .cascade) var notes: [Note] = []

    init(name: String) {
        self.name = name
    }
}

@Model final class Note: ManagedObject {
    @Attribute(.maxLength(200)) var title: String = ""
    var body: String?
    @Attribute(.indexed) var createdAt: Date = Date(timeIntervalSinceReferenceDate: 0)
    var isRead: Bool = false
    var rating: Int16 = 0
    @Relationship(inverse: \Folder.notes) var folder: Folder?
    var tags: Set<Tag> = []
    var location: Location?
    var checklist: [String] = []

    init(title: String, folder: Folder? = nil) {
        self.title = title
        self.folder = folder
    }
}

@Model final class Tag: ManagedObject {
    @Attribute(.unique) var name: String
    @Relationship(inverse: \Note.tags) var notes: Set<Note> = []

    init(name: String) {
        self.name = name
    }
}

@Model(isAbstract: true) class Item: ManagedObject {
    var label: String = ""
}

/// Records its lifecycle hooks; refuses to be saved with the label "forbidden".
@Model final class Journal: ManagedObject {
    var label: String = ""
    @Transient var events: [String] = []

    override func awakeFromInsert() { events.append("awakeFromInsert") }
    override func awakeFromFetch() { events.append("awakeFromFetch") }
    override func willSave() { events.append("willSave") }
    override func didSave() { events.append("didSave") }
    override func prepareForDeletion() { events.append("prepareForDeletion") }
    override func willTurnIntoFault() { events.append("willTurnIntoFault") }
    override func validateForInsert() throws {
        if label == "forbidden" { throw DocStoreError(.validation, "label must not be forbidden", property: "label") }
    }
}

@Model final class Photo: Item {
    var pixels: Int = 0
}

@Suite struct ModelClassTests {
    static let models: [ManagedObject.Type] = [Folder.self, Note.self, Tag.self, Item.self, Photo.self, Journal.self]

    @Test func theClassesDescribeTheirSchema() throws {
        let schema = Schema(models: Self.models)
        try schema.validate()
        let note = try #require(schema.entity(named: "Note"))
        #expect(note.attributes.map(\.name) == ["title", "body", "createdAt", "isRead", "rating", "location", "checklist"])
        #expect(note.attributes.map(\.type.description) == ["String", "String", "Date", "Bool", "Int16", "Codable(Location)", "Codable(Array<String>)"])
        #expect(note.attributes[1].isOptional && !note.attributes[0].isOptional)
        #expect(note.attributes[0].maxLength == 200 && note.attributes[0].defaultValue == .string(""))
        #expect(note.attributes[2].isIndexed)
        #expect(note.relationships.map(\.name) == ["folder", "tags"])
        let folderNotes = try #require(schema.entity(named: "Folder")?.relationships.first)
        #expect(folderNotes.isToMany && folderNotes.isOrdered && folderNotes.deleteRule == .cascade)
        #expect(folderNotes.inverse == "folder")              // inferred from Note.folder's @Relationship
        #expect(schema.entity(named: "Photo")?.parent == "Item")
        #expect(schema.entity(named: "Item")?.isAbstract == true)
    }

    @Test func objectsMadeInCodeAreSavedAndReadBackTyped() throws {
        let dir = TemporaryDirectory("models")
        defer { withExtendedLifetime(dir) {} }
        let url = URL(fileURLWithPath: dir.file("models.docstore"))
        var noteID: ObjectID?
        do {
            let store = try Store(url: url, models: Self.models)
            let context = Context(store: store)
            let inbox = Folder(name: "Inbox")
            let note = Note(title: "Buy milk", folder: inbox)    // related before insert
            note.location = Location(latitude: 52.5, longitude: 13.4)
            note.checklist = ["milk", "bread"]
            try context.insert(note)                             // inserts the folder too
            #expect(inbox.managedObjectContext === context)
            #expect(inbox.notes == [note])                       // inverse kept from insert on
            let work = Tag(name: "work")
            note.tags.insert(work)                               // inserted through the relationship
            #expect(work.notes == [note])
            noteID = note.objectID
            try context.save()
            try store.close()
        }
        let store = try Store(url: url, models: Self.models)
        let context = Context(store: store)
        let id = try #require(noteID)
        let note = try #require(try context.existingObject(with: id) as? Note)
        #expect(note.title == "Buy milk")
        #expect(note.body == nil)
        #expect(note.isRead == false)
        #expect(note.location == Location(latitude: 52.5, longitude: 13.4))
        #expect(note.checklist == ["milk", "bread"])
        #expect(note.folder?.name == "Inbox")
        #expect(note.folder?.notes == [note])
        #expect(note.tags.map(\.name) == ["work"])
        #expect(note["title"] as? String == "Buy milk")          // the same object by key
        try store.close()
    }

    @Test func aCascadeDeleteRemovesTheFolderAndItsNotes() throws {
        let store = try Store.inMemory(models: Self.models)
        let context = Context(store: store)
        let folder = Folder(name: "Trip")
        try context.insert(folder)
        for i in 0..<3 { folder.notes.append(Note(title: "day \(i)")) }
        #expect(folder.notes.map(\.title) == ["day 0", "day 1", "day 2"])
        #expect(folder.notes.allSatisfy { $0.folder === folder })
        try context.save()
        let notes = folder.notes
        try context.delete(folder)
        #expect(notes.allSatisfy { $0.isDeleted })
        try context.save()
        #expect(notes.allSatisfy { $0.title.hasPrefix("day") })  // last known values, no trap
    }

    @Test func aSubEntityIsMadeOfItsClassAndHasItsParentsProperties() throws {
        let store = try Store.inMemory(models: Self.models)
        let context = Context(store: store)
        let photo = Photo()
        photo.label = "sunset"
        photo.pixels = 12_000_000
        try context.insert(photo)
        try context.save()
        let id = try #require(photo.objectID)
        let other = Context(store: store)
        let fetched = try other.existingObject(with: id)
        let typed = try #require(fetched as? Photo)
        #expect(typed.label == "sunset" && typed.pixels == 12_000_000)
        let abstract = Item()
        #expect(throws: DocStoreError.self) { try context.insert(abstract) }   // abstract
    }

    @Test func typedPropertiesAreObservable() throws {
        let store = try Store.inMemory(models: Self.models)
        let context = Context(store: store)
        let note = Note(title: "a")
        try context.insert(note)
        final class Flag: @unchecked Sendable { var fired = false }   // test-only, one thread
        let flag = Flag()
        withObservationTracking { _ = note.title } onChange: { flag.fired = true }
        note.isRead = true
        #expect(!flag.fired)
        note.title = "b"
        #expect(flag.fired)
    }

    @Test func invalidTypedWritesAreReportedAtSave() throws {
        let store = try Store.inMemory(models: Self.models)
        let context = Context(store: store)
        let note = Note(title: String(repeating: "x", count: 201))
        try context.insert(note)
        let other = Context(store: store)
        let foreign = Folder(name: "elsewhere")
        try other.insert(foreign)
        note.folder = foreign                                  // another context: refused
        let error = #expect(throws: DocStoreError.self) { try context.save() }
        #expect(error?.code == .validation)
        #expect(Set(error?.problems.compactMap(\.property) ?? []) == ["title", "folder"])
    }

    @Test func fetchingAParentEntityReturnsItsSubEntitiesAndPendingInserts() throws {
        let store = try Store.inMemory(models: Self.models)
        let context = Context(store: store)
        for i in 0..<3 {
            let photo = Photo()
            photo.label = "p\(i)"
            try context.insert(photo)
        }
        try context.save()
        let unsaved = Photo()
        try context.insert(unsaved)
        let items = try context.fetch(Item.self)
        #expect(items.count == 4 && items.allSatisfy { $0 is Photo })
        #expect(items.last === unsaved)
        let other = Context(store: store)
        let fetched = try other.fetch(Photo.self)
        #expect(fetched.map(\.label) == ["p0", "p1", "p2"])
        #expect(fetched.allSatisfy { !$0.isFault })      // values came with the scan
        try other.delete(fetched[0])
        #expect(try other.fetch(Item.self).count == 2)  // deleted, not saved: left out
    }

    @Test func lifecycleHooksAndCustomValidationRun() throws {
        let store = try Store.inMemory(models: Self.models)
        let context = Context(store: store)
        let journal = Journal()
        journal.label = "forbidden"
        try context.insert(journal)
        #expect(journal.events == ["awakeFromInsert"])
        let error = #expect(throws: DocStoreError.self) { try context.save() }
        #expect(error?.code == .validation)
        #expect(error?.problems.first?.message.contains("label must not be forbidden") == true)
        journal.label = "fine"
        try context.save()
        #expect(journal.events == ["awakeFromInsert", "willSave", "willSave", "didSave"])
        context.refresh(journal, mergeChanges: false)
        #expect(journal.isFault && journal.events.last == "willTurnIntoFault")
        _ = journal.label
        #expect(journal.events.last == "awakeFromFetch")
        try context.delete(journal)
        #expect(journal.events.last == "prepareForDeletion")
    }

    @Test func relationshipsBetweenObjectsNotYetInsertedKeepBothSides() throws {
        let inbox = Folder(name: "Inbox"), archive = Folder(name: "Archive")
        let a = Note(title: "a", folder: inbox)             // set in the initializer
        let b = Note(title: "b")
        b.folder = inbox                                     // set afterwards
        #expect(Set(inbox.notes) == [a, b])
        b.folder = archive                                   // moved: the old folder loses it
        #expect(inbox.notes == [a] && archive.notes == [b])
        archive.notes = [a]                                  // from the to-many side
        #expect(a.folder === archive && b.folder == nil && inbox.notes.isEmpty)
        let work = Tag(name: "work")
        a.tags = [work]
        #expect(work.notes == [a])

        let store = try Store.inMemory(models: Self.models)
        let context = Context(store: store)
        try context.insert(a)                                // inserts archive and work too
        #expect(archive.managedObjectContext === context && work.managedObjectContext === context)
        #expect(archive.notes == [a] && work.notes == [a])
        try context.save()
        let other = Context(store: store)
        let id = try #require(a.objectID)
        let stored = try #require(try other.existingObject(with: id) as? Note)
        #expect(stored.folder?.name == "Archive" && stored.tags.map(\.name) == ["work"])
    }
}
