// The property test of issue #3: a fixed-seed random sequence of inserts, deletes, relationship
// edits (from either side), undos and redos, saves, rollbacks and reopenings, checked after every step against a
// plain in-memory model of the graph: every attribute, both sides of every relationship (the
// ordered Folder.notes in order), delete rules (Folder.notes cascades, Note.tags and Note.folder
// nullify), and no dangling references. A failure names the seed, the step and the operation.

import DocStore
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct ObjectGraphPropertyTests {
    /// The expected graph: what the context should show.
    struct Model: Equatable {
        var folders: [ObjectID: (name: String, notes: [ObjectID])] = [:]
        var notes: [ObjectID: (title: String, folder: ObjectID?, tags: Set<ObjectID>)] = [:]
        var tags: [ObjectID: (name: String, notes: Set<ObjectID>)] = [:]

        static func == (a: Model, b: Model) -> Bool {
            a.folders.mapValues { "\($0.name)|\($0.notes)" } == b.folders.mapValues { "\($0.name)|\($0.notes)" }
                && a.notes.mapValues { "\($0.title)|\(String(describing: $0.folder))|\($0.tags.sorted { $0.primaryKey < $1.primaryKey })" }
                == b.notes.mapValues { "\($0.title)|\(String(describing: $0.folder))|\($0.tags.sorted { $0.primaryKey < $1.primaryKey })" }
                && a.tags.mapValues { "\($0.name)|\($0.notes.sorted { $0.primaryKey < $1.primaryKey })" }
                == b.tags.mapValues { "\($0.name)|\($0.notes.sorted { $0.primaryKey < $1.primaryKey })" }
        }

        mutating func setFolder(_ note: ObjectID, _ folder: ObjectID?) {
            guard let old = notes[note]?.folder, old == folder else {
                if let old = notes[note]?.folder { folders[old]?.notes.removeAll { $0 == note } }
                notes[note]?.folder = folder
                if let folder { folders[folder]?.notes.append(note) }
                return
            }
        }

        mutating func deleteNote(_ note: ObjectID) {
            setFolder(note, nil)
            for tag in notes[note]?.tags ?? [] { tags[tag]?.notes.remove(note) }
            notes.removeValue(forKey: note)
        }
    }

    static let schema = SchemaValidationTests.notesModel()

    @Test(arguments: [1, 2, 3, 42])
    func randomEditsMatchThePlainModel(seed: UInt64) throws {
        let dir = TemporaryDirectory("graph-\(seed)")
        defer { withExtendedLifetime(dir) {} }
        let url = URL(fileURLWithPath: dir.file("graph.docstore"))
        var store = try Store(url: url, schema: Self.schema, durability: .off)
        var context = Context(store: store)
        context.undoManager = UndoManager()
        var undoModels: [Model] = []   // the model before each undoable step since the last save
        var redoModels: [Model] = []
        var rng = SplitMix64(seed: seed)
        var saved = Model()
        var pending = Model()
        var counter = 0
        var keep: [ManagedObject] = []   // some objects the "app" holds on to; the rest may be released

        func object(_ id: ObjectID) throws -> ManagedObject { try context.object(with: id) }
        func pick<T>(_ ids: some Collection<T>) -> T? where T: Hashable {
            let sorted = ids.sorted { "\($0)" < "\($1)" }
            return sorted.isEmpty ? nil : sorted[Int(rng.next() % UInt64(sorted.count))]
        }

        for step in 0..<300 {
            counter += 1
            let roll = rng.next() % 108
            var op = ""
            let before = pending
            context.undoManager?.beginUndoGrouping()
            switch roll {
            case 0..<8:
                op = "insert folder"
                let f = try context.insertObject(forEntityName: "Folder")
                try f.setValue("f\(counter)", forKey: "name")
                pending.folders[try #require(f.objectID)] = ("f\(counter)", [])
                if rng.next() % 2 == 0 { keep.append(f) }
            case 8..<25:
                op = "insert note"
                let n = try context.insertObject(forEntityName: "Note")
                try n.setValue("n\(counter)", forKey: "title")
                try n.setValue(Date(timeIntervalSinceReferenceDate: Double(counter)), forKey: "createdAt")
                try n.setValue(false, forKey: "isRead")
                try n.setValue(1, forKey: "rating")
                let id = try #require(n.objectID)
                pending.notes[id] = ("n\(counter)", nil, [])
                if let f = pick(pending.folders.keys) {
                    try n.setValue(try object(f), forKey: "folder")
                    pending.setFolder(id, f)
                }
            case 25..<31:
                op = "insert tag"
                let t = try context.insertObject(forEntityName: "Tag")
                try t.setValue("t\(counter)", forKey: "name")
                pending.tags[try #require(t.objectID)] = ("t\(counter)", [])
            case 31..<46:
                guard let n = pick(pending.notes.keys) else { break }
                let f = rng.next() % 4 == 0 ? nil : pick(pending.folders.keys)
                if let f, rng.next() % 2 == 0 {
                    op = "append \(n) to \(f).notes"
                    let folder = try object(f)
                    var list = try folder.value(forKey: "notes") as? [ManagedObject] ?? []
                    let note = try object(n)
                    if !list.contains(note) { list.append(note) }
                    try folder.setValue(list, forKey: "notes")
                } else {
                    op = "set \(n).folder = \(String(describing: f))"
                    try object(n).setValue(try f.map(object), forKey: "folder")
                }
                pending.setFolder(n, f)
            case 46..<60:
                guard let n = pick(pending.notes.keys), let t = pick(pending.tags.keys) else { break }
                let on = !(pending.notes[n]?.tags.contains(t) ?? false)
                let fromNote = rng.next() % 2 == 0
                op = "\(on ? "link" : "unlink") \(n) and \(t) from the \(fromNote ? "note" : "tag")"
                let (owner, key, other) = fromNote ? (try object(n), "tags", try object(t)) : (try object(t), "notes", try object(n))
                var set = try owner.value(forKey: key) as? Set<ManagedObject> ?? []
                if on { set.insert(other) } else { set.remove(other) }
                try owner.setValue(set, forKey: key)
                if on { pending.notes[n]?.tags.insert(t); pending.tags[t]?.notes.insert(n) } else {
                    pending.notes[n]?.tags.remove(t); pending.tags[t]?.notes.remove(n)
                }
            case 60..<66:
                guard let n = pick(pending.notes.keys) else { break }
                op = "retitle \(n)"
                try object(n).setValue("r\(counter)", forKey: "title")
                pending.notes[n]?.title = "r\(counter)"
            case 66..<72:
                guard let n = pick(pending.notes.keys) else { break }
                op = "delete \(n)"
                try context.delete(try object(n))
                pending.deleteNote(n)
            case 72..<75:
                guard let f = pick(pending.folders.keys) else { break }
                op = "delete \(f) (cascade)"
                try context.delete(try object(f))
                for n in pending.folders[f]?.notes ?? [] { pending.deleteNote(n) }
                pending.folders.removeValue(forKey: f)
            case 75..<78:
                guard let t = pick(pending.tags.keys) else { break }
                op = "delete \(t) (nullify)"
                try context.delete(try object(t))
                for n in pending.tags[t]?.notes ?? [] { pending.notes[n]?.tags.remove(t) }
                pending.tags.removeValue(forKey: t)
            case 100..<108:
                // Undo (or redo) one group: the model goes back to its state before it.
                let isUndo = roll < 105
                op = isUndo ? "undo" : "redo"
                context.undoManager?.endUndoGrouping()
                if let target = isUndo ? undoModels.popLast() : redoModels.popLast() {
                    if isUndo { context.undoManager?.undo(); redoModels.append(pending) } else {
                        context.undoManager?.redo(); undoModels.append(pending)
                    }
                    pending = target
                }
            case 78..<90:
                op = "save"
                context.undoManager?.endUndoGrouping()
                try context.save()
                saved = pending
            case 90..<95:
                op = "rollback"
                context.undoManager?.endUndoGrouping()
                context.rollback()
                pending = saved
                keep.removeAll { $0.isInvalidated }
            default:
                op = "reopen"
                context.undoManager?.endUndoGrouping()
                keep = []
                if rng.next() % 2 == 0 {
                    try store.close()
                    store = try Store(url: url, schema: Self.schema, durability: .off)
                }
                context = Context(store: store)
                context.undoManager = UndoManager()
                pending = saved
            }
            if op.hasPrefix("save") || op.hasPrefix("rollback") || op.hasPrefix("reopen") {
                undoModels = []
                redoModels = []
            } else if op != "undo" && op != "redo" {
                context.undoManager?.endUndoGrouping()
                if before != pending {
                    undoModels.append(before)
                    redoModels = []
                }
            }
            let seen = try observe(context, pending)
            #expect(seen == pending, "seed \(seed), step \(step), after \(op)")
            if seen != pending { break }
        }
        try context.save()
        #expect(try store.verify().isEmpty, "seed \(seed): integrity check")
        try store.close()
    }

    /// What the context shows for the objects the model knows, read from both sides.
    func observe(_ c: Context, _ model: Model) throws -> Model {
        var seen = Model()
        func ids(_ value: Any?) -> [ObjectID] {
            if let list = value as? [ManagedObject] { return list.compactMap(\.objectID) }
            if let set = value as? Set<ManagedObject> { return set.compactMap(\.objectID) }
            return []
        }
        for id in model.folders.keys {
            let f = try c.object(with: id)
            seen.folders[id] = (f["name"] as? String ?? "?", ids(f["notes"]))
        }
        for id in model.notes.keys {
            let n = try c.object(with: id)
            seen.notes[id] = (n["title"] as? String ?? "?", (n["folder"] as? ManagedObject)?.objectID, Set(ids(n["tags"])))
        }
        for id in model.tags.keys {
            let t = try c.object(with: id)
            seen.tags[id] = (t["name"] as? String ?? "?", Set(ids(t["notes"])))
        }
        return seen
    }
}
