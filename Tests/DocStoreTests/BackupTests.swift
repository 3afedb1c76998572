// Online backup (Store+Backup.swift): a consistent copy while the store is in use — the copy
// holds exactly the commits up to its token, keeps object IDs and history, verifies clean, and
// is never left half-written at its URL.

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore

@Suite struct BackupTests {
    // one per test (swift-testing makes a suite value for each): removed when the test ends
    let temporary = TemporaryDirectory("backup")

    func temporaryURL(_ name: String) -> URL {
        URL(fileURLWithPath: temporary.file("\(name).docstore"))
    }

    @Test func aBackupTakenWhileSavesGoOnHoldsExactlyTheCommitsUpToItsToken() async throws {
        let url = temporaryURL("live")
        let store = try Store(url: url, models: ModelClassTests.models)
        let setup = Context(store: store)
        let inbox = Folder(name: "Inbox")
        try setup.insert(inbox)
        for i in 0..<200 { try setup.insert(Note(title: "seed \(i)", folder: inbox)) }
        try setup.save()

        // A writer saves one note at a time while the backup runs.
        final class Stop: @unchecked Sendable {     // test-only flag, set once, read by one thread
            var value = false
        }
        let stop = Stop()
        let writer = Task.detached {
            let c = Context(store: store, name: "writer")
            var n = 0
            while !stop.value && n < 2_000 {
                try c.insert(Note(title: "live \(n)"))
                try c.save()
                n += 1
            }
            return n
        }
        try await Task.sleep(for: .milliseconds(20))
        let target = temporaryURL("backup")
        let report = try store.backup(to: target)
        stop.value = true
        let written = try await writer.value
        #expect(written > 0)

        let copy = try Store(url: target, models: ModelClassTests.models)
        #expect(copy.identifier == store.identifier)
        #expect(try copy.verify() == [])
        // Exactly the transactions up to the token, and the notes they made.
        let kept = try store.history().filter { $0.token <= report.token }
        let copied = try copy.history()
        #expect(copied.map(\.token) == kept.map(\.token))
        let expected = Set(kept.flatMap(\.insertedObjectIDs).filter { $0.entityName == "Note" })
        let notes = try Context(store: copy).fetch(FetchRequest<Note>())
        #expect(Set(notes.compactMap(\.objectID)) == expected)
        #expect(notes.count >= 200 && notes.count <= 200 + written)
        // IDs mean the same objects in both.
        let id = try #require(notes.first { $0.title == "seed 7" }?.objectID)
        #expect((try Context(store: store).existingObject(with: id) as? Note)?.title == "seed 7")
        // The copy is a store of its own: it saves, and the original does not see it.
        let c = Context(store: copy)
        try c.insert(Note(title: "only in the copy"))
        try c.save()
        #expect(try Context(store: store).count(for: FetchRequest<Note>(predicate: try QueryPredicate(format: "title == 'only in the copy'"))) == 0)
        #expect(report.bytes > 0 && report.entries > 200)
        try copy.close()
        try store.close()
    }

    @Test func aBackupNeverOverwritesOrLeavesAPartialFile() throws {
        let url = temporaryURL("live")
        let store = try Store(url: url, models: ModelClassTests.models)
        let c = Context(store: store)
        try c.insert(Folder(name: "Inbox"))
        try c.save()
        let target = temporaryURL("existing")
        try Data("not a store".utf8).write(to: target)
        let error = #expect(throws: DocStoreError.self) { try store.backup(to: target) }
        #expect(error?.code == .storage)
        #expect(try Data(contentsOf: target) == Data("not a store".utf8))
        #expect(!FileManager.default.fileExists(atPath: target.path + ".migrating"))
        try store.close()
    }
}

/// Compaction through the store (Store+Compact.swift): after a batch delete of most notes the
/// file shrinks, contexts keep working with the same objects and IDs, and the graph is whole.
@Suite struct StoreCompactionTests {
    @Test func compactingAfterABatchDeleteShrinksTheFileAndKeepsTheGraph() throws {
        let dir = TemporaryDirectory("compact")
        defer { withExtendedLifetime(dir) {} }
        let url = URL(fileURLWithPath: dir.file("compact.docstore"))
        let store = try Store(url: url, models: ModelClassTests.models)
        let c = Context(store: store)
        let folders = (0..<5).map { Folder(name: "f\($0)") }
        for f in folders { try c.insert(f) }
        for i in 0..<3_000 {
            let n = Note(title: "note \(i)", folder: folders[i % 5])
            n.body = String(repeating: "x", count: 300)
            try c.insert(n)
        }
        try c.save()
        let kept = try c.fetch(FetchRequest<Note>(predicate: try QueryPredicate(format: "folder.name == 'f0'"))).compactMap(\.objectID)
        try c.execute(BatchDeleteRequest(entityName: "Note", predicate: try QueryPredicate(format: "folder.name != 'f0'")))
        try store.deleteHistory(through: try #require(try store.lastHistoryToken()))
        let before = try store.storageFigures()
        let report = try store.compact()
        let after = try store.storageFigures()
        #expect(report.bytesReclaimed > 0 && after.fileBytes < before.fileBytes && after.liveBytes == before.liveBytes, "\(report) \(before) \(after)")
        #expect(Double(after.fileBytes) <= Double(before.fileBytes) * 0.6, "\(report)")
        // The same objects, by the same IDs; the context goes on saving.
        let fresh = Context(store: store)
        #expect(try fresh.fetch(FetchRequest<Note>()).compactMap(\.objectID).sorted { $0.primaryKey < $1.primaryKey } == kept.sorted { $0.primaryKey < $1.primaryKey })
        let survivor = try #require(try c.existingObject(with: kept[0]) as? Note)
        survivor.title = "edited after compaction"
        try c.save()
        #expect(try store.verify() == [])
        try store.close()
        let reopened = try Store(url: url, models: ModelClassTests.models)
        #expect((try Context(store: reopened).existingObject(with: kept[0]) as? Note)?.title == "edited after compaction")
        try reopened.close()
    }
}
