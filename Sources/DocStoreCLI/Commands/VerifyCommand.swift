// `docstore verify FILE`: the full integrity check. Exit 0 when clean; otherwise one line per
// problem with its location, and exit 1.

import ArgumentParser
import DocStoreEngine
import Foundation

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check checksums, B+tree order, page ownership, overflow chains and blob files.")

    @Argument(help: "The store's page file (X.docstore).")
    var file: String

    func run() throws {
        let engine = openReadOnly(file)
        do {
            let report = try engine.verify()
            if report.isClean {
                print("ok: \(report.livePages) pages in use, \(report.freePages) free, \(report.entries.filter { !$0.key.hasPrefix("$") }.values.reduce(0, +)) entries")
            } else {
                for problem in report.problems { print("problem: \(problem)") }
                FileHandle.standardError.write(Data("docstore: \(report.problems.count) problems found\n".utf8))
                throw ExitCode(1)
            }
        } catch let error as EngineError {
            CLIExit.fail(error)
        }
    }
}
