// `docstore query FILE ENTITY [PREDICATE] [--sort key[:desc]] [--limit N] [--explain] [--json]`:
// the objects of an entity that match a format-string predicate, as a table or JSON, or the
// plan that finds them. Opens the store read-only with the schema it holds; never changes it.

import ArgumentParser
import DocStore
import Foundation

struct QueryCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "query",
        abstract: "Fetch objects with a predicate, as a table or JSON.",
        discussion: """
            The predicate is in the format-string language of NSPredicate:
              docstore query Notes.docstore Note "title BEGINSWITH 'Trip' AND folder.name == 'Inbox'" --sort createdAt:desc --limit 20
            A bad predicate, sort key or entity exits with code 10 and one line on stderr.
            """)

    @Argument(help: "The store's page file (X.docstore).")
    var file: String

    @Argument(help: "The entity to fetch (its sub-entities' objects are included).")
    var entity: String

    @Argument(help: "A format-string predicate, e.g. \"rating > 3 AND title CONTAINS[c] 'trip'\".")
    var predicate: String?

    @Option(name: .long, help: "Sort by key path, ascending; key:desc for descending. Repeatable.")
    var sort: [String] = []

    @Option(name: .long, help: "Show at most N objects (0: all).")
    var limit: Int = 0

    @Flag(help: "Show how the query runs (the plan, and what it read) instead of its objects.")
    var explain = false

    @Flag(help: "Print JSON instead of a table.")
    var json = false

    func validate() throws {
        guard limit >= 0 else { throw ValidationError("--limit takes 0 or more") }
    }

    func run() throws {
        let store = openObjectStore(file)
        let context = Context(store: store)
        do {
            guard store.schema.entity(named: entity) != nil else {
                CLIExit.fail("the store has no entity \"\(entity)\"; it has \(store.schema.entities.map(\.name).joined(separator: ", "))", code: CLIExit.badQuery)
            }
            var request = FetchRequest<ManagedObject>(entityName: entity, predicate: try predicate.map { try QueryPredicate(format: $0) },
                                                      sortDescriptors: sort.map(Self.sortKey), fetchLimit: limit)
            request.includesPendingChanges = false
            if explain {
                print(try context.explain(request, analyze: true))
                return
            }
            let rows = try ObjectRows(entity: entity, schema: store.schema, objects: try context.fetch(request))
            if json {
                print(try rows.jsonText())
            } else {
                print(rows.table())
                print("\(rows.rows.count) object\(rows.rows.count == 1 ? "" : "s")")
            }
        } catch {
            CLIExit.fail(error)
        }
    }

    /// `createdAt` → ascending, `createdAt:desc` → descending.
    static func sortKey(_ text: String) -> SortKey {
        if text.hasSuffix(":desc") { return SortKey(String(text.dropLast(5)), ascending: false) }
        if text.hasSuffix(":asc") { return SortKey(String(text.dropLast(4))) }
        return SortKey(text)
    }
}
