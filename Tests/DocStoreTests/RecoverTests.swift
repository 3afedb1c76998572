// Store.recover(from:to:) (Recover/, Salvage): a damaged store is rebuilt into a sound one. A
// lost records leaf loses exactly its objects (and the links to them); a lost branch page loses
// nothing (its leaves are adopted); a lost links leaf is restored from the other side; commits
// still in the WAL are kept; a file with no readable meta page is a typed error. The damaged
// store is never changed, and the new one always passes the full integrity check.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore
@testable import DocStoreEngine

@Suite struct RecoverTests {
    static let notes = 600

    // one per test (swift-testing makes a suite value for each): removed when the test ends
    let temporary = TemporaryDirectory("recover")

    /// The damaged store's URL; the rebuilt one goes beside it.
    func temporaryURL() -> URL {
        URL(fileURLWithPath: temporary.file("store.docstore"))
    }

    /// 3 folders, 600 notes with bodies long enough for several leaf pages, 5 tags on many
    /// notes; closed, so everything is in the page file.
    static func makeStore(_ url: URL) throws {
        let store = try Store(url: url, models: ModelClassTests.models)
        let c = Context(store: store)
        let folders = try ["Inbox", "Work", "Home"].map { name in let f = Folder(name: name); try c.insert(f); return f }
        let tags = try (0..<5).map { i in let t = Tag(name: "tag \(i)"); try c.insert(t); return t }
        for i in 0..<notes {
            let note = Note(title: "note \(i)", folder: folders[i % 3])
            note.body = String(repeating: "body \(i) ", count: 8)
            note.rating = Int16(i % 7)
            try c.insert(note)
            note.tags = Set(tags.enumerated().filter { (j, _) in (i + j) % 3 == 0 }.map(\.1))
        }
        try c.save()
        try store.close()
    }

    /// The tree `name`'s pages of one kind, as the page map and the page headers say.
    static func pages(of tree: String, _ type: PageType, in url: URL) throws -> [PageSummary] {
        var options = EngineOptions()
        options.readOnly = true
        let engine = try Engine.open(at: url.path, options: options)
        defer { try? engine.close() }
        return try engine.pageMap().filter { $0.value == tree }.keys.sorted()
            .map { try engine.inspectPage(PageNumber($0)) }.filter { $0.type == type }
    }

    static func tree(_ entity: String, _ property: String? = nil, in url: URL) throws -> String {
        let store = try Store(url: url, models: ModelClassTests.models, readOnly: true)
        defer { try? store.close() }
        let info = try #require(store.model.entity(named: entity))
        guard let property else { return info.recordsTree }
        return try #require(info.property(named: property)).linkTree
    }

    /// Flips one byte in the middle of page `n`: its checksum no longer matches.
    static func damage(page n: PageNumber, of url: URL) throws {
        try damage(byteAt: n.rawValue * 4096 + 2048, of: url)
    }

    static func damage(byteAt offset: UInt64, of url: URL) throws {
        let handle = try FileHandle(forUpdating: url)
        defer { try? handle.close() }
        try handle.seek(toOffset: offset)
        let byte = try #require(try handle.read(upToCount: 1)).first ?? 0
        try handle.seek(toOffset: offset)
        try handle.write(contentsOf: Data([byte ^ 0x5A]))
    }

    static func dumpLines(_ url: URL) throws -> [String] {
        let store = try Store(url: url, models: ModelClassTests.models, readOnly: true)
        defer { try? store.close() }
        return try DumpLoadTests.comparable(DumpLoadTests.dumpText(store))
    }

    static func recoverChecked(_ source: URL) throws -> (RecoveryReport, URL) {
        let before = try Data(contentsOf: source)
        let destination = source.deletingLastPathComponent().appendingPathComponent("Rescued.docstore")
        let report = try Store.recover(from: source, to: destination)
        #expect(try Data(contentsOf: source) == before, "recover changed the damaged store")
        let rescued = try Store(url: destination, models: ModelClassTests.models)
        #expect(try rescued.verify() == [])
        try rescued.close()
        return (report, destination)
    }

