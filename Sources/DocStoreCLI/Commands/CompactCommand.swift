// `docstore compact FILE`: moves live pages toward the front of the file, merges underfull
// leaves and truncates the free tail, in steps that each commit (Engine+Compact.swift); reports
// the bytes reclaimed. Needs the write lock: fails with exit code 7 while an app has the store
// open for writing.

import ArgumentParser
import DocStore
import DocStoreEngine
import Foundation

struct CompactCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "compact",
        abstract: "Give a store's free pages back to the file system.")

    @Argument(help: "The store's page file (X.docstore).")
    var file: String

    func run() throws {
        let engine = openEngine(file, forWriting: true)
        do {
            let report = try engine.compact()
            try engine.close()
            print("compacted: \(humanBytes(report.bytesBefore)) → \(humanBytes(report.bytesAfter)), \(humanBytes(report.bytesReclaimed)) reclaimed (\(report.pagesMoved) pages moved in \(report.steps) steps)")
        } catch {
            CLIExit.fail(error)
        }
    }
}
