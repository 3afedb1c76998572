// Persistent history (Format/history.md, Store+History.swift): every save is one transaction
// with its author, context name and per-object changes; tombstones keep preserved values;
// tokens resume exactly, survive Codable and reopening; filters; purging keeps later history;
// damaged history is a typed error.

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore

/// A contact synced with a server: its server ID outlives it in history.
@Model final class Contact: ManagedObject {
    @Attribute(.preserveValueOnDeletion) var serverID: String = ""
    var name: String = ""

    init(serverID: String, name: String) {
        self.serverID = serverID
        self.name = name
    }
}

@Suite struct HistoryTests {
    static let models: [ManagedObject.Type] = ModelClassTests.models + [Contact.self]

    func kinds(_ t: HistoryTransaction) -> [String] {
        t.changes.map { "\($0.changeType) \($0.entityName)" }
    }

    @Test func everySaveIsATransactionWithItsAuthorNameAndChanges() throws {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store, name: "editor")
        c.transactionAuthor = "app"
        let before = Date()
        let inbox = Folder(name: "Inbox")
        let milk = Note(title: "Buy milk", folder: inbox)
        let eggs = Note(title: "Buy eggs", folder: inbox)
        try c.insert(milk)
        try c.insert(eggs)
        try c.save()

        var history = try store.history()
        #expect(history.count == 1)
        let first = try #require(history.first)
        #expect(first.author == "app" && first.contextName == "editor")
        #expect(first.timestamp >= before.addingTimeInterval(-1) && first.timestamp <= Date().addingTimeInterval(1))
        #expect(Set(kinds(first)) == ["insert Folder", "insert Note"] && first.changes.count == 3)
        #expect(first.insertedObjectIDs == Set([inbox.objectID, milk.objectID, eggs.objectID].compactMap { $0 }))

        // An update names exactly the properties that changed, relationships included.
        let swift = Tag(name: "swift")
        milk.title = "Buy oat milk"
        milk.tags = [swift]
        try c.save()
        history = try store.history(after: first.token)
        let second = try #require(history.first)
        #expect(history.count == 1 && second.token > first.token)
        let update = try #require(second.changes.first { $0.changedObjectID == milk.objectID })
        #expect(update.changeType == .update && update.updatedProperties == ["title", "tags"])
        #expect(second.changes.contains { $0.changeType == .insert && $0.changedObjectID == swift.objectID })
        #expect(!second.changes.contains { $0.changedObjectID == eggs.objectID })

