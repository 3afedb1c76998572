// DocStore under test: the notes model as @Model classes, used through a context as an app
// would — objects inserted and related, one save; fetches by ID, whole-entity fetches and
// relationship reads through objects. The store is durable (`.full`): save returns once synced.

import BenchmarkSupport
import DocStore
import Foundation

@Model final class Folder: ManagedObject {
    var name: String = ""
    @Relationship(deleteRule: .cascade, inverse: \Note.folder) var notes: Set<Note> = []
}

@Model final class Note: ManagedObject {
    #Index<Note>([\.folder, \.createdAt])
    var title: String = ""
    var body: String = ""
    @Attribute(.indexed) var createdAt: Date = Date(timeIntervalSinceReferenceDate: 0)
    var updatedAt: Date = Date(timeIntervalSinceReferenceDate: 0)
    var isRead: Bool = false
    var folder: Folder?
    var tags: Set<Tag> = []
}

@Model final class Tag: ManagedObject {
    var name: String = ""
    @Relationship(inverse: \Note.tags) var notes: Set<Note> = []
}

final class DocStoreNotes: NotesSubject {
    static let name = "DocStore"
    let store: Store

    init(directory: String, create: Bool) throws {
        store = try Store(url: URL(fileURLWithPath: directory + "/notes.docstore"), models: [Folder.self, Note.self, Tag.self])
    }

    func insertAll(_ data: NotesData) throws {
        let context = Context(store: store)
        let folders = data.folderNames.map { name in
            let f = Folder()
            f.name = name
            return f
        }
        let tags = data.tagNames.map { name in
            let t = Tag()
            t.name = name
            return t
        }
        for f in folders { try context.insert(f) }
        for t in tags { try context.insert(t) }
        for n in data.notes {
            let note = Self.note(n)
            try context.insert(note)
            note.folder = folders[n.folder - 1]
            note.tags = [tags[n.tags[0] - 1], tags[n.tags[1] - 1]]
        }
        try context.save()
    }

    /// A new note with `n`'s attributes (not yet inserted or related).
    static func note(_ n: NoteData) -> Note {
        let note = Note()
        note.title = n.title
        note.body = n.body
        note.createdAt = n.createdAt
        note.updatedAt = n.updatedAt
        note.isRead = n.isRead
        return note
    }

    func note(_ id: Int, in context: Context) throws -> Note? {
        try context.object(with: store.objectID(forEntityName: "Note", number: UInt64(id))) as? Note
    }

    func fetchByID(_ ids: [Int]) throws -> Int {
        let context = Context(store: store)
        var total = 0
        for id in ids { total += try note(id, in: context)?.title.count ?? 0 }
        return total
    }

    func fetchAllReadingEverything() throws -> Int {
        let context = Context(store: store)
        var count = 0
        for note in try context.fetch(Note.self) {
            if !note.title.isEmpty && !note.body.isEmpty && note.createdAt < note.updatedAt { count += 1 }
            _ = note.isRead
        }
        return count
    }

    func folderNotes(_ folders: Int) throws -> Int {
        try notesSeen(through: Folder.self, count: folders) { $0.notes }
    }

    func tagNotes(_ tags: Int) throws -> Int {
        try notesSeen(through: Tag.self, count: tags) { $0.notes }
    }

    /// For objects 1…count of `type`, the notes of each (reading their titles).
    private func notesSeen<T: ManagedObject>(through type: T.Type, count: Int, _ notes: (T) -> Set<Note>) throws -> Int {
        let context = Context(store: store)
        var seen = 0
        for id in 1...count {
            guard let owner = try context.object(with: store.objectID(forEntityName: String(describing: type), number: UInt64(id))) as? T else { continue }
            for note in notes(owner) where !note.title.isEmpty { seen += 1 }
        }
        return seen
    }

    func delete(_ ids: [Int]) throws {
        let context = Context(store: store)
        for id in ids {
            if let note = try note(id, in: context) { try context.delete(note) }
        }
        try context.save()
    }

    func findAndDelete(_ dates: [Date]) throws -> Int {
        let context = Context(store: store)
        var deleted = 0
        for date in dates {
            let request = FetchRequest<Note>(predicate: try QueryPredicate(format: "createdAt == %@", date), fetchLimit: 1)
            guard let note = try context.fetch(request).first else { continue }
            try context.delete(note)
            deleted += 1
        }
        try context.save()
        return deleted
    }

    func findOrCreate(_ notes: ArraySlice<NoteData>, firstNewID: Int64) throws -> Int {
        let context = Context(store: store)
        var inserted = 0
        for n in notes {
            for _ in 0..<2 {
                let request = FetchRequest<Note>(predicate: try QueryPredicate(format: "createdAt == %@", n.createdAt), fetchLimit: 1)
                guard try context.fetch(request).isEmpty else { continue }
                let note = Self.note(n)
                try context.insert(note)
                note.folder = try context.object(with: store.objectID(forEntityName: "Folder", number: UInt64(n.folder))) as? Folder
                inserted += 1
            }
        }
        try context.save()
        return inserted
    }

