// Batch operations against a model: random sequences of batch inserts, updates (constants,
// expressions, to-one moves) and deletes (by predicate, by ID, cascading from folders,
// nullifying from tags), mixed with context edits, on the notes model — checked after every
// step against a plain in-memory mirror of what each note should be, and by the store's full
// integrity check (records, indexes, both sides of every link). Fixed seeds; a failure prints
// its seed and step.

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore

@Suite struct BatchPropertyTests {
    /// What a note should be: its rating, folder (name) and tags (names).
    struct Expected: Equatable {
        var rating: Int
        var folder: String?
        var tags: Set<String>
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func batchesKeepTheGraphAsAModelSaysItShouldBe(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let store = try Store.inMemory(models: BatchOperationTests.models)
        let setup = Context(store: store)
        let folderNames = ["f0", "f1", "f2"], tagNames = ["t0", "t1", "t2", "t3"]
        var folders: [String: ObjectID] = [:], tags: [String: ObjectID] = [:]
        for name in folderNames { let f = Folder(name: name); try setup.insert(f) }
        for name in tagNames { let t = Tag(name: name); try setup.insert(t) }
        try setup.save()
        for f in try setup.fetch(FetchRequest<Folder>()) { folders[f.name] = f.objectID }
        for t in try setup.fetch(FetchRequest<Tag>()) { tags[t.name] = t.objectID }

        var mirror: [String: Expected] = [:]     // by title
        var nextTitle = 0
        for step in 0..<40 {
            let context = "seed \(seed), step \(step)"
            switch Int.random(in: 0..<6, using: &rng) {
            case 0, 1:      // insert a few notes
                var rows: [[String: Any]] = []
                for _ in 0..<Int.random(in: 1...30, using: &rng) {
                    let title = "n\(nextTitle)"
                    nextTitle += 1
                    let rating = Int.random(in: 0..<10, using: &rng)
                    let folder = folders.keys.sorted().randomElement(using: &rng).flatMap { Bool.random(using: &rng) ? $0 : nil }
                    let chosen = Set(tags.keys.sorted().filter { _ in Int.random(in: 0..<3, using: &rng) == 0 })
                    var row = BatchOperationTests.note(["title": title, "rating": rating])
                    if let folder, let id = folders[folder] { row["folder"] = id }
                    if !chosen.isEmpty { row["tags"] = chosen.sorted().compactMap { tags[$0] } }
                    rows.append(row)
                    mirror[title] = Expected(rating: rating, folder: folder.flatMap { folders[$0] == nil ? nil : $0 }, tags: chosen)
                }
                _ = try store.execute(BatchInsertRequest(entityName: "Note", objects: rows))
            case 2:         // raise low ratings and move those notes to a folder (or out of any)
                let below = Int.random(in: 1..<10, using: &rng)
                let target = folders.keys.sorted().randomElement(using: &rng).flatMap { Bool.random(using: &rng) ? $0 : nil }
                var request = BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "rating < %d", below))
                request.propertiesToUpdate = ["rating": try QueryExpression(format: "rating + 1"), "folder": target.flatMap { folders[$0] } as Any?]
                let result = try store.execute(request)
                var n = 0
                for (title, e) in mirror where e.rating < below {
                    mirror[title] = Expected(rating: e.rating + 1, folder: target, tags: e.tags)
                    n += 1
                }
                #expect(result.count == n, "\(context)")
            case 3:         // delete high ratings, or a few notes by ID
                if Bool.random(using: &rng) {
                    let above = Int.random(in: 5..<12, using: &rng)
                    _ = try store.execute(BatchDeleteRequest(entityName: "Note", predicate: try QueryPredicate(format: "rating > %d", above)))
                    mirror = mirror.filter { $0.value.rating <= above }
                } else {
                    let victims = Array(mirror.keys.sorted().shuffled(using: &rng).prefix(3))
                    let c = Context(store: store)
                    let ids = try c.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "title IN %@", victims))).compactMap(\.objectID)
                    _ = try store.execute(BatchDeleteRequest(objectIDs: ids))
                    for v in victims { mirror[v] = nil }
                }
            case 4:         // delete a folder (cascade) or a tag (nullify), then make a new one
                if Bool.random(using: &rng), let name = folders.keys.sorted().randomElement(using: &rng), let id = folders[name] {
                    _ = try store.execute(BatchDeleteRequest(objectIDs: [id]))
                    mirror = mirror.filter { $0.value.folder != name }
                    _ = try store.execute(BatchInsertRequest(entityName: "Folder", objects: [["name": name]]))
                    folders[name] = try Context(store: store).fetch(FetchRequest<Folder>(predicate: try QueryPredicate(format: "name == %@", name))).first?.objectID
                } else if let name = tags.keys.sorted().randomElement(using: &rng), let id = tags[name] {
                    _ = try store.execute(BatchDeleteRequest(objectIDs: [id]))
                    for (title, e) in mirror where e.tags.contains(name) { mirror[title]?.tags.remove(name) }
                    var request = BatchInsertRequest(entityName: "Tag", objects: [["name": name]])
                    request.resultType = .objectIDs
                    tags[name] = try store.execute(request).objectIDs.first
                }
            default:        // a context edits a note: rating, folder and a tag, then saves
                let c = Context(store: store)
                guard let title = mirror.keys.sorted().randomElement(using: &rng),
                      let note = try c.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "title == %@", title))).first else { continue }
                let rating = Int.random(in: 0..<10, using: &rng)
                note.rating = Int16(rating)
                let folder = folders.keys.sorted().randomElement(using: &rng)
                note.folder = try folder.flatMap { try folders[$0].map { try c.existingObject(with: $0) as? Folder } ?? nil }
                let tag = try #require(tagNames.randomElement(using: &rng))
                let tagID = try #require(tags[tag])
                let tagObject = try #require(try c.existingObject(with: tagID) as? Tag)
                var expected = mirror[title] ?? Expected(rating: 0, folder: nil, tags: [])
                if note.tags.contains(tagObject) { note.tags.remove(tagObject); expected.tags.remove(tag) } else { note.tags.insert(tagObject); expected.tags.insert(tag) }
                try c.save()
                expected.rating = rating
                expected.folder = folder
                mirror[title] = expected
            }

            // The store agrees with the mirror, note by note, and is whole.
            let c = Context(store: store)
            var actual: [String: Expected] = [:]
            for note in try c.fetch(FetchRequest<Note>()) {
                actual[note.title] = Expected(rating: Int(note.rating), folder: note.folder?.name, tags: Set(note.tags.map(\.name)))
            }
            #expect(actual == mirror, "\(context)")
            let problems = try store.verify()
            #expect(problems.isEmpty, "\(context): \(problems.prefix(5))")
            if actual != mirror || !problems.isEmpty { return }
            if step == 39 { print("seed \(seed): \(mirror.count) notes at the end") }
        }
    }
}
