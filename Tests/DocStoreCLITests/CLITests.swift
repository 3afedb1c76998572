// Runs the real `docstore` executable on real store files and checks its output and exit codes:
// the demo store inspects and verifies clean; read-only subcommands leave the files byte-identical
// and work while another process holds the write lock; bad input gives one line on stderr and a
// distinct exit code, never a crash.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

struct CLIResult {
    var status: Int32
    var stdout: String
    var stderr: String
}

func docstore(_ arguments: String...) throws -> CLIResult { try docstore(arguments) }

/// Runs `docstore` with `arguments`; `input`, when given, is a file its standard input reads.
func docstore(_ arguments: [String], input: String? = nil) throws -> CLIResult {
    let process = Process()
    process.executableURL = Bundle.main.bundleURL.appendingPathComponent("docstore")
    process.arguments = arguments
    let out = Pipe(), err = Pipe()
    process.standardOutput = out
    process.standardError = err
    if let input { process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: input)) }
    try process.run()
    let o = out.fileHandleForReading.readDataToEndOfFile()
    let e = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return CLIResult(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
}

func storeBytes(_ path: String) -> [Data?] {
    [path, path + "-wal"].map { FileManager.default.contents(atPath: $0) }
}

@Suite struct CLITests {
    @Test func demoStoreInspectsAndVerifiesClean() throws {
        let dir = TemporaryDirectory("cli")
        let path = dir.file("Notes.docstore")
        let demo = try docstore("demo", path)
        #expect(demo.status == 0, "\(demo.stderr)")
        #expect(demo.stdout.contains("999 notes"))
        let inspect = try docstore("inspect", path)
        #expect(inspect.status == 0)
        #expect(inspect.stdout.contains("format        2.0"))
        #expect(inspect.stdout.contains("entities      4   schema version 1"))
        #expect(inspect.stdout.contains("  Note                     999 objects"))
        #expect(inspect.stdout.contains("  Folder                   3 objects"))
        #expect(inspect.stdout.contains("blobs         1 files"))
        let verify = try docstore("verify", path)
        #expect(verify.status == 0)
        #expect(verify.stdout.hasPrefix("ok: "))
    }

    @Test func readOnlySubcommandsNeverChangeTheFiles() throws {
        let dir = TemporaryDirectory("cli")
        let path = dir.file("Ro.docstore")
        // Leave transactions in the WAL: a read-only open must not replay them into the file or
        // cut anything.
        var options = EngineOptions()
        options.checkpointWALBytes = 1 << 30
        let engine = try Engine.open(at: path, options: options)
        try engine.write { txn in
            try txn.createTree(named: "t")
            for i in 0..<500 { try txn.put(Array("value \(i)".utf8), for: Array("k\(i)".utf8), in: "t") }
        }
        // The writer keeps the store open (and locked) while the tool reads it.
        let before = storeBytes(path)
        for args in [["inspect", path], ["inspect", path, "--wal"], ["inspect", path, "--page", "1"], ["inspect", path, "--pages"], ["verify", path]] {
            let r = try docstore(args)
            #expect(r.status == 0, "\(args): \(r.stderr)")
        }
        let wal = try docstore("inspect", path, "--wal")
        #expect(wal.stdout.contains("records       1"))
        #expect(wal.stdout.contains("torn tail     0 bytes"))
        #expect(storeBytes(path) == before, "a read-only subcommand changed the store")
        // Checkpoint needs the write lock: refused with the locked exit code while held.
        let checkpoint = try docstore("checkpoint", path)
        #expect(checkpoint.status == 7)
        #expect(checkpoint.stderr.contains("storeLocked"))
        #expect(try docstore("compact", path).status == 7)
        try engine.close()
    }

