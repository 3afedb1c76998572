// A year in the life of a store (issue #6): a fixed-seed workload of daily inserts, edits and
// deletes over 2 000 live notes, with history purged after 30 days and the store compacted
// weekly, must keep the file within a stated multiple of its live data (every key and value
// of every tree) — the figure the README gives. The same year without purging or compacting
// is run beside it, to show what they save. Prints both; fails if the bound is passed.

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore

@Suite struct LongLivedStoreTests {
    /// The multiple of live data the file must stay within (README § Batch operations and
    /// migrations, "Store size").
    static let bound = 3.5

    struct Year {
        var maxRatio = 0.0
        var maxDay = 0
        var finalRatio = 0.0
        var finalFileBytes: UInt64 = 0
        var finalLiveBytes: UInt64 = 0
    }

    static func live(days: Int, seed: UInt64, maintain: Bool) throws -> Year {
        var rng = SplitMix64(seed: seed)
        let store = try Store.inMemory(models: ModelClassTests.models)
        let c = Context(store: store, name: "app")
        var folders: [Folder] = []
        for i in 0..<10 { let f = Folder(name: "folder \(i)"); try c.insert(f); folders.append(f) }
        var tags: [Tag] = []
        for i in 0..<5 { let t = Tag(name: "tag \(i)"); try c.insert(t); tags.append(t) }
        func text(_ n: Int) -> String { String((0..<n).map { _ in Character(UnicodeScalar(UInt8(97 + rng.next() % 26))) }) }
        var notes: [Note] = []
        func insertNote() throws {
            let note = Note(title: text(30), folder: folders[Int(rng.next() % 10)])
            note.body = text(200 + Int(rng.next() % 200))
            try c.insert(note)
            if rng.next() % 2 == 0 { note.tags.insert(tags[Int(rng.next() % 5)]) }
            notes.append(note)
        }
        for _ in 0..<2_000 { try insertNote() }
        try c.save()
        var tokens: [HistoryToken] = []
        var year = Year()
        for day in 0..<days {
            for _ in 0..<30 { try insertNote() }
            for _ in 0..<40 {
                let note = notes[Int(rng.next() % UInt64(notes.count))]
                note.body = text(200 + Int(rng.next() % 200))
                note.isRead.toggle()
            }
            for _ in 0..<30 {
                let i = Int(rng.next() % UInt64(notes.count))
                try c.delete(notes[i])
                notes.swapAt(i, notes.count - 1)
                notes.removeLast()
            }
            try c.save()
            if let last = try store.lastHistoryToken() { tokens.append(last) }
            if maintain {
                if tokens.count > 30 { try store.deleteHistory(through: tokens[tokens.count - 31]) }
                if day % 7 == 6 { try store.compact() }
            }
            guard maintain || day == days - 1 else { continue }
            let (file, live) = try store.storageFigures()
            let ratio = Double(file) / Double(live)
            if day >= 7 && ratio > year.maxRatio {
                year.maxRatio = ratio
                year.maxDay = day
            }
            year.finalRatio = ratio
            year.finalFileBytes = file
            year.finalLiveBytes = live
        }
        #expect(try store.verify() == [])
        return year
    }

    @Test func aYearOfUseStaysWithinTheStatedMultipleOfLiveData() throws {
        let maintained = try Self.live(days: 365, seed: 2026, maintain: true)
        let neglected = try Self.live(days: 365, seed: 2026, maintain: false)
        print(String(format: "a year of use, history purged after 30 days and compacted weekly: file %.2f× live data at the end (%llu of %llu bytes), at most %.2f× after the first week (day %d); without purging or compacting: %.2f× (%llu bytes)",
                     maintained.finalRatio, maintained.finalFileBytes, maintained.finalLiveBytes, maintained.maxRatio, maintained.maxDay,
                     neglected.finalRatio, neglected.finalFileBytes))
        #expect(maintained.maxRatio <= Self.bound, "the file reached \(maintained.maxRatio)× its live data")
        #expect(maintained.finalFileBytes < neglected.finalFileBytes)
    }
}
