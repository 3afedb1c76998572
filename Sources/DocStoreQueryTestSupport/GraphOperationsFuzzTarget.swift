// GraphOperationsFuzzTarget: the object-graph differential fuzz target (`graph-operations`). The
// input bytes drive a context through inserts, relationship edits from either side, reordering,
// deletes under every delete rule, blobs, saves, failed saves and rollbacks on an in-memory store,
// against a plain model of what the graph should be (GraphModel.swift). Any difference is a
// finding.
//
//   GO1 after every operation (every fourth, for libFuzzer's speed), every save and rollback,
//       and at the end, the context shows exactly the pending model: every attribute, both
//       sides of every relationship (Folder.notes in order); a fetch of each entity returns
//       exactly the model's objects, and a fetch by relationship predicate the model's members.
//   GO2 a save succeeds exactly when the model says it may (no unique name shared by two
//       folders, no deleted project still reaching a note: the deny rule); a failed save throws
//       a typed error and changes neither the context nor the store.
//   GO3 a fresh context shows exactly the saved model (checked on demand and at the end), and
//       the store's full check (pages, blobs, records, indexes, both sides of every link) is
//       clean after the input.
//
// The schema uses every delete rule: Folder.notes cascades (ordered), Note.files cascades to
// attachments whose bytes go to blob files above 512 bytes, Note.tags/Tag.notes and Note.folder
// and Note.project nullify, Project.notes denies. Folder names are unique.

import DocStoreCore
import DocStoreTestSupport
import Foundation

extension FuzzTargets {
    /// The graph-operations target's schema (for tests that replay its findings by hand).
    public static var graphSchema: Schema { GraphOperationsRun.schema }

    /// GO1–GO3. `checkEvery`: the whole graph is compared every this many operations (and
    /// after saves and rollbacks); `maxSteps`: operations per input. libFuzzer runs 4 and 120,
    /// for executions a second; the unit suite runs 1 and 300, reading every object between any
    /// two operations over long runs — the interleaving of loads and edits its first findings
    /// needed.
    public static func graphOperations(_ data: [UInt8], checkEvery: Int = 4, maxSteps: Int = 120) -> String? {
        guard data.count <= 4096 else { return nil }
        do {
            var run = try GraphOperationsRun(data)
            run.checkEvery = max(checkEvery, 1)
            run.maxSteps = maxSteps
            try run.run()
            return nil
        } catch let finding as GraphFinding {
            return finding.description
        } catch {
            return "unexpected error on valid operations: \(error)"
        }
    }

    /// How many saves GO2 saw refused in a clean run of `data` (for the test that the refusal
    /// paths are reached); 0 when the run has a finding.
    public static func graphOperationsRefusedSaves(_ data: [UInt8]) -> Int {
        guard var run = try? GraphOperationsRun(data) else { return 0 }
        run.checkEvery = 1
        run.maxSteps = 300
        do { try run.run() } catch { return 0 }
        return run.refusedSaves
    }
}

struct GraphFinding: Error, CustomStringConvertible {
    let description: String
}

/// One input's run: the store, the context, the models, and the input being read.
struct GraphOperationsRun {
    static let schema = Schema(entities: [
        EntityDescription(name: "Folder", attributes: [
            AttributeDescription(name: "name", type: .string, isUnique: true),
        ], relationships: [
            RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", isToMany: true, isOrdered: true, deleteRule: .cascade),
        ]),
        EntityDescription(name: "Note", attributes: [
            AttributeDescription(name: "title", type: .string, isIndexed: true),
        ], relationships: [
            RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes", isOptional: true),
            RelationshipDescription(name: "tags", destination: "Tag", inverse: "notes", isToMany: true),
            RelationshipDescription(name: "project", destination: "Project", inverse: "notes", isOptional: true),
            RelationshipDescription(name: "files", destination: "Attachment", inverse: "note", isToMany: true, deleteRule: .cascade),
        ]),
        EntityDescription(name: "Tag", attributes: [
            AttributeDescription(name: "name", type: .string),
        ], relationships: [
            RelationshipDescription(name: "notes", destination: "Note", inverse: "tags", isToMany: true),
        ]),
        EntityDescription(name: "Project", attributes: [
            AttributeDescription(name: "name", type: .string),
        ], relationships: [
            RelationshipDescription(name: "notes", destination: "Note", inverse: "project", isToMany: true, deleteRule: .deny),
        ]),
        EntityDescription(name: "Attachment", attributes: [
            AttributeDescription(name: "name", type: .string),
            AttributeDescription(name: "bytes", type: .binaryData, allowsExternalStorage: true),
        ], relationships: [
            RelationshipDescription(name: "note", destination: "Note", inverse: "files", isOptional: false),
        ]),
    ])

