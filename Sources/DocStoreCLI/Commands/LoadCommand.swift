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
        requireNew(file, "load makes a new store")
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
        } catch where error.code == .uniqueConstraint {
            CLIExit.fail(error, code: CLIExit.badDump)     // two objects of the dump clash
        } catch {
            CLIExit.fail(error)
        }
    }
}
