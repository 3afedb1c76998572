// NotesData: the notes model's data, the same for every subject and run (fixed seed), made before
// any clock starts: folders, tags, and notes with a title of ~30 characters, a body of ~200, two
// dates, a flag, one folder and two tags each. Note, folder and tag IDs are 1…N in insert order
// in every subject.

import BenchmarkSupport
import Foundation

struct NotesSizes: Sendable {
    var notes: Int
    var folders: Int
    var tags: Int
    var fetchByID: Int
    var deletes: Int

    init(scale: Double) {
        notes = max(1000, Int(100_000 * scale))
        folders = max(10, Int(1000 * scale))
        tags = 50
        fetchByID = notes
        deletes = notes / 2
    }
}

struct NoteData: Sendable {
    var title: String
    var body: String
    var createdAt: Date
    var updatedAt: Date
    var isRead: Bool
    var folder: Int        // 1-based folder ID
    var tags: [Int]        // 1-based tag IDs
}

struct NotesData: Sendable {
    let sizes: NotesSizes
    let folderNames: [String]
    let tagNames: [String]
    let notes: [NoteData]
    /// Note IDs to fetch, uniformly at random (with repeats).
    let fetchIDs: [Int]
    /// Distinct note IDs to delete.
    let deleteIDs: [Int]
    /// The creation dates (unique, indexed) of the other notes, for the find-and-delete
    /// workload, which runs after the deletes.
    let findDeleteDates: [Date]
    /// Query workloads (issue #4): createdAt values of random notes, for equality lookups and
    /// as the start of date ranges and count cut-offs.
    let queryDates: [Date]

    init(sizes: NotesSizes) {
        self.sizes = sizes
        var rng = SplitMix64(seed: 2026)
        let words = ["buy", "milk", "call", "meeting", "project", "inbox", "draft", "review", "travel",
                     "idea", "garden", "notes", "budget", "weekend", "book", "friday"]
        func text(_ length: Int) -> String {
            // ASCII only, so UTF-8 length is the character count (String.count is O(n)).
            var s = ""
            while s.utf8.count < length { s += words[rng.below(words.count)] + " " }
            return String(s.utf8.prefix(length)) ?? s
        }
        folderNames = (1...sizes.folders).map { "Folder \($0)" }
        tagNames = (1...sizes.tags).map { "tag-\($0)" }
        let base = Date(timeIntervalSinceReferenceDate: 800_000_000)
        notes = (0..<sizes.notes).map { i in
            let a = 1 + rng.below(sizes.tags)
            var b = 1 + rng.below(sizes.tags)
            if b == a { b = a % sizes.tags + 1 }
            return NoteData(
                title: text(30), body: text(200), createdAt: base.addingTimeInterval(Double(i) * 60),
                updatedAt: base.addingTimeInterval(Double(i) * 60 + 30), isRead: rng.below(2) == 0,
                folder: 1 + rng.below(sizes.folders), tags: [a, b])
        }
        fetchIDs = (0..<sizes.fetchByID).map { _ in 1 + rng.below(sizes.notes) }
        var ids = Array(1...sizes.notes)
        for i in stride(from: ids.count - 1, to: 0, by: -1) { ids.swapAt(i, rng.below(i + 1)) }
        deleteIDs = Array(ids.prefix(sizes.deletes))
        findDeleteDates = ids.dropFirst(sizes.deletes).prefix(sizes.deletes).map { [notes] in notes[$0 - 1].createdAt }
        queryDates = (0..<2_000).map { _ in base.addingTimeInterval(Double(rng.below(sizes.notes - 100)) * 60) }
    }

    /// The queries of issue #4, each the same for every subject: how many of each, and what.
    static let queryLabels: [(Workload, String, Int)] = [
        (.queryEqual, "2000 lookups on an indexed date (createdAt ==), 1 note each", 2_000),
        (.queryRange, "500 date ranges of 100 notes, sorted by date", 50_000),
        (.queryFirstPage, "500 first pages: 20 newest of all notes (sort + limit)", 10_000),
        (.queryFolderPage, "500 folder pages: 20 newest notes of a folder (compound index folder, createdAt)", 10_000),
        (.queryTag, "50 many-to-many queries: notes with a tag named x (ANY tags.name ==)", 0),
        (.queryCount, "200 counts: unread notes after a date", 200),
        (.queryContains, "5 unindexed scans: title contains \"milk\", case-insensitive", 5),
    ]
}

/// What every subject does, each the way its users would write it.
protocol NotesSubject: AnyObject {
    static var name: String { get }
    /// Opens (creating if asked) the store in `directory`.
    init(directory: String, create: Bool) throws
    /// Inserts every folder, tag and note with its links, in one transaction.
    func insertAll(_ data: NotesData) throws
    /// Fetches each note by ID and reads its title; returns the sum of the title lengths.
    func fetchByID(_ ids: [Int]) throws -> Int
    /// Fetches every note and reads every attribute; returns the number of notes.
    func fetchAllReadingEverything() throws -> Int
    /// For each folder, its notes (their titles); returns the number of notes seen.
    func folderNotes(_ folders: Int) throws -> Int
    /// For each tag, its notes (their titles); returns the number of notes seen.
    func tagNotes(_ tags: Int) throws -> Int
    /// Deletes these notes with their links, in one transaction.
    func delete(_ ids: [Int]) throws
    /// Finds each note by its creation date and deletes it with its links, one at a time, in
    /// one transaction (what an import or a sync does); returns how many it deleted.
    func findAndDelete(_ dates: [Date]) throws -> Int
    /// For each note, twice in a row: finds a note with its creation date and, if there is
    /// none, inserts it in its folder — one transaction (an import that finds or creates);
    /// returns how many it inserted. Subjects that choose IDs number them from `firstNewID`.
    func findOrCreate(_ notes: ArraySlice<NoteData>, firstNewID: Int64) throws -> Int
    /// Runs one query workload (`Workload.query…`, see NotesData.queryLabels); returns the
    /// number of notes it returned (or counted), which every subject must agree on.
    func query(_ workload: Workload, _ data: NotesData) throws -> Int
    /// Fetches one note and reads its title (the new-process workload).
    func fetchOne(_ id: Int) throws -> String
    func close() throws
}