    /// The request a query workload runs, for query number `i` (format strings, parsed each
    /// time, as an app building a query per screen would).
    func request(_ workload: Workload, _ data: NotesData, _ i: Int) throws -> FetchRequest<Note> {
        let d = data.queryDates[i % data.queryDates.count]
        switch workload {
        case .queryEqual:
            return FetchRequest(predicate: try QueryPredicate(format: "createdAt == %@", d))
        case .queryRange:
            return FetchRequest(predicate: try QueryPredicate(format: "createdAt >= %@ AND createdAt < %@", d, d.addingTimeInterval(100 * 60)),
                                sortDescriptors: [SortKey("createdAt")])
        case .queryFirstPage:
            return FetchRequest(sortDescriptors: [SortKey("createdAt", ascending: false)], fetchLimit: 20)
        case .queryFolderPage:
            let folder = try store.objectID(forEntityName: "Folder", number: UInt64(1 + i % data.folderNames.count))
            return FetchRequest(predicate: try QueryPredicate(format: "folder == %@", folder),
                                sortDescriptors: [SortKey("createdAt", ascending: false)], fetchLimit: 20)
        case .queryTag:
            return FetchRequest(predicate: try QueryPredicate(format: "ANY tags.name == %@", data.tagNames[i % data.tagNames.count]))
        case .queryCount:
            return FetchRequest(predicate: try QueryPredicate(format: "isRead == NO AND createdAt > %@", d))
        default:
            return FetchRequest(predicate: try QueryPredicate(format: "title CONTAINS[cd] %@", "milk"))
        }
    }

    static func repetitions(_ workload: Workload, _ data: NotesData) -> Int {
        switch workload {
        case .queryEqual: 2_000
        case .queryRange, .queryFirstPage, .queryFolderPage: 500
        case .queryTag: data.tagNames.count
        case .queryCount: 200
        default: 5
        }
    }

    func query(_ workload: Workload, _ data: NotesData) throws -> Int {
        let context = Context(store: store)
        var total = 0
        for i in 0..<Self.repetitions(workload, data) {
            let request = try request(workload, data, i)
            if workload == .queryCount {
                total += try context.count(for: request)
            } else {
                for note in try context.fetch(request) where !note.title.isEmpty { total += 1 }
            }
        }
        return total
    }

    /// Seconds per parse of a typical format with three arguments: again (cached), and the
    /// first time (1 000 formats that differ in a literal).
    static func parseCost() throws -> (cached: Double, cold: Double) {
        let date = Date(timeIntervalSinceReferenceDate: 800_000_000)
        let format = "title BEGINSWITH[c] %@ AND createdAt > %@ AND ANY tags.name == %@"
        _ = try QueryPredicate(format: format, "buy", date, "tag-1")
        let rounds = 100_000
        let cached = try timed {
            for i in 0..<rounds { _ = try QueryPredicate(format: format, "buy", date, i % 2 == 0 ? "tag-1" : "tag-2") }
        } / Double(rounds)
        var colds: [Double] = []
        for i in 0..<1_000 {
            let fresh = "title BEGINSWITH[c] %@ AND createdAt > %@ AND ANY tags.name == %@ AND isRead != \(i + 2)"
            colds.append(try timed { _ = try QueryPredicate(format: fresh, "buy", date, "tag-1") })
        }
        return (cached, median(colds))
    }

    /// Index entries the first query of a workload reads (explain's analysis).
    func entriesRead(_ workload: Workload, _ data: NotesData) throws -> Int? {
        let plan = try Context(store: store).explain(try request(workload, data, 0), analyze: true)
        guard let line = plan.split(separator: "\n").last, line.contains("read:") else { return nil }
        return line.split { !$0.isNumber }.first.flatMap { Int($0) }
    }

    func fetchOne(_ id: Int) throws -> String {
        let context = Context(store: store)     // kept while its object is read: objects hold it weakly
        return try note(id, in: context)?.title ?? ""
    }

    func close() throws { try store.close() }

    /// Bytes of memory per fault: `count` notes made as faults (not loaded) and held.
    func faultBytes(_ count: Int) throws -> Double {
        let context = Context(store: store)
        let before = residentBytes()
        var held: [ManagedObject] = []
        held.reserveCapacity(count)
        for id in 1...count { held.append(try context.object(with: store.objectID(forEntityName: "Note", number: UInt64(id)))) }
        let after = residentBytes()
        guard held.allSatisfy(\.isFault) else { throw BenchmarkFailure("fault cost: objects were loaded") }
        // The array of references (8 bytes each) is the caller's, not the faults'.
        return Double(after - before) / Double(count) - 8
    }
}
