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
    }
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
    /// Fetches one note and reads its title (the new-process workload).
    func fetchOne(_ id: Int) throws -> String
    func close() throws
}