    let data: [UInt8]
    var position = 0
    let store: Store
    var context: Context
    /// What the context should show.
    var pending = GraphModel()
    /// What the store holds.
    var saved = GraphModel()
    var counter = 0
    var refusedSaves = 0
    var checkEvery = 4
    /// Operations per input (libFuzzer: 120, for executions a second; the unit suite: 300).
    var maxSteps = 120
    var log: [String] = []

    init(_ data: [UInt8]) throws {
        self.data = data
        store = try Store.inMemory(schema: Self.schema, blobThreshold: 512)
        context = Context(store: store)
    }

    mutating func byte() -> UInt8 {
        defer { position += 1 }
        return position < data.count ? data[position] : 0
    }

    /// One of `ids` chosen by the next byte, in key order (nil when there are none).
    mutating func pick(_ ids: some Collection<ObjectID>) -> ObjectID? {
        let b = Int(byte())
        guard !ids.isEmpty else { return nil }
        let sorted = ids.sorted { $0.primaryKey < $1.primaryKey }
        return sorted[b % sorted.count]
    }

    func object(_ id: ObjectID) throws -> ManagedObject { try context.existingObject(with: id) }

    func fail(_ what: String) -> GraphFinding {
        GraphFinding(description: "\(what)\n  after: \(log.suffix(30).joined(separator: "; "))")
    }


    mutating func run() throws {
        var steps = 0
        while position < data.count, steps < maxSteps {
            steps += 1
            let before = log.count
            try step()
            // The whole graph, both sides and fetches, every `checkEvery` steps and after every
            // save or rollback: a difference stays until one of those (the finding's log shows
            // the last 30 steps).
            if steps % checkEvery == 0 || log[before...].contains(where: { $0.hasPrefix("save") || $0 == "rollback" }) {
                try expect(pending, in: context, "the context")
            }
        }
        // The end: whatever could be saved is saved, and the store checks clean.
        try expect(pending, in: context, "the context")
        if pending.saveRefusal == nil { try save() }
        try expect(saved, in: Context(store: store), "a fresh context")
        let problems = try store.verify()
        if !problems.isEmpty { throw fail("the store does not check: \(problems.prefix(3))") }
        // The context is dropped as it is, unsaved changes (a refused save's) included: under
        // libFuzzer, LeakSanitizer reports it if it is not freed (README § Contexts and memory).
        try store.close()
    }

