// `docstore verify FILE`: the full integrity check — the engine's (checksums, B+tree order, page
// ownership, overflow chains, blob files) and, for an object store, the object graph's (every
// record decodes, index entries ↔ records, both sides of every relationship). Exit 0 when
// clean; otherwise one line per problem with its location, and exit 1. On a terminal, a
// progress bar on standard error while it works (ProgressBar PB1, PB2).

import ArgumentParser
import DocStore
import DocStoreEngine
import Foundation

struct VerifyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "verify",
        abstract: "Check checksums, B+tree order, page ownership, blob files, and the object graph (records, indexes, relationships).")

    @Argument(help: "The store's page file (X.docstore).")
    var file: String

    @Option(help: "A progress bar on standard error: auto (on a terminal, once the check takes half a second), always or never.")
    var progress: ProgressBar.Mode = .auto

    func run() throws {
        let engine = openEngine(file)
        var problems: [String] = []
        var summary = ""
        let bar = ProgressBar(progress)
        defer { bar.finish() }
        do {
            let report = try engine.verify(progress: { bar.update("pages", $0, $1) })
            problems = report.problems.map { "\($0)" }
            summary = "\(report.livePages) pages in use, \(report.freePages) free, \(report.entries.filter { !$0.key.hasPrefix("$") }.values.reduce(0, +)) entries"
            let objects = report.isClean ? try StoreSummary.read(from: engine) : nil
            try engine.close()
            if let objects {
                // The object graph, read with the schema the file holds.
                let store = openObjectStore(file)
                problems += try store.verifyGraph(progress: { bar.update("objects", $0, $1) })
                try store.close()
                summary += "; \(objects.entities.reduce(0) { $0 + $1.objects }) objects: records, index entries and both sides of every relationship agree"
            }
        } catch {
            bar.finish()
            CLIExit.fail(error)
        }
        bar.finish()
        if problems.isEmpty {
            print("ok: \(summary)")
        } else {
            for problem in problems { print("problem: \(problem)") }
            FileHandle.standardError.write(Data("docstore: \(problems.count) problem\(problems.count == 1 ? "" : "s") found\n".utf8))
            throw ExitCode(1)
        }
    }
}
