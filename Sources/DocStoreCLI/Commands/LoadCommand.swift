// `docstore load FILE [--input PATH]`: a new store at FILE from a dump read from standard input
// (or a file) — the objects with their numbers, values and relationships, the schema with its
// IDs and versions, the store's identity. FILE must not exist; a dump that does not load
// leaves nothing behind and exits 12, naming the line of each problem.

import ArgumentParser
import DocStore
import Foundation

struct LoadCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "load",
        abstract: "Make a new store from a dump (docstore dump's JSON Lines) read from standard input.",
        discussion: """
            docstore dump A.docstore | docstore load B.docstore makes B equal to A: the same schema, \
            objects, numbers, values and relationships, and the same store identity (object URIs \
            stay valid); B's history starts empty. Every line is checked before anything is kept.
            """)

    @Argument(help: "The new store's page file (X.docstore); it must not exist.")
    var file: String

    @Option(name: .shortAndLong, help: "Read the dump from this file instead of standard input.")
    var input: String?

    func run() throws {
        guard !FileManager.default.fileExists(atPath: file) else {
            CLIExit.fail("\(file) exists already; load makes a new store", code: CLIExit.exists)
        }
        let handle: FileHandle
        if let input {
            guard let h = FileHandle(forReadingAtPath: input) else {
                CLIExit.fail("no dump at \(input)", code: 3)
            }
            handle = h
        } else {
            handle = FileHandle.standardInput
        }
        do {
            let count = try Store.load(from: handle, to: URL(fileURLWithPath: file))
            print("loaded \(count) object\(count == 1 ? "" : "s") into \(file)")
        } catch where error.code == .invalidDump || error.code == .uniqueConstraint {
            // One line that says it all, then the other problems found, indented.
            var text = "docstore: \(error.code): \(error.message)\n"
            for problem in error.problems.dropFirst().prefix(20) { text += "  \(problem)\n" }
            if error.problems.count > 21 { text += "  … \(error.problems.count - 21) more\n" }
            FileHandle.standardError.write(Data(text.utf8))
            Foundation.exit(CLIExit.badDump)
        } catch {
            CLIExit.fail(error)
        }
    }
}
