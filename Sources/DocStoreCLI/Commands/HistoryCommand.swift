// `docstore history FILE [--after TOKEN] [--entity NAME]… [--limit N] [--json]`: the store's
// persistent history — each transaction with its token, time, author and context, and the
// objects it inserted, updated (with the properties) and deleted. Read-only.

import ArgumentParser
import DocStore
import Foundation

struct HistoryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "history",
        abstract: "List the persistent history's transactions and their changes.")

    @Argument(help: "The store's page file (X.docstore).")
    var file: String

    @Option(help: "Only transactions after this token (a number, as printed).")
    var after: UInt64?

    @Option(help: "Only transactions that changed objects of this entity. Repeatable.")
    var entity: [String] = []

    @Option(help: "At most N transactions, the first after the token (0: all).")
    var limit: Int = 0

    @Flag(help: "Print JSON instead of text.")
    var json = false

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit takes 0 or more") }
    }

    func run() throws {
        let store = openObjectStore(file)
        let transactions: [HistoryTransaction]
        do {
            let all = try store.history(after: after.map(HistoryToken.init), entities: entity.isEmpty ? nil : entity)
            transactions = limit > 0 ? Array(all.prefix(limit)) : all
        } catch {
            CLIExit.fail(error)
        }
        if json {
            let out: [[String: Any]] = transactions.map { t in
                ["token": t.token.value, "timestamp": ObjectRows.iso8601(t.timestamp), "author": t.author ?? NSNull(),
                 "contextName": t.contextName ?? NSNull(),
                 "changes": t.changes.map { c -> [String: Any] in
                     var change: [String: Any] = ["object": c.changedObjectID.uriRepresentation.absoluteString, "type": "\(c.changeType)"]
                     if c.changeType == .update { change["properties"] = c.updatedProperties.sorted() }
                     if !c.tombstone.isEmpty { change["tombstone"] = c.tombstone.mapValues { ObjectRows.json($0.anyValue) } }
                     return change
                 }]
            }
            do {
                let data = try JSONSerialization.data(withJSONObject: out, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
                print(String(decoding: data, as: UTF8.self))
            } catch {
                CLIExit.fail(error)
            }
            return
        }
        for t in transactions {
            let counts = [HistoryChange.ChangeType.insert, .update, .delete].map { kind in t.changes.filter { $0.changeType == kind }.count }
            var head = "token \(t.token.value)  \(ObjectRows.iso8601(t.timestamp))  +\(counts[0]) ~\(counts[1]) -\(counts[2])"
            if let author = t.author { head += "  author \(author)" }
            if let name = t.contextName { head += "  context \(name)" }
            print(head)
            for c in t.changes.prefix(10) { print("  \(c)") }
            if t.changes.count > 10 { print("  … \(t.changes.count - 10) more") }
        }
        print("\(transactions.count) transaction\(transactions.count == 1 ? "" : "s")")
    }
}