    @Test func badInputGivesOneLineAndADistinctExitCode() throws {
        let dir = TemporaryDirectory("cli")
        let missing = try docstore("inspect", dir.file("missing.docstore"))
        #expect(missing.status == 3)
        #expect(missing.stderr.split(separator: "\n").count == 1)

        let junk = dir.file("junk.docstore")
        try Data(repeating: 0x41, count: 10_000).write(to: URL(fileURLWithPath: junk))
        let notStore = try docstore("inspect", junk)
        #expect(notStore.status == 4, "\(notStore.stderr)")
        #expect(notStore.stderr.hasPrefix("docstore: notADocStore"))

        // A newer major version.
        let newer = dir.file("newer.docstore")
        let engine = try Engine.open(at: newer)
        try engine.close()
        var bytes = try #require(FileManager.default.contents(atPath: newer)).map { $0 }
        for slot in [0, 4096] where bytes[slot + 4] == 0x44 {  // "D" of DOCSTORE
            bytes[slot + 12] = 9  // major version 9
            let crc = CRC32C.checksum(Array(bytes[(slot + 4)..<(slot + 128)]))
            withUnsafeBytes(of: crc.littleEndian) { for i in 0..<4 { bytes[slot + i] = $0[i] } }
        }
        try Data(bytes).write(to: URL(fileURLWithPath: newer))
        let tooNew = try docstore("verify", newer)
        #expect(tooNew.status == 5, "\(tooNew.stderr)")
        #expect(tooNew.stderr.contains("update DocStore"))

        // A corrupt page: verify lists it and exits 1.
        let damaged = dir.file("damaged.docstore")
        let e2 = try Engine.open(at: damaged)
        try e2.write { txn in
            try txn.createTree(named: "t")
            for i in 0..<400 { try txn.put(Array(repeating: 3, count: 50), for: Array("k\(i)".utf8), in: "t") }
        }
        try e2.close()
        var d = try #require(FileManager.default.contents(atPath: damaged)).map { $0 }
        d[d.count - 100] ^= 0xFF
        try Data(d).write(to: URL(fileURLWithPath: damaged))
        let v = try docstore("verify", damaged)
        #expect(v.status == 1 || v.status == 6, "\(v.stdout) \(v.stderr)")
        #expect(v.stdout.contains("checksum mismatch") || v.stderr.contains("checksum mismatch"))

        let usage = try docstore("inspect")
        #expect(usage.status == 64 || usage.status == 2, "usage error exit \(usage.status)")
    }
}

/// The object views: the schema, an entity's objects, one object, queries — read with the schema
/// the file holds (the tool has no model classes), as tables and as JSON.
@Suite struct CLIObjectViewTests {
    /// A demo store: 3 folders (Inbox, Work, Recipes), 999 notes "Note 0"… (note 7 deleted;
    /// note n in folder n % 3), 4 tags, one attachment.
    func demoStore(_ dir: TemporaryDirectory) throws -> String {
        let path = dir.file("Notes.docstore")
        let demo = try docstore("demo", path)
        try #require(demo.status == 0, "\(demo.stderr)")
        return path
    }

    func json(_ text: String) throws -> Any {
        try JSONSerialization.jsonObject(with: Data(text.utf8))
    }