    @Test func anIntactStoreIsRebuiltWhole() throws {
        let url = temporaryURL()
        try Self.makeStore(url)
        let (report, rescued) = try Self.recoverChecked(url)
        #expect(report.isComplete && report.damage.isEmpty && report.lost.isEmpty && report.repaired.isEmpty, "\(report)")
        #expect(report.objects.first { $0.entity == "Note" }?.count == Self.notes)
        #expect(report.historyEntries > 0)
        #expect(try Self.dumpLines(rescued) == Self.dumpLines(url))
    }

    @Test func aDamagedRecordsLeafLosesExactlyItsObjects() throws {
        let url = temporaryURL()
        try Self.makeStore(url)
        let records = try Self.tree("Note", in: url)
        let leaves = try Self.pages(of: records, .leaf, in: url)
        try #require(leaves.count >= 3)
        let victim = leaves[leaves.count / 2]
        let lostKeys = Set(victim.keys.compactMap { PrimaryKey.read($0) })
        let lostNames = Set(lostKeys.map { "Note/\($0 & PrimaryKey.sequenceMask)" })
        try #require(!lostKeys.isEmpty)
        let before = try Self.dumpLines(url)
        try Self.damage(page: victim.number, of: url)

        let (report, rescued) = try Self.recoverChecked(url)
        #expect(!report.isComplete)
        #expect(report.damage.contains { $0.contains("page \(victim.number.rawValue)") && $0.contains("checksum") }, "\(report.damage)")
        #expect(report.lost.contains { $0.hasPrefix("page \(victim.number.rawValue) of \(records) did not read") }, "\(report.lost)")
        #expect(report.objects.first { $0.entity == "Note" }?.count == Self.notes - lostKeys.count)
        // Every other note is as it was; folders and tags no longer list the lost ones.
        let after = try Self.dumpLines(rescued)
        let notesBefore = before.filter { $0.hasPrefix(#"{"id":"Note/"#) }
        let kept = notesBefore.filter { line in !lostNames.contains { line.hasPrefix(#"{"id":"\#($0)","#) } }
        #expect(after.filter { $0.hasPrefix(#"{"id":"Note/"#) } == kept)
        for line in after where !line.hasPrefix(#"{"id":"Note/"#) {
            #expect(!lostNames.contains { line.contains(#""\#($0)""#) }, "\(line.prefix(120)) still names a lost note")
        }
        #expect(report.lost.contains { $0.contains(".notes listed Note/") && $0.contains("which was not recovered") })
    }

    @Test func aDamagedBranchPageLosesNothing() throws {
        let url = temporaryURL()
        try Self.makeStore(url)
        let records = try Self.tree("Note", in: url)
        let branches = try Self.pages(of: records, .branch, in: url)
        let root = try #require(branches.first)
        let before = try Self.dumpLines(url)
        try Self.damage(page: root.number, of: url)

        let (report, rescued) = try Self.recoverChecked(url)
        #expect(report.lost.count == 1 && report.lost[0].contains("\(Self.notes) of them were found in unreferenced pages"), "\(report.lost)")
        #expect(report.objects.first { $0.entity == "Note" }?.count == Self.notes)
        #expect(try Self.dumpLines(rescued) == before)
    }

    @Test func damagedLinksAreRestoredFromTheOtherSide() throws {
        let url = temporaryURL()
        try Self.makeStore(url)
        let before = try Self.dumpLines(url)
        // A leaf of Note.tags (many-to-many) and one of Folder.notes (its inverse is a to-one).
        for (entity, property) in [("Note", "tags"), ("Folder", "notes")] {
            let leaf = try #require(try Self.pages(of: Self.tree(entity, property, in: url), .leaf, in: url).first)
            try Self.damage(page: leaf.number, of: url)
        }
        let (report, rescued) = try Self.recoverChecked(url)
        #expect(report.damage.count == 2, "\(report.damage)")
        #expect(report.lost.isEmpty, "\(report.lost)")
        #expect(report.repaired.count == 2 && report.repaired.allSatisfy { $0.contains("links restored from the other side") }, "\(report.repaired)")
        // An ordered list's lost positions cannot be known: Folder.notes gets its notes back
        // at the end of the list (RG3), so the folders are compared as sets.
        func unordered(_ lines: [String]) throws -> [String] {
            try lines.map { line in
                guard line.hasPrefix(#"{"id":"Folder/"#) else { return line }
                var object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
                var relationships = try #require(object["relationships"] as? [String: Any])
                relationships["notes"] = (relationships["notes"] as? [String])?.sorted()
                object["relationships"] = relationships
                return String(decoding: try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
            }
        }
        #expect(try unordered(Self.dumpLines(rescued)) == unordered(before))
    }

    @Test func commitsStillInTheWALAreKept() throws {
        let url = temporaryURL()
        try Self.makeStore(url)
        let store = try Store(url: url, models: ModelClassTests.models)
        let c = Context(store: store)
        try c.insert(Folder(name: "Late"))
        try c.save()
        // The writer still has the store open: the new folder is only in the WAL.
        let destination = url.deletingLastPathComponent().appendingPathComponent("Rescued.docstore")
        let report = try Store.recover(from: url, to: destination)
        #expect(report.isComplete, "\(report)")
        #expect(report.objects.first { $0.entity == "Folder" }?.count == 4)
        try store.close()
        let rescued = try Store(url: destination, models: ModelClassTests.models)
        #expect(try Context(store: rescued).fetch(FetchRequest<Folder>()).map(\.name).sorted() == ["Home", "Inbox", "Late", "Work"])
        try rescued.close()
    }

    @Test func aFileWithoutAReadableMetaPageIsATypedError() throws {
        let url = temporaryURL()
        try Self.makeStore(url)
        // Inside the checksummed part (the first 128 bytes) of each meta page.
        try Self.damage(byteAt: 100, of: url)
        try Self.damage(byteAt: 4096 + 100, of: url)
        let destination = url.deletingLastPathComponent().appendingPathComponent("Rescued.docstore")
        let error = #expect(throws: DocStoreError.self) { try Store.recover(from: url, to: destination) }
        #expect(error?.code == .storage && error?.underlying?.code == .corrupt && error?.message.contains("neither meta page") == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: destination.path))
    }

    /// Property: whatever pages are damaged (fixed seeds; the seed is printed on failure), the
    /// rebuilt store passes the full check, and every note it has is one of the originals with
    /// the same values, folder and tags it had (none is invented or changed).
    @Test(arguments: Array(UInt64(11)...UInt64(18)))
    func randomDamageAlwaysGivesASoundStore(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let url = temporaryURL()
        try Self.makeStore(url)
        let before = Set(try Self.dumpLines(url).filter { $0.hasPrefix(#"{"id":"Note/"#) })
        let pageCount = try FileManager.default.attributesOfItem(atPath: url.path)[.size] as? Int ?? 0
        for _ in 0..<(1 + random.next() % 6) {
            let page = 2 + UInt64(random.next() % UInt64(max(1, pageCount / 4096 - 2)))
            try Self.damage(byteAt: page * 4096 + 32 + random.next() % 4000, of: url)
        }
        let destination = url.deletingLastPathComponent().appendingPathComponent("Rescued.docstore")
        let report = try Store.recover(from: url, to: destination)
        let rescued = try Store(url: destination, models: ModelClassTests.models)
        guard !report.objects.isEmpty else {
            // The object catalog's page was hit: the trees are copied (RC3), and the app's schema
            // opens them; or no tree could be found at all.
            #expect(report.lost.contains { $0.hasPrefix("the object catalog does not read") || $0.hasPrefix("no tree could be read") }, "seed \(seed): \(report.lost) \(report.damage)")
            _ = try rescued.verify()
            try rescued.close()
            return
        }
        #expect(try rescued.verify() == [], "seed \(seed)")
        try rescued.close()
        let after = try Self.dumpLines(destination).filter { $0.hasPrefix(#"{"id":"Note/"#) }
        // A note's line names its folder and tags; one whose folder or tag was lost differs
        // only there, so compare values alone for those.
        func values(_ line: String) -> Substring { line[(line.range(of: #""values":"#)?.lowerBound ?? line.startIndex)...] }
        let beforeValues = Set(before.map(values))
        for line in after where !before.contains(line) {
            #expect(beforeValues.contains(values(line)), "seed \(seed): \(line.prefix(160)) is not an original note")
            #expect(!report.isComplete, "seed \(seed)")
        }
        #expect(report.objects.first { $0.entity == "Note" }?.count == after.count, "seed \(seed)")
    }
}