    mutating func step() throws {
        counter += 1
        let op = byte() % 22
        switch op {
        case 0:
            let name = "f\(byte() % 12)"
            let f = try context.insertObject(forEntityName: "Folder")
            try f.setValue(name, forKey: "name")
            pending.folders[try id(f)] = .init(name: name, notes: [])
            log.append("insert folder \(name)")
        case 1, 2:
            let n = try context.insertObject(forEntityName: "Note")
            let title = "n\(byte() % 16)"
            try n.setValue(title, forKey: "title")
            let note = try id(n)
            pending.notes[note] = .init(title: title)
            log.append("insert note \(note.number)")
            if byte() % 2 == 0, let f = pick(pending.folders.keys) {
                try n.setValue(try object(f), forKey: "folder")
                pending.setFolder(note, f)
            }
            if byte() % 3 == 0, let p = pick(pending.projects.keys) {
                try n.setValue(try object(p), forKey: "project")
                pending.setProject(note, p)
            }
        case 3:
            let t = try context.insertObject(forEntityName: "Tag")
            try t.setValue("t\(counter)", forKey: "name")
            pending.tags[try id(t)] = .init(name: "t\(counter)")
            log.append("insert tag")
        case 4:
            let p = try context.insertObject(forEntityName: "Project")
            try p.setValue("p\(counter)", forKey: "name")
            pending.projects[try id(p)] = .init(name: "p\(counter)")
            log.append("insert project")
        case 5:
            guard let n = pick(pending.notes.keys) else { break }
            let size = byte() % 4 == 0 ? 500 + Int(byte()) * 4 : Int(byte())   // some past the blob threshold
            let fill = byte()
            let a = try context.insertObject(forEntityName: "Attachment")
            try a.setValue("a\(counter)", forKey: "name")
            try a.setValue(Data(repeating: fill, count: size), forKey: "bytes")
            try a.setValue(try object(n), forKey: "note")
            let attachment = try id(a)
            pending.attachments[attachment] = .init(name: "a\(counter)", size: size, fill: fill, note: n)
            pending.notes[n]?.files.insert(attachment)
            log.append("attach \(size) bytes to note \(n.number)")
        case 6, 7:
            guard let n = pick(pending.notes.keys) else { break }
            let f = byte() % 4 == 0 ? nil : pick(pending.folders.keys)
            if let f, byte() % 2 == 0 {
                log.append("append note \(n.number) to folder \(f.number)")
                let folder = try object(f)
                var list = try folder.value(forKey: "notes") as? [ManagedObject] ?? []
                let note = try object(n)
                if !list.contains(note) { list.append(note) }
                try folder.setValue(list, forKey: "notes")
            } else {
                log.append("set note \(n.number).folder = \(f.map { "\($0.number)" } ?? "nil")")
                try object(n).setValue(try f.map(object), forKey: "folder")
            }
            pending.setFolder(n, f)
        case 8:
            guard let f = pick(pending.folders.keys), let notes = pending.folders[f]?.notes, notes.count > 1 else { break }
            let from = Int(byte()) % notes.count, to = Int(byte()) % notes.count
            var reordered = notes
            reordered.insert(reordered.remove(at: from), at: to)
            log.append("move folder \(f.number).notes[\(from)] to \(to)")
            try object(f).setValue(try reordered.map(object), forKey: "notes")
            pending.folders[f]?.notes = reordered
        case 9, 10:
            guard let n = pick(pending.notes.keys), let t = pick(pending.tags.keys) else { break }
            let on = !(pending.notes[n]?.tags.contains(t) ?? false)
            let fromNote = byte() % 2 == 0
            log.append("\(on ? "link" : "unlink") note \(n.number) and tag \(t.number) from the \(fromNote ? "note" : "tag")")
            let (owner, key, other) = fromNote ? (try object(n), "tags", try object(t)) : (try object(t), "notes", try object(n))
            var set = try owner.value(forKey: key) as? Set<ManagedObject> ?? []
            if on { set.insert(other) } else { set.remove(other) }
            try owner.setValue(set, forKey: key)
            if on { pending.notes[n]?.tags.insert(t); pending.tags[t]?.notes.insert(n) } else {
                pending.notes[n]?.tags.remove(t); pending.tags[t]?.notes.remove(n)
            }
        case 11:
            // A note held by a deleted project (deny) keeps it until the note is deleted.
            let free = pending.notes.filter { $0.value.project.map { pending.denied[$0] == nil } ?? true }
            guard let n = pick(free.keys) else { break }
            let p = byte() % 3 == 0 ? nil : pick(pending.projects.keys)
            if let p, byte() % 2 == 0 {
                log.append("add note \(n.number) to project \(p.number).notes")
                let project = try object(p)
                var set = try project.value(forKey: "notes") as? Set<ManagedObject> ?? []
                set.insert(try object(n))
                try project.setValue(set, forKey: "notes")
            } else {
                log.append("set note \(n.number).project = \(p.map { "\($0.number)" } ?? "nil")")
                try object(n).setValue(try p.map(object), forKey: "project")
            }
            pending.setProject(n, p)
        case 12:
            switch byte() % 3 {
            case 0:
                guard let n = pick(pending.notes.keys) else { break }
                let title = "r\(byte() % 16)"
                log.append("retitle note \(n.number)")
                try object(n).setValue(title, forKey: "title")
                pending.notes[n]?.title = title
            case 1:
                guard let f = pick(pending.folders.keys) else { break }
                let name = "f\(byte() % 12)"
                log.append("rename folder \(f.number) to \(name)")
                try object(f).setValue(name, forKey: "name")
                pending.folders[f]?.name = name
            default:
                guard let a = pick(pending.attachments.keys) else { break }
                let size = Int(byte()) * 8, fill = byte()
                log.append("rewrite attachment \(a.number) with \(size) bytes")
                try object(a).setValue(Data(repeating: fill, count: size), forKey: "bytes")
                pending.attachments[a]?.size = size
                pending.attachments[a]?.fill = fill
            }
        case 13:
            guard let n = pick(pending.notes.keys) else { break }
            log.append("delete note \(n.number)")
            try context.delete(try object(n))
            pending.deleteNote(n)
        case 14:
            guard let f = pick(pending.folders.keys) else { break }
            log.append("delete folder \(f.number) (cascade)")
            try context.delete(try object(f))
            pending.deleteFolder(f)
        case 15:
            guard let t = pick(pending.tags.keys) else { break }
            log.append("delete tag \(t.number) (nullify)")
            try context.delete(try object(t))
            for n in pending.tags[t]?.notes ?? [] { pending.notes[n]?.tags.remove(t) }
            pending.tags.removeValue(forKey: t)
        case 16:
            guard let p = pick(pending.projects.keys) else { break }
            log.append("delete project \(p.number) (deny)")
            try context.delete(try object(p))
            pending.denied[p] = pending.projects[p]?.notes ?? []
            pending.projects.removeValue(forKey: p)
        case 17:
            guard let a = pick(pending.attachments.keys) else { break }
            log.append("delete attachment \(a.number)")
            try context.delete(try object(a))
            pending.deleteAttachment(a)
        case 18, 19:
            try save()
        case 20:
            log.append("rollback")
            context.rollback()
            pending = saved
        default:
            log.append("check the store")
            try expect(saved, in: Context(store: store), "a fresh context")
        }
    }