    @Test func theSchemaViewShowsEntitiesAttributesRelationshipsAndIndexes() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        let text = try docstore("inspect", path, "--schema")
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.contains("entity Note"))
        #expect(text.stdout.contains(#/createdAt\s+Date\s+required, indexed/#))
        #expect(text.stdout.contains(#/folder\s+→ Folder\s+to-one, inverse notes, delete rule nullify, optional/#))
        #expect(text.stdout.contains(#/notes\s+→ Note\s+to-many, inverse folder, delete rule cascade/#))
        #expect(text.stdout.contains(#/name\s+String\s+required, unique/#))
        let asJSON = try docstore("inspect", path, "--schema", "--json")
        let schema = try #require(try json(asJSON.stdout) as? [String: Any])
        let entities = try #require(schema["entities"] as? [[String: Any]])
        #expect(Set(entities.compactMap { $0["name"] as? String }) == ["Folder", "Note", "Tag", "Attachment"])
    }

    @Test func theEntityViewShowsObjectsAsATableOrJSON() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        let table = try docstore("inspect", path, "--entity", "Note", "--limit", "5")
        #expect(table.status == 0, "\(table.stderr)")
        let lines = table.stdout.split(separator: "\n")
        #expect(lines.first?.hasPrefix("id") == true && lines.first?.contains("createdAt") == true)
        #expect(lines.count == 2 + 5 + 1 && lines.last == "5 of 999 objects (--limit 0 shows all)")
        #expect(lines[2].hasPrefix("Note/1 ") && lines[2].contains("Note 0") && lines[2].contains("Folder/1"))
        let rows = try #require(try json(try docstore("inspect", path, "--entity", "Folder", "--json").stdout) as? [[String: Any]])
        #expect(rows.count == 3 && rows.map { $0["name"] as? String } == ["Inbox", "Work", "Recipes"])
        #expect((rows[1]["notes"] as? [String])?.count == 332)      // n % 3 == 1 for n < 1000, less note 7
        #expect((rows[0]["id"] as? String)?.hasPrefix("docstore://") == true)
        let unknown = try docstore("inspect", path, "--entity", "Nope")
        #expect(unknown.status == 10 && unknown.stderr.split(separator: "\n").count == 1 && unknown.stderr.contains("Folder, Note"))
    }

    @Test func theObjectViewShowsOneObjectWithItsRelationships() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        let text = try docstore("inspect", path, "--object", "Note/43")
        #expect(text.status == 0, "\(text.stderr)")
        #expect(text.stdout.hasPrefix("Note/43"))
        #expect(text.stdout.contains(#/title\s+Note 42/#))
        #expect(text.stdout.contains(#/folder\s+→ Folder\/1/#))
        #expect(text.stdout.contains(#/attachments\s+\[1\] Attachment\/1/#))
        let object = try #require(try json(try docstore("inspect", path, "--object", "Note/43", "--json").stdout) as? [String: Any])
        #expect(object["entity"] as? String == "Note" && (object["tags"] as? [String])?.count == 1)     // tags 42 % 4 and 10 % 4: one
        let uri = try #require(object["id"] as? String)
        #expect(try docstore("inspect", path, "--object", uri).stdout.contains("Note 42"))
        let gone = try docstore("inspect", path, "--object", "Note/8")      // note 7 was deleted
        #expect(gone.status == 3 && gone.stderr.split(separator: "\n").count == 1 && gone.stderr.contains("no object Note/8"), "\(gone.stdout)")
    }

    @Test func queriesFilterSortLimitAndExplain() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        let before = storeBytes(path)
        let top = try docstore("query", path, "Note", "title BEGINSWITH 'Note 99' AND folder.name == 'Inbox'", "--sort", "title:desc", "--limit", "2")
        #expect(top.status == 0, "\(top.stderr)")
        let lines = top.stdout.split(separator: "\n")
        #expect(lines.count == 2 + 2 + 1 && lines.last == "2 objects")
        #expect(lines[2].contains("Note 999") && lines[3].contains("Note 996"))
        let rows = try #require(try json(try docstore("query", path, "Tag", "name IN {'idea', 'home'}", "--sort", "name", "--json").stdout) as? [[String: Any]])
        #expect(rows.map { $0["name"] as? String } == ["home", "idea"])
        let plan = try docstore("query", path, "Note", "title == 'Note 5'", "--explain")
        #expect(plan.status == 0 && !plan.stdout.isEmpty && plan.stdout.contains("Note"), "\(plan.stdout) \(plan.stderr)")
        let bad = try docstore("query", path, "Note", "title ==")
        #expect(bad.status == 10 && bad.stderr.split(separator: "\n").count == 1, "\(bad.stderr)")
        let badKey = try docstore("query", path, "Note", "colour == 'red'")
        #expect(badKey.status == 10 && badKey.stderr.contains("colour"), "\(badKey.stderr)")
        for args in [["inspect", path, "--schema"], ["inspect", path, "--entity", "Note", "--json"], ["inspect", path, "--object", "Note/43"],
                     ["inspect", path, "--json"], ["verify", path]] {
            #expect(try docstore(args).status == 0, "\(args)")
        }
        #expect(storeBytes(path) == before, "a read-only view changed the store")
    }

    @Test func theOverviewAsJSONAndAnEngineOnlyFile() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        let overview = try #require(try json(try docstore("inspect", path, "--json").stdout) as? [String: Any])
        #expect((overview["entities"] as? [String: Int]) == ["Folder": 3, "Note": 999, "Tag": 4, "Attachment": 1])
        #expect(overview["format"] as? String == "2.0" && (overview["historyEntries"] as? Int ?? 0) > 0)
        let text = try docstore("inspect", path)
        #expect(text.stdout.contains(#/history\s+\d+ entries/#) && text.stdout.contains("% of the file"))
        let verify = try docstore("verify", path)
        #expect(verify.status == 0 && verify.stdout.contains("1007 objects: records, index entries and both sides"), "\(verify.stdout)")
        // A file written through the engine alone has no objects to show.
        let raw = dir.file("raw.docstore")
        let engine = try Engine.open(at: raw)
        try engine.write { txn in try txn.createTree(named: "t") }
        try engine.close()
        let schema = try docstore("inspect", raw, "--schema")
        #expect(schema.status == 11 && schema.stderr.contains("without objects"), "\(schema.stderr)")
        #expect(try docstore("inspect", raw, "--json").status == 0)
    }

    @Test func historyListsTransactionsAndCompactGivesSpaceBack() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        // The demo saves 6 times: 5 batches of 200 notes, then the attachment and a delete.
        let all = try #require(try json(try docstore("history", path, "--json").stdout) as? [[String: Any]])
        #expect(all.count == 6)
        let last = try #require(all.last)
        let changes = try #require(last["changes"] as? [[String: Any]])
        #expect(changes.contains { $0["type"] as? String == "delete" && ($0["object"] as? String)?.hasSuffix("/Note/8") == true })
        #expect(changes.contains { $0["type"] as? String == "update" && ($0["properties"] as? [String]) == ["attachments"] })
        let firstToken = try #require(all.first?["token"] as? Int)
        let after = try docstore("history", path, "--after", "\(firstToken)", "--limit", "1")
        #expect(after.status == 0 && after.stdout.hasPrefix("token \(all[1]["token"] as? Int ?? -1)") && after.stdout.hasSuffix("1 transaction\n"), "\(after.stdout)")
        #expect(try docstore("history", path, "--entity", "Attachment").stdout.hasSuffix("1 transaction\n"))
        #expect(try docstore("history", path, "--entity", "Nope").status == 10)

        let before = fileSize(path)
        let compact = try docstore("compact", path)
        #expect(compact.status == 0 && compact.stdout.hasPrefix("compacted: "), "\(compact.stderr)")
        #expect(fileSize(path) <= before)
        #expect(try docstore("verify", path).status == 0)
        #expect(try docstore("query", path, "Note").stdout.hasSuffix("999 objects\n"))
    }

    func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.intValue ?? 0
    }

    /// The dump's lines without the header's lastLSN (a loaded store's own commits follow it).
    func linesWithoutLSN(_ text: String) throws -> [String] {
        var lines = text.split(separator: "\n").map(String.init)
        var header = try #require(try json(lines[0]) as? [String: Any])
        header["lastLSN"] = nil
        lines[0] = String(decoding: try JSONSerialization.data(withJSONObject: header, options: [.sortedKeys]), as: UTF8.self)
        return lines
    }

    @Test func dumpAndLoadMakeAnEqualStore() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        let before = storeBytes(path)
        let dump = try docstore("dump", path)
        #expect(dump.status == 0, "\(dump.stderr)")
        let lines = dump.stdout.split(separator: "\n")
        let objects = lines.count - 2
        #expect(objects > 1000, "the demo's folders, notes, tags and attachment")
        #expect(lines.last == #"{"end":"docstore","objects":\#(objects)}"#)
        #expect(storeBytes(path) == before, "dump changed the store")

        // Through standard input, and from a file.
        let file = dir.file("notes.jsonl")
        let toFile = try docstore("dump", path, "--output", file)
        #expect(toFile.status == 0 && toFile.stdout == "dumped \(objects) objects to \(file)\n", "\(toFile.stdout)")
        let copy = dir.file("Copy.docstore")
        let load = try docstore(["load", copy], input: file)
        #expect(load.status == 0 && load.stdout == "loaded \(objects) objects into \(copy)\n", "\(load.stdout) \(load.stderr)")
        #expect(try docstore("verify", copy).status == 0)
        #expect(try linesWithoutLSN(docstore("dump", copy).stdout) == linesWithoutLSN(dump.stdout))
        #expect(try docstore("query", copy, "Note", "title == 'Note 500'", "--json").stdout == docstore("query", path, "Note", "title == 'Note 500'", "--json").stdout)
        let second = dir.file("Second.docstore")
        #expect(try docstore("load", second, "--input", file).status == 0)

        // Refusals: an existing target (13), a dump that does not load (12), naming the line;
        // nothing is left behind.
        let again = try docstore(["load", copy], input: file)
        #expect(again.status == 13 && again.stderr.contains("exists already"), "\(again.stderr)")
        #expect(try docstore("dump", path, "--output", file).status == 13)
        let bad = dir.file("bad.jsonl")
        var edited = lines.map(String.init)
        let note = try #require(edited.firstIndex { $0.contains(#""title":"#) })
        edited[note] = edited[note].replacingOccurrences(of: #""title":"#, with: #""title":17,"x":"#)
        try Data(edited.joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: bad))
        let refused = try docstore(["load", dir.file("Bad.docstore")], input: bad)
        #expect(refused.status == 12 && refused.stderr.hasPrefix("docstore: invalidDump: ") && refused.stderr.contains("line \(note + 1)"), "\(refused.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("Bad.docstore")))
        // Two folders with one unique name: refused as a dump that does not load, naming both.
        let clash = dir.file("clash.jsonl")
        try Data(lines.map { $0.replacingOccurrences(of: #""name":"Work""#, with: #""name":"Inbox""#) }.joined(separator: "\n").utf8)
            .write(to: URL(fileURLWithPath: clash))
        let clashed = try docstore(["load", dir.file("Clash.docstore")], input: clash)
        #expect(clashed.status == 12 && clashed.stderr.hasPrefix("docstore: uniqueConstraint: ") && clashed.stderr.contains("Inbox"), "\(clashed.stderr)")
        #expect(!FileManager.default.fileExists(atPath: dir.file("Clash.docstore")))
        let cut = dir.file("cut.jsonl")
        try Data(lines.dropLast().joined(separator: "\n").utf8).write(to: URL(fileURLWithPath: cut))
        let cutOff = try docstore(["load", dir.file("Cut.docstore")], input: cut)
        #expect(cutOff.status == 12 && cutOff.stderr.contains("cut off"), "\(cutOff.stderr)")
        #expect(try docstore("dump", dir.file("none.docstore")).status == 3)
    }

    @Test func theTreeViewShowsDepthFanOutAndFill() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        let overview = try #require(try json(docstore("inspect", path, "--json").stdout) as? [String: Any])
        let trees = try #require(overview["trees"] as? [String: Int])
        let (name, entries) = try #require(trees.filter { $0.key.hasPrefix("records.") }.max { $0.value < $1.value })
        let shape = try #require(try json(docstore("inspect", path, "--tree", name, "--json").stdout) as? [String: Any])
        #expect(shape["entries"] as? Int == entries)
        let levels = try #require(shape["levels"] as? [[String: Any]])
        #expect(levels.count == shape["depth"] as? Int && levels.count >= 2, "\(levels)")
        #expect(levels.last?["kind"] as? String == "leaf" && levels.last?["cells"] as? Int == entries)
        #expect(levels.dropLast().allSatisfy { $0["kind"] as? String == "branch" })
        // Each branch level's children are the next level's pages.
        for (upper, lower) in zip(levels, levels.dropFirst()) {
            #expect((upper["cells"] as? Int ?? 0) + (upper["pages"] as? Int ?? 0) == lower["pages"] as? Int)
        }
        let fill = try #require(levels.last?["fill"] as? Double)
        #expect(fill > 0.3 && fill <= 1, "leaf fill \(fill)")
        let text = try docstore("inspect", path, "--tree", name)
        #expect(text.status == 0 && text.stdout.contains("depth \(levels.count)") && text.stdout.contains("level 0 branch"), "\(text.stdout)")
        let missing = try docstore("inspect", path, "--tree", "nope")
        #expect(missing.status == 3 && missing.stderr.contains("no tree \"nope\""), "\(missing.stderr)")
    }

    @Test func recoverSalvagesADamagedStoreAndSaysWhatWasLost() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        let intact = try docstore("recover", path, "--to", dir.file("Whole.docstore"))
        #expect(intact.status == 0 && intact.stdout.contains("nothing was lost"), "\(intact.stdout) \(intact.stderr)")
        #expect(try docstore("query", dir.file("Whole.docstore"), "Note").stdout.hasSuffix("999 objects\n"))

        // Damage one leaf of the notes' records.
        let overview = try #require(try json(docstore("inspect", path, "--json").stdout) as? [String: Any])
        let trees = try #require(overview["trees"] as? [String: Int])
        let records = try #require(trees.filter { $0.key.hasPrefix("records.") }.max { $0.value < $1.value }?.key)
        let map = try #require(try json(docstore("inspect", path, "--pages", "--json").stdout) as? [[String: Any]])
        let owned = map.filter { $0["owner"] as? String == records }.compactMap { $0["page"] as? Int }
        let leaves = try owned.filter { page in
            (try json(docstore("inspect", path, "--page", "\(page)", "--json").stdout) as? [String: Any])?["type"] as? String == "leaf"
        }
        let victim = try #require(leaves.dropFirst().first)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.seek(toOffset: UInt64(victim * 4096 + 2000))
        try handle.write(contentsOf: Data([0xEE, 0xEE]))
        try handle.close()
        #expect(try docstore("verify", path).status == 1)

        let rescued = dir.file("Rescued.docstore")
        let recover = try docstore("recover", path, "--to", rescued)
        #expect(recover.status == 1, "\(recover.stdout) \(recover.stderr)")
        #expect(recover.stdout.contains("page \(victim) of \(records) did not read"), "\(recover.stdout)")
        #expect(recover.stdout.contains("history       6 entries not carried over"))
        #expect(try docstore("verify", rescued).status == 0)
        let report = try #require(try json(docstore("recover", path, "--to", dir.file("Again.docstore"), "--json").stdout) as? [String: Any])
        let notes = try #require((report["objects"] as? [String: Int])?["Note"])
        #expect(notes < 999 && notes > 900, "\(notes) notes recovered")
        #expect(try docstore("query", rescued, "Note").stdout.hasSuffix("\(notes) objects\n"))
        #expect(try docstore("recover", path, "--to", rescued).status == 13)

        // A truncated store (the last third of its pages gone): a clear answer from each
        // subcommand, and recover keeps what is left.
        let cut = dir.file("Cut.docstore")
        let bytes = try #require(FileManager.default.contents(atPath: dir.file("Whole.docstore")))
        try bytes.prefix(bytes.count / 3 * 2 / 4096 * 4096).write(to: URL(fileURLWithPath: cut))
        for command in [["verify", cut], ["query", cut, "Note"], ["dump", cut]] {
            let r = try docstore(command)
            #expect([1, 6].contains(r.status) && r.stderr.split(separator: "\n").count == 1 && !r.stderr.contains("Fatal"), "\(command): \(r.status) \(r.stderr)")
        }
        let salvaged = try docstore("recover", cut, "--to", dir.file("FromCut.docstore"))
        #expect(salvaged.status == 1 && salvaged.stdout.contains("lost"), "\(salvaged.stdout) \(salvaged.stderr)")
        #expect(try docstore("verify", dir.file("FromCut.docstore")).status == 0)
    }

    /// The corrupt golden files of Format/golden/: each subcommand answers with a clear line and
    /// its exit code, and recover salvages what reads.
    @Test func theCorruptGoldenFilesGiveClearAnswers() throws {
        let golden = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Format/golden")
        let dir = TemporaryDirectory("cli")
        let bad = dir.file("bad.docstore")
        try FileManager.default.copyItem(atPath: golden.appendingPathComponent("bad-crc-page.docstore").path, toPath: bad)
        let verify = try docstore("verify", bad)
        #expect(verify.status == 1 && verify.stdout.contains("checksum mismatch"), "\(verify.stdout) \(verify.stderr)")
        let page = try docstore("inspect", bad, "--page", "2")
        #expect(page.status == 0 && page.stdout.contains("problem") && page.stdout.contains("checksum"), "\(page.stdout)")
        #expect(try docstore("dump", bad).status == 11, "an engine-only file has no objects to dump")
        let rescued = dir.file("rescued.docstore")
        let recover = try docstore("recover", bad, "--to", rescued)
        #expect(recover.status == 1 && recover.stdout.contains("copied tree by tree") && recover.stdout.contains("page 2"), "\(recover.stdout) \(recover.stderr)")
        #expect(try docstore("verify", rescued).status == 0)

        // A WAL whose last record was cut short: the tail is reported, the store is sound.
        let torn = dir.file("torn.docstore")
        try FileManager.default.copyItem(atPath: golden.appendingPathComponent("tiny.docstore").path, toPath: torn)
        try FileManager.default.copyItem(atPath: golden.appendingPathComponent("torn-tail.docstore-wal").path, toPath: torn + "-wal")
        let before = storeBytes(torn)
        let wal = try docstore("inspect", torn, "--wal")
        #expect(wal.status == 0 && wal.stdout.contains("stopped") && !wal.stdout.contains("torn tail     0 bytes"), "\(wal.stdout)")
        #expect(try docstore("verify", torn).status == 0)
        #expect(storeBytes(torn) == before, "read-only subcommands leave a torn tail as it is")
        let copy = try docstore("recover", torn, "--to", dir.file("torn-copy.docstore"))
        #expect(copy.status == 1 && copy.stdout.contains("the WAL stops at offset"), "\(copy.stdout)")

        // Not a DocStore file, and a truncated one.
        let text = dir.file("text.docstore")
        try Data("hello".utf8).write(to: URL(fileURLWithPath: text))
        for command in [["inspect", text], ["verify", text], ["dump", text], ["recover", text, "--to", dir.file("x.docstore")]] {
            let r = try docstore(command)
            #expect(r.status == 4 || r.status == 6, "\(command): \(r.status) \(r.stderr)")
            #expect(r.stderr.split(separator: "\n").count == 1 && r.stderr.hasPrefix("docstore: "), "\(command): \(r.stderr)")
        }
    }

    @Test func verifyShowsAProgressBarOnlyWhenAskedOrOnATerminal() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        let piped = try docstore("verify", path)
        #expect(piped.status == 0 && piped.stderr.isEmpty, "auto on a pipe draws nothing: \(piped.stderr)")
        let shown = try docstore("verify", path, "--progress", "always")
        #expect(shown.status == 0 && shown.stdout == piped.stdout)
        #expect(shown.stderr.contains("verify  pages    [") && shown.stderr.contains("verify  objects  [##############################] 100 %"), "\(shown.stderr)")
        #expect(shown.stderr.hasSuffix("\r\u{1B}[K"), "the bar is erased when done")
        #expect(try docstore("verify", path, "--progress", "never").stderr.isEmpty)
        #expect(try docstore("verify", path, "--progress", "sometimes").status == 64)
    }

    /// The HTML report is one self-contained page: a square per page in its tree's color, a legend
    /// entry per owner, a row per tree and per entity. (scripts/html-report-check.sh looks at it in
    /// headless Chromium.)
    @Test func theHTMLReportDrawsThePageMapTreesAndEntities() throws {
        let dir = TemporaryDirectory("cli")
        let path = try demoStore(dir)
        let before = storeBytes(path)
        let report = dir.file("report.html")
        let run = try docstore("inspect", path, "--html", report)
        #expect(run.status == 0 && run.stdout.hasPrefix("wrote \(report)"), "\(run.stdout) \(run.stderr)")
        #expect(storeBytes(path) == before)
        let html = try String(contentsOfFile: report, encoding: .utf8)
        #expect(html.hasPrefix("<!DOCTYPE html>") && html.hasSuffix("</body></html>\n"))
        for outside in ["<script", "<link", "http://", "https://", "url("] {
            #expect(!html.contains(outside), "the report reaches outside itself: \(outside)")
        }
        let overview = try #require(try json(docstore("inspect", path, "--json").stdout) as? [String: Any])
        let pages = try #require(overview["pages"] as? Int)
        #expect(html.components(separatedBy: "<div class=\"p\" ").count - 1 == pages)
        let trees = try #require(overview["trees"] as? [String: Int])
        for (tree, entries) in trees {
            #expect(html.contains("> \(tree)</td>") && html.contains("<td class=\"n\">\(entries)</td>"), "no row for \(tree)")
        }
        #expect(html.contains("records of Note: ") && html.contains("free: "), "legend")
        #expect(html.contains("title=\"page 0 · meta\""))
        #expect(html.contains("<tr><td>Note</td><td class=\"n\">999</td>"))
        #expect(try docstore("inspect", path, "--html", dir.file("missing-dir/report.html")).status == 8)
    }
}
