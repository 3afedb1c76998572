// SQLite through GRDB, with idiomatic Codable records — what a Swift developer would write: a
// DatabasePool (WAL), the schema through GRDB's migrations-style table definitions with foreign
// keys (cascading from notes to their tag links), records inserted with `insert(db)`, fetched
// with `fetchOne(db, key:)`, `fetchAll(db)` and `filter(…)`, deleted with `deleteOne(db, key:)`.

import Foundation
import GRDB

struct FolderRecord: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "folder"
    var id: Int64
    var name: String
}

struct TagRecord: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "tag"
    var id: Int64
    var name: String
}

struct NoteRecord: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "note"
    var id: Int64
    var title: String
    var body: String
    var createdAt: Date
    var updatedAt: Date
    var isRead: Bool
    var folderId: Int64?
}

struct NoteTagRecord: Codable, FetchableRecord, PersistableRecord, Sendable {
    static let databaseTableName = "noteTag"
    var noteId: Int64
    var tagId: Int64
}

final class GRDBNotes: NotesSubject {
    static let name = "GRDB"
    let pool: DatabasePool

    init(directory: String, create: Bool) throws {
        pool = try DatabasePool(path: directory + "/notes-grdb.sqlite")
        guard create else { return }
        try pool.write { db in
            try db.create(table: "folder") { t in
                t.primaryKey("id", .integer)
                t.column("name", .text).notNull()
            }
            try db.create(table: "tag") { t in
                t.primaryKey("id", .integer)
                t.column("name", .text).notNull()
            }
            try db.create(table: "note") { t in
                t.primaryKey("id", .integer)
                t.column("title", .text).notNull()
                t.column("body", .text).notNull()
                t.column("createdAt", .datetime).notNull().indexed()
                t.column("updatedAt", .datetime).notNull()
                t.column("isRead", .boolean).notNull()
                t.column("folderId", .integer).references("folder", onDelete: .cascade)
            }
            // Serves folder → notes and the folder page (folderId ==, newest first).
            try db.create(index: "note_folder_created", on: "note", columns: ["folderId", "createdAt"])
            try db.create(table: "noteTag") { t in
                t.column("noteId", .integer).notNull().references("note", onDelete: .cascade)
                t.column("tagId", .integer).notNull().references("tag", onDelete: .cascade)
                t.primaryKey(["noteId", "tagId"])
            }
            try db.create(index: "noteTag_tag", on: "noteTag", columns: ["tagId", "noteId"])
        }
    }

    func insertAll(_ data: NotesData) throws {
        try pool.write { db in
            try Self.insertFoldersAndTags(data, db)
            try Self.insertNotes(data, db)
        }
    }

    static func insertFoldersAndTags(_ data: NotesData, _ db: Database) throws {
        for (i, name) in data.folderNames.enumerated() { try FolderRecord(id: Int64(i + 1), name: name).insert(db) }
        for (i, name) in data.tagNames.enumerated() { try TagRecord(id: Int64(i + 1), name: name).insert(db) }
    }

    static func record(_ n: NoteData, id: Int64) -> NoteRecord {
        NoteRecord(id: id, title: n.title, body: n.body, createdAt: n.createdAt, updatedAt: n.updatedAt,
                   isRead: n.isRead, folderId: Int64(n.folder))
    }

    static func insertNotes(_ data: NotesData, _ db: Database) throws {
        for (i, n) in data.notes.enumerated() {
            let id = Int64(i + 1)
            try record(n, id: id).insert(db)
            for t in n.tags { try NoteTagRecord(noteId: id, tagId: Int64(t)).insert(db) }
        }
    }

    func fetchByID(_ ids: [Int]) throws -> Int {
        try pool.read { db in
            var total = 0
            for id in ids { total += try NoteRecord.fetchOne(db, key: id)?.title.count ?? 0 }
            return total
        }
    }

    func fetchAllReadingEverything() throws -> Int {
        try pool.read { db in
            try NoteRecord.fetchAll(db).filter { !$0.title.isEmpty && !$0.body.isEmpty && $0.createdAt < $0.updatedAt }.count
        }
    }

    func folderNotes(_ folders: Int) throws -> Int {
        try pool.read { db in
            var seen = 0
            for id in 1...folders {
                seen += try NoteRecord.filter(Column("folderId") == id).fetchAll(db).filter { !$0.title.isEmpty }.count
            }
            return seen
        }
    }

    func tagNotes(_ tags: Int) throws -> Int {
        try pool.read { db in
            var seen = 0
            for id in 1...tags {
                seen += try NoteRecord.fetchAll(db, sql: "SELECT note.* FROM note JOIN noteTag ON noteTag.noteId = note.id WHERE noteTag.tagId = ?", arguments: [id]).filter { !$0.title.isEmpty }.count
            }
            return seen
        }
    }

    func delete(_ ids: [Int]) throws {
        try pool.write { db in
            for id in ids { _ = try NoteRecord.deleteOne(db, key: id) }
        }
    }

    func findAndDelete(_ dates: [Date]) throws -> Int {
        try pool.write { db in
            var deleted = 0
            for date in dates {
                guard let note = try NoteRecord.filter(Column("createdAt") == date).fetchOne(db) else { continue }
                _ = try note.delete(db)
                deleted += 1
            }
            return deleted
        }
    }

    func findOrCreate(_ notes: ArraySlice<NoteData>, firstNewID: Int64) throws -> Int {
        try pool.write { db in
            var inserted = 0
            for n in notes {
                for _ in 0..<2 {
                    guard try NoteRecord.filter(Column("createdAt") == n.createdAt).fetchOne(db) == nil else { continue }
                    try Self.record(n, id: firstNewID + Int64(inserted)).insert(db)
                    inserted += 1
                }
            }
            return inserted
        }
    }

    func query(_ workload: Workload, _ data: NotesData) throws -> Int {
        try pool.read { db in
            var total = 0
            let createdAt = Column("createdAt")
            for i in 0..<DocStoreNotes.repetitions(workload, data) {
                let d = data.queryDates[i % data.queryDates.count]
                let notes: [NoteRecord]
                switch workload {
                case .queryEqual: notes = try NoteRecord.filter(createdAt == d).fetchAll(db)
                case .queryRange:
                    notes = try NoteRecord.filter(createdAt >= d && createdAt < d.addingTimeInterval(100 * 60)).order(createdAt).fetchAll(db)
                case .queryFirstPage: notes = try NoteRecord.order(createdAt.desc).limit(20).fetchAll(db)
                case .queryFolderPage:
                    notes = try NoteRecord.filter(Column("folderId") == 1 + i % data.folderNames.count).order(createdAt.desc).limit(20).fetchAll(db)
                case .queryTag:
                    notes = try NoteRecord.fetchAll(db, sql: "SELECT note.* FROM tag JOIN noteTag ON noteTag.tagId = tag.id JOIN note ON note.id = noteTag.noteId WHERE tag.name = ?",
                                                    arguments: [data.tagNames[i % data.tagNames.count]])
                case .queryCount:
                    total += try NoteRecord.filter(Column("isRead") == false && createdAt > d).fetchCount(db)
                    continue
                default: notes = try NoteRecord.filter(Column("title").like("%milk%")).fetchAll(db)
                }
                for n in notes where !n.title.isEmpty { total += 1 }
            }
            return total
        }
    }

    func fetchOne(_ id: Int) throws -> String {
        try pool.read { db in try NoteRecord.fetchOne(db, key: id)?.title ?? "" }
    }

    func close() throws { try pool.close() }
}