    func id(_ object: ManagedObject) throws -> ObjectID {
        guard let id = object.objectID else { throw fail("an inserted object has no ID") }
        return id
    }

    /// GO2: a save, which the model says succeeds or is refused.
    mutating func save() throws {
        let refusal = pending.saveRefusal
        log.append("save\(refusal.map { " (refused: \($0))" } ?? "")")
        do {
            try context.save()
        } catch {
            guard let refusal else { throw fail("a save the model allows failed: \(error)") }
            guard [DocStoreError.Code.uniqueConstraint, .deleteDenied, .validation].contains(error.code) else {
                throw fail("a save refused for \(refusal) threw \(error.code): \(error)")
            }
            try expect(saved, in: Context(store: store), "a fresh context after a refused save")
            refusedSaves += 1
            return
        }
        if let refusal { throw fail("a save the model refuses (\(refusal)) succeeded") }
        pending.denied = [:]
        saved = pending
    }

    /// GO1 and GO3: what `context` shows is `model`, read from both sides and through fetches.
    func expect(_ model: GraphModel, in context: Context, _ what: String) throws {
        func ids(_ value: Any?) -> [ObjectID] {
            if let list = value as? [ManagedObject] { return list.compactMap(\.objectID) }
            if let set = value as? Set<ManagedObject> { return set.compactMap(\.objectID) }
            return []
        }
        func reference(_ value: Any?) -> ObjectID? { (value as? ManagedObject)?.objectID }
        var seen = GraphModel()
        for id in model.folders.keys {
            let f = try context.existingObject(with: id)
            seen.folders[id] = .init(name: try f.value(forKey: "name") as? String ?? "?", notes: ids(try f.value(forKey: "notes")))
        }
        for id in model.notes.keys {
            let n = try context.existingObject(with: id)
            seen.notes[id] = .init(title: try n.value(forKey: "title") as? String ?? "?", folder: reference(try n.value(forKey: "folder")),
                                   tags: Set(ids(try n.value(forKey: "tags"))), project: reference(try n.value(forKey: "project")),
                                   files: Set(ids(try n.value(forKey: "files"))))
        }
        for id in model.tags.keys {
            let t = try context.existingObject(with: id)
            seen.tags[id] = .init(name: try t.value(forKey: "name") as? String ?? "?", notes: Set(ids(try t.value(forKey: "notes"))))
        }
        for id in model.projects.keys {
            let p = try context.existingObject(with: id)
            seen.projects[id] = .init(name: try p.value(forKey: "name") as? String ?? "?", notes: Set(ids(try p.value(forKey: "notes"))))
        }
        for id in model.attachments.keys {
            let a = try context.existingObject(with: id)
            let bytes = try a.value(forKey: "bytes") as? Data ?? Data([1, 2, 3])
            let fill = bytes.first ?? model.attachments[id]?.fill ?? 0
            let size = bytes.allSatisfy { $0 == fill } ? bytes.count : -1
            seen.attachments[id] = .init(name: try a.value(forKey: "name") as? String ?? "?", size: size, fill: fill,
                                         note: reference(try a.value(forKey: "note")) ?? id)
        }
        seen.denied = model.denied
        if seen != model { throw fail("\(what) shows \(model.difference(from: seen))") }
        for entity in ["Folder", "Note", "Tag", "Project", "Attachment"] {
            let fetched = Set(try context.fetch(entityName: entity).compactMap(\.objectID))
            if fetched != model.ids(of: entity) {
                throw fail("\(what): a fetch of \(entity) returns \(fetched.map(\.number).sorted()), the model has \(model.ids(of: entity).map(\.number).sorted())")
            }
        }
        if let f = model.folders.keys.min(by: { $0.primaryKey < $1.primaryKey }) {
            let folder = try context.existingObject(with: f)
            // Built, not parsed: the parser's template cache holds predicates whose enum boxes
            // LeakSanitizer cannot see through (see Fuzz/run), and this target keeps leak checks on.
            let predicate = try QueryPredicate.comparison(QueryComparison(.path("folder"), .equal, .variable("folder")))
                .withSubstitutionVariables(["folder": folder])
            let request = FetchRequest<ManagedObject>(entityName: "Note", predicate: predicate)
            let fetched = Set(try context.fetch(request).compactMap(\.objectID))
            if fetched != Set(model.folders[f]?.notes ?? []) {
                throw fail("\(what): notes with folder == \(f.number) fetch as \(fetched.map(\.number).sorted()), the model has \(model.folders[f]?.notes.map(\.number) ?? [])")
            }
        }
    }
}
