// `docstore checkpoint FILE`: writes the WAL's transactions into the page file and starts a new
// WAL. Needs the write lock: fails with exit code 7 while an app has the store open for writing.

import ArgumentParser
import DocStoreEngine
import Foundation

struct CheckpointCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "checkpoint",
        abstract: "Fold the WAL into the page file.")

    @Argument(help: "The store's page file (X.docstore).")
    var file: String

    func run() throws {
        let engine = openEngine(file, forWriting: true)
        do {
            try engine.checkpoint()
            let meta = engine.durableMeta
            try engine.close()
            print("checkpoint generation \(meta.generation.rawValue) at lsn \(meta.checkpointLSN.rawValue)")
        } catch {
            CLIExit.fail(error)
        }
    }
}
