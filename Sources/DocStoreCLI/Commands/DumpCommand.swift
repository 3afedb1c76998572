// `docstore dump FILE [--output PATH]`: every object of the store as JSON Lines — a header
// with the schema, one line per object, and a last line with the count (Format/dump.md).
// `docstore load` reads it back into an equal store. Read-only.

import ArgumentParser
import DocStore
import Foundation

struct DumpCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "dump",
        abstract: "Write every object as JSON Lines (schema first); docstore load reads it back.",
        discussion: """
            Line 1 holds the catalog (every schema version and ID), the store's identity and key \
            sequences; then one line per object, {"id":"Note/3","values":{…},"relationships":{…}}; \
            the last line {"end":"docstore","objects":N} tells a whole dump from a cut-off one.
            """)

    @Argument(help: "The store's page file (X.docstore).")
    var file: String

    @Option(name: .shortAndLong, help: "Write the dump to this file instead of standard output (it must not exist).")
    var output: String?

    func run() throws {
        let store = openObjectStore(file)
        let handle: FileHandle
        if let output {
            requireNew(output, "dump writes a new file")
            guard FileManager.default.createFile(atPath: output, contents: nil), let h = FileHandle(forWritingAtPath: output) else {
                CLIExit.fail("\(output) could not be created", code: 8)
            }
            handle = h
        } else {
            handle = FileHandle.standardOutput
        }
        do {
            let count = try store.dump(to: handle)
            if output != nil { print("dumped \(count) object\(count == 1 ? "" : "s") to \(output ?? "")") }
        } catch {
            if let output { try? FileManager.default.removeItem(atPath: output) }
            CLIExit.fail(error)
        }
    }
}
