// PredicateFuzzTarget: fuzz logic for the predicate format-string parser, planner and evaluator
// on arbitrary text (corpus: Fuzz/Corpus/FuzzPredicate, replayed by PredicatePropertyTests, which
// also feeds it grammar-made predicates). Properties:
//   P1  parsing returns a predicate or throws a typed DocStoreError (`.invalidPredicate`) whose
//       position lies in the text; it never traps or hangs;
//   P2  a parsed predicate prints (`description`) to text that parses back to the same predicate;
//   P3  run against a small store, a fetch (through whatever plan the planner picks) returns
//       exactly the objects the predicate selects when evaluated in memory on every object —
//       when both succeed (a typed error from either is a correct answer to a bad query).

import DocStoreCore
import DocStoreTestSupport
import Foundation

extension FuzzTargets {
    /// Arguments for `%@ %d %f %K`, used in order (cycling) when the text has `%` in it.
    static var predicateArguments: [Any?] { ["Inbox", 3, 2.5, "title", [1, 2, 3], nil, Date(timeIntervalSinceReferenceDate: 100)] }

    public static func predicate(_ data: [UInt8]) -> String? {
        predicate(data, fixture: nil)
    }

    /// The same, on a fixture the caller made with ``predicateFixture()`` (reused across inputs).
    public static func predicate(_ data: [UInt8], fixture given: (Store, Context)?) -> String? {
        guard data.count <= 2_048 else { return nil }
        let format = String(decoding: data, as: UTF8.self)
        let percents = format.filter { $0 == "%" }.count
        let choices = predicateArguments
        let arguments = (0..<percents).map { choices[$0 % choices.count] }
        // P1
        let parsed: QueryPredicate
        do throws(DocStoreError) {
            parsed = try QueryPredicate(format: format, argumentArray: arguments)
        } catch {
            guard error.code == .invalidPredicate, let position = error.position else {
                return "\(String(reflecting: format)) was refused without a position: \(error)"
            }
            let length = format.unicodeScalars.count
            if position < 0 || position > length { return "\(String(reflecting: format)): error position \(position) is outside its \(length) characters" }
            return nil
        }
        // P2
        let text = parsed.description
        do {
            let again = try QueryPredicate(format: text)
            if again != parsed { return "round trip: \(String(reflecting: format)) printed as \(String(reflecting: text)) parses to something else" }
        } catch {
            return "round trip: \(String(reflecting: format)) printed as \(String(reflecting: text)), which does not parse: \(error)"
        }
        // P3
        do {
            let (store, context) = try given ?? predicateFixture()
            defer { if given == nil { try? store.close() } }
            for entity in ["Note", "Folder", "Tag"] {
                let request = FetchRequest<ManagedObject>(entityName: entity, predicate: parsed)
                guard let fetched = try? context.fetch(request) else { continue }
                var expected: [ManagedObject] = []
                var oracleFailed = false
                for object in try context.fetch(FetchRequest<ManagedObject>(entityName: entity)) {
                    guard let matches = try? parsed.evaluate(with: object) else { oracleFailed = true; break }
                    if matches { expected.append(object) }
                }
                if oracleFailed { continue }
                let got = fetched.compactMap(\.objectID).map(\.primaryKey).sorted()
                let want = expected.compactMap(\.objectID).map(\.primaryKey).sorted()
                if got != want {
                    return "\(entity) where \(text): the fetch returned \(got.count) objects, evaluation in memory selects \(want.count)\n\((try? context.explain(request)) ?? "")"
                }
            }
        } catch {
            return "the fixture store failed: \(error)"
        }
        return nil
    }

    /// A small notes store, with indexes, nils and links, built the same way every time.
    public static func predicateFixture() throws -> (Store, Context) {
        let schema = Schema(entities: [
            EntityDescription(name: "Folder", attributes: [
                AttributeDescription(name: "name", type: .string, isUnique: true),
            ], relationships: [
                RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", isToMany: true, deleteRule: .cascade),
            ]),
            EntityDescription(name: "Note", attributes: [
                AttributeDescription(name: "title", type: .string, isOptional: true, isIndexed: true),
                AttributeDescription(name: "pages", type: .int64, isIndexed: true),
                AttributeDescription(name: "rating", type: .double, isOptional: true, isIndexed: true),
                AttributeDescription(name: "created", type: .date, isIndexed: true),
                AttributeDescription(name: "done", type: .bool),
            ], relationships: [
                RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes"),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "notes", isToMany: true),
            ]),
            EntityDescription(name: "Tag", attributes: [
                AttributeDescription(name: "name", type: .string, isIndexed: true),
            ], relationships: [
                RelationshipDescription(name: "notes", destination: "Note", inverse: "tags", isToMany: true),
            ]),
        ])
        let store = try Store.inMemory(schema: schema)
        let c = Context(store: store)
        var folders: [ManagedObject] = []
        for name in ["Inbox", "Work", "é"] {
            let f = try c.insertObject(forEntityName: "Folder")
            try f.setValue(name, forKey: "name")
            folders.append(f)
        }
        var tags: [ManagedObject] = []
        for name in ["a", "b", "Inbox"] {
            let t = try c.insertObject(forEntityName: "Tag")
            try t.setValue(name, forKey: "name")
            tags.append(t)
        }
        let titles: [String?] = ["Inbox", "inbox", nil, "title", "", "e\u{301}", "é", "a*b", "3", "Zz", "x y", "Ü"]
        for (i, title) in titles.enumerated() {
            let n = try c.insertObject(forEntityName: "Note")
            try n.setValue(title, forKey: "title")
            try n.setValue(i % 5, forKey: "pages")
            try n.setValue(i == 3 ? nil : i == 4 ? Double.nan : i == 5 ? -0.0 : Double(i) / 2, forKey: "rating")
            try n.setValue(Date(timeIntervalSinceReferenceDate: Double(i % 4) * 50), forKey: "created")
            try n.setValue(i % 2 == 0, forKey: "done")
            if i % 4 != 0 { try n.setValue(folders[i % 3], forKey: "folder") }
            try n.setValue(Set(tags.prefix(i % 4)), forKey: "tags")
        }
        try c.save()
        return (store, c)
    }
}
