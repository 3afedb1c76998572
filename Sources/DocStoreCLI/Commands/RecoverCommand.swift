// `docstore recover FILE --to NEW [--json]`: salvages every readable object of a damaged store
// into a new store — relationships made whole, indexes rebuilt, the integrity check passed —
// and reports what was lost. Reads FILE without its lock and never changes it. Exit 0 when
// nothing was lost, 1 when the new store lacks something (listed), 13 when NEW exists.

import ArgumentParser
import DocStore
import Foundation

struct RecoverCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "recover",
        abstract: "Salvage every readable object of a damaged store into a new one, and report what was lost.",
        discussion: """
            Pages that do not read are skipped with what is under them (their leaves are looked for among \
            the pages nothing references); each object whose record reads is kept, its relationships \
            restored from whichever side survived, its index entries rebuilt. A file without objects is \
            copied tree by tree. History is not carried over. Exit 0: nothing lost; 1: the report lists \
            what the new store lacks.
            """)

    @Argument(help: "The damaged store's page file (X.docstore). It is only read.")
    var file: String

    @Option(help: "The new store's page file; it must not exist.")
    var to: String

    @Flag(help: "Print the report as JSON.")
    var json = false

    func run() throws {
        requireStore(file)
        requireNew(to, "recover writes a new store")
        let report: RecoveryReport
        do {
            report = try Store.recover(from: URL(fileURLWithPath: file), to: URL(fileURLWithPath: to))
        } catch {
            CLIExit.fail(error)
        }
        if json {
            let out: [String: Any] = [
                "store": to, "from": file, "complete": report.isComplete, "entries": report.entries,
                "objects": Dictionary(uniqueKeysWithValues: report.objects.map { ($0.entity, $0.count) }),
                "damage": report.damage, "lost": report.lost, "repaired": report.repaired, "historyEntriesNotCarried": report.historyEntries,
            ]
            do {
                let data = try JSONSerialization.data(withJSONObject: out, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
            } catch {
                CLIExit.fail(error)
            }
        } else {
            print("recovered     \(to) from \(file)")
            if report.objects.isEmpty {
                print("entries       \(report.entries) (a store without objects: copied tree by tree)")
            } else {
                print("objects       " + report.objects.map { "\($0.entity) \($0.count)" }.joined(separator: ", "))
            }
            for (title, lines) in [("damage", report.damage), ("lost", report.lost), ("repaired", report.repaired)] where !lines.isEmpty {
                print("\(title.padding(toLength: 13, withPad: " ", startingAt: 0)) \(lines.count)")
                for line in lines.prefix(50) { print("  \(line)") }
                if lines.count > 50 { print("  … \(lines.count - 50) more (--json lists all)") }
            }
            if report.historyEntries > 0 { print("history       \(report.historyEntries) entries not carried over: the new store's history starts empty") }
            print(report.isComplete ? "nothing was lost" : "the new store lacks what is listed above; it passes verify")
        }
        if !report.isComplete { throw ExitCode(1) }
    }
}
