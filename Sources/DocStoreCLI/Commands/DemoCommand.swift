// `docstore demo FILE`: creates a small demo store — folders and notes written through the engine
// in several transactions, one large attachment kept as a blob, a deletion — so that a newcomer
// has something to inspect. (Once the object layer lands this writes through a Context.)

import ArgumentParser
import DocStoreEngine
import Foundation

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo",
        abstract: "Create a demo store to look at (replaces FILE if it exists).")

    @Argument(help: "Where to create the store (X.docstore).")
    var file: String

    func run() throws {
        for suffix in ["", "-wal", "-blobs"] { try? FileManager.default.removeItem(atPath: file + suffix) }
        do {
            var options = EngineOptions()
            options.blobThreshold = 64 << 10
            let engine = try Engine.open(at: file, options: options)
            try engine.write { txn in
                try txn.createTree(named: "folders")
                try txn.createTree(named: "notes")
                for (i, name) in ["Inbox", "Work", "Recipes"].enumerated() {
                    try txn.put(Array(name.utf8), for: [UInt8(i)], in: "folders")
                }
            }
            for batch in 0..<5 {
                try engine.write { txn in
                    for i in 0..<200 {
                        let n = batch * 200 + i
                        let note = "{\"folder\":\(n % 3),\"title\":\"Note \(n)\",\"body\":\"\(String(repeating: "lorem ipsum ", count: 1 + n % 20))\"}"
                        try txn.put(Array(note.utf8), for: Array(String(format: "note-%05d", n).utf8), in: "notes")
                    }
                }
            }
            try engine.checkpoint()
            try engine.write { txn in
                try txn.createTree(named: "attachments")
                let photo = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 * 7 / 5) }
                try txn.put(photo, for: Array("note-00042/photo.raw".utf8), in: "attachments")
                try txn.delete(Array("note-00007".utf8), in: "notes")
            }
            let count = try engine.read { try $0.count(in: "notes") }
            try engine.close()
            print("created \(file): 3 folders, \(count) notes, 1 attachment")
        } catch {
            CLIExit.fail(error)
        }
    }
}