        // A cascade delete records every object it removed, and the inverse it changed.
        let doomed = Set([inbox.objectID, milk.objectID, eggs.objectID].compactMap { $0 })
        try c.delete(inbox)
        try c.save()
        let third = try #require(try store.history(after: second.token).first)
        #expect(doomed.count == 3 && third.deletedObjectIDs == doomed)
        #expect(third.changes.contains { $0.changeType == .update && $0.changedObjectID == swift.objectID && $0.updatedProperties == ["notes"] })
    }

    @Test func aValueChangedAndChangedBackIsNotRecordedNorRewritten() throws {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        let note = Note(title: "Same")
        try c.insert(note)
        try c.save()
        let token = try #require(try store.lastHistoryToken())
        note.title = "Different"
        note.title = "Same"
        #expect(c.hasChanges)
        try c.save()
        #expect(try store.history(after: token).isEmpty)
        #expect(try store.lastHistoryToken() == token)
    }

    @Test func tombstonesKeepThePreservedValuesOfDeletedObjects() throws {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        let ada = Contact(serverID: "srv-41", name: "Ada")
        try c.insert(ada)
        try c.save()
        ada.serverID = "srv-42"          // deleted with an unsaved change: the saved value is kept
        try c.delete(ada)
        try c.save()
        let delete = try #require(try store.history().last?.changes.first)
        #expect(delete.changeType == .delete)
        #expect(delete.tombstone == ["serverID": .string("srv-41")])
        #expect(delete.tombstone["name"] == nil)
    }

    @Test func tokensResumeExactlyAndSurviveCodableAndReopening() throws {
        let dir = TemporaryDirectory()
        let url = URL(fileURLWithPath: dir.file("History.docstore"))
        var tokens: [HistoryToken] = []
        do {
            let store = try Store(url: url, models: Self.models)
            let c = Context(store: store)
            for i in 0..<5 {
                try c.insert(Note(title: "note \(i)"))
                try c.save()
                tokens.append(try #require(try store.lastHistoryToken()))
            }
            try store.close()
        }
        #expect(tokens == tokens.sorted() && Set(tokens).count == 5)
        let store = try Store(url: url, models: Self.models)
        let all = try store.history()
        #expect(all.map(\.token) == tokens)
        let data = try JSONEncoder().encode(tokens[1])
        let decoded = try JSONDecoder().decode(HistoryToken.self, from: data)
        #expect(decoded == tokens[1])
        let rest = try store.history(after: decoded)
        #expect(rest.map(\.token) == Array(tokens[2...]))
        #expect(try store.history(after: tokens[4]).isEmpty)
        try store.close()
    }

    @Test func historyIsFilteredByEntityAuthorAndContextName() throws {
        let store = try Store.inMemory(models: Self.models)
        let app = Context(store: store, name: "ui")
        app.transactionAuthor = "app"
        let sync = Context(store: store, name: "sync")
        sync.transactionAuthor = "server"
        try app.insert(Note(title: "mine"))
        try app.save()
        try sync.insert(Tag(name: "theirs"))
        try sync.insert(Note(title: "theirs"))
        try sync.save()

        #expect(try store.history(author: "app").map(\.contextName) == ["ui"])
        #expect(try store.history(contextName: "sync").map(\.author) == ["server"])
        let tags = try store.history(entities: ["Tag"])
        #expect(tags.count == 1 && tags.first?.changes.map(\.entityName) == ["Tag"])
        // A sub-entity is in its parent's history.
        try app.insert(Photo())
        try app.save()
        #expect(try store.history(entities: ["Item"]).first?.changes.map(\.entityName) == ["Photo"])
        #expect(throws: DocStoreError.self) { try store.history(entities: ["Nope"]) }
    }

    @Test func purgingDeletesOldTransactionsAndKeepsLaterOnes() throws {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        for i in 0..<6 {
            try c.insert(Note(title: "note \(i)"))
            try c.save()
        }
        let tokens = try store.history().map(\.token)
        #expect(try store.deleteHistory(through: tokens[2]) == 3)
        #expect(try store.history().map(\.token) == Array(tokens[3...]))
        #expect(try store.history(after: tokens[3]).map(\.token) == Array(tokens[4...]))
        #expect(try store.deleteHistory(before: Date.distantPast) == 0)
        #expect(try store.deleteHistory(before: Date().addingTimeInterval(60)) == 3)
        #expect(try store.history().isEmpty)
        // Purging is not itself history; the next save is.
        try c.insert(Note(title: "after"))
        try c.save()
        #expect(try store.history().count == 1)
    }

    @Test func aLargeSaveIsChunkedAndReadBackWhole() throws {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        for i in 0..<5000 { try c.insert(Note(title: "n\(i)")) }
        try c.save()
        let chunks = try store.read { txn -> Int in
            var n = 0
            var cursor = try txn.cursor(in: HistoryCoding.tree)
            var e = try cursor.first()
            while e != nil { n += 1; e = try cursor.next() }
            return n
        }
        #expect(chunks > 1)
        let t = try #require(try store.history().first)
        #expect(t.changes.count == 5000 && t.insertedObjectIDs.count == 5000)
    }

    @Test func theFormatExampleDecodesAndEveryTruncationIsATypedError() throws {
        let recorded = RecordedTransaction(timestamp: Date(timeIntervalSince1970: 1_795_420_800), author: "import",
                                           contextName: "background", changes: ObjectFormatGoldenTests.historyChanges)
        let chunks = HistoryCoding.encode(recorded)
        #expect(try HistoryCoding.decode(chunks, lsn: 9) == recorded)
        let bytes = try #require(chunks.first)
        for cut in 0..<bytes.count {
            let error = #expect(throws: DocStoreError.self) { try HistoryCoding.decode([Array(bytes[0..<cut])], lsn: 9) }
            #expect(error?.code == .corrupt && error?.message.hasPrefix("history transaction 9 chunk 0 is damaged at byte") == true,
                    "\(String(describing: error))")
        }
        #expect(throws: DocStoreError.self) { try HistoryCoding.decode([bytes + [0]], lsn: 9) }
    }

    @Test func damagedHistoryInTheStoreIsATypedErrorAndDataStaysReadable() throws {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        try c.insert(Note(title: "kept"))
        try c.save()
        try store.write { txn in try txn.put([1, 2], for: HistoryCoding.key(lsn: 999, chunk: 1), in: HistoryCoding.tree) }
        let error = #expect(throws: DocStoreError.self) { try store.history() }
        #expect(error?.code == .corrupt && error?.message.contains("999") == true)
        #expect(try Context(store: store).fetch(Note.self).map(\.title) == ["kept"])
    }

    /// GA5: the integrity check reads history too, and names each kind of damage.
    @Test func verifyFindsDamagedHistory() throws {
        let store = try Store.inMemory(models: Self.models)
        let c = Context(store: store)
        for title in ["a", "b", "c"] {
            try c.insert(Note(title: title))
            try c.save()
        }
        #expect(try store.verify() == [])
        let tokens = try store.history().map(\.token.value)
        try #require(tokens.count == 3)
        let note = try #require(try c.fetch(Note.self).first?.objectID?.primaryKey)
        let unordered = HistoryCoding.encode(RecordedTransaction(timestamp: Date(), changes: [
            RecordedChange(kind: .insert, key: note + 1), RecordedChange(kind: .update, key: note, fields: [7, 3]),
        ]))
        try store.write { txn in
            try txn.put([1, 2], for: HistoryCoding.key(lsn: tokens[0], chunk: 0), in: HistoryCoding.tree)
            try txn.put(unordered[0], for: HistoryCoding.key(lsn: tokens[1], chunk: 0), in: HistoryCoding.tree)
            try txn.put(unordered[0], for: HistoryCoding.key(lsn: tokens[2], chunk: 2), in: HistoryCoding.tree)
            try txn.put([1], for: [1, 2, 3], in: HistoryCoding.tree)
            try txn.put(unordered[0], for: HistoryCoding.key(lsn: 1 << 40, chunk: 0), in: HistoryCoding.tree)
        }
        let problems = try store.verify()
        #expect(problems.contains("history: a key of 3 bytes, not 10"), "\(problems)")
        #expect(problems.contains { $0.hasPrefix("history transaction \(tokens[0]) does not decode") })
        #expect(problems.contains { $0.hasPrefix("history transaction \(tokens[1]) lists Note/") && $0.hasSuffix("in key order") })
        #expect(problems.contains("history transaction \(tokens[1]): the update of Note/\(note & PrimaryKey.sequenceMask) lists its fields out of order"))
        #expect(problems.contains("history transaction \(tokens[2]) skips from chunk 0 to 2"))
        #expect(problems.contains { $0.hasPrefix("history transaction \(1 << 40) is after the store's last commit") })
    }
}

/// Another process reading a store a writer has open: a read-only store sees the commits up to
/// when it opened, never takes the writer's lock, and polling history after its last token from
/// a fresh read-only open sees each new transaction exactly once.
@Suite struct RemoteHistoryTests {
    @Test func aReadOnlyReaderPollsHistoryWhileTheWriterKeepsTheStoreOpen() throws {
        let dir = TemporaryDirectory()
        let url = URL(fileURLWithPath: dir.file("Shared.docstore"))
        let writer = try Store(url: url, models: HistoryTests.models)
        let app = Context(store: writer, name: "app")
        app.transactionAuthor = "app"
        try app.insert(Note(title: "first"))
        try app.save()

        var lastToken: HistoryToken?
        var seen: [String] = []
        func poll() throws {
            let reader = try Store(url: url, models: HistoryTests.models, readOnly: true)
            defer { try? reader.close() }
            for t in try reader.history(after: lastToken) {
                seen += t.changes.map { "\($0.changeType) \($0.changedObjectID.number)" }
                lastToken = t.token
            }
        }
        try poll()
        #expect(seen == ["insert 1"])
        let note = Note(title: "second")
        try app.insert(note)
        try app.save()
        note.title = "second, edited"
        try app.save()
        try poll()
        try poll()                                   // nothing new: nothing twice
        #expect(seen == ["insert 1", "insert 2", "update 2"])

        // A read-only store refuses to save, with a typed error, and the writer is unaffected.
        let reader = try Store(url: url, models: HistoryTests.models, readOnly: true)
        let c = Context(store: reader)
        try c.insert(Note(title: "not allowed"))
        let error = #expect(throws: DocStoreError.self) { try c.save() }
        #expect(error?.code == .storage && error?.underlying?.code == .readOnly)
        try reader.close()
        try app.insert(Note(title: "third"))
        try app.save()
        try poll()
        #expect(seen.last == "insert 3")
        try writer.close()
    }
}
