// Random predicates from a grammar (fixed seeds; a failure prints its seed and the predicate),
// and every file of Fuzz/Corpus/FuzzPredicate, run through the predicate fuzz logic: each must
// parse or throw a typed error, print and parse back to itself, and a fetch through the planner
// must return exactly what evaluating it in memory selects.

import DocStore
import DocStoreQueryTestSupport
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct PredicatePropertyTests {
    struct Grammar {
        var rng: SplitMix64

        mutating func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }

        mutating func value(for path: String) -> String {
            switch path {
            case "title", "folder.name", "tags.name":
                return pick(["'Inbox'", "'inbox'", "'é'", "'e\u{301}'", "'title'", "''", "'a*b'", "'Zz'", "nil", "'Ü'"])
            case "pages": return pick(["0", "1", "2", "3", "4", "-1", "2.5", "nil"])
            case "rating": return pick(["0", "-0.0", "1.5", "2", "nil", "-1"])
            case "created": return pick(["CAST(0, \"NSDate\")", "CAST(50, \"NSDate\")", "CAST(100.0, \"NSDate\")", "nil"])
            default: return pick(["YES", "NO", "1", "0"])
            }
        }

        mutating func comparison() -> String {
            let path = pick(["title", "pages", "rating", "created", "done", "folder.name", "tags.name"])
            let isString = ["title", "folder.name", "tags.name"].contains(path)
            var ops = ["==", "!=", "<", "<=", ">", ">=", "BETWEEN", "IN"]
            if isString { ops += ["BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "MATCHES"] }
            let op = pick(ops)
            let modifier = isString ? pick(["", "", "[c]", "[d]", "[cd]", "[n]"]) : ""
            let quantifier = path == "tags.name" ? pick(["", "ANY ", "ALL ", "NONE "]) : ""
            let rhs: String
            switch op {
            case "BETWEEN": rhs = "{\(value(for: path)), \(value(for: path))}"
            case "IN": rhs = "{\(value(for: path)), \(value(for: path)), \(value(for: path))}"
            case "LIKE": rhs = pick(["'*n*'", "'I?box'", "'*'", "'a\\*b'"])
            case "MATCHES": rhs = pick(["'[a-z]+'", "'.*'", "'I.*'"])
            default: rhs = value(for: path)
            }
            return "\(quantifier)\(path) \(op)\(modifier) \(rhs)"
        }

        mutating func predicate(depth: Int) -> String {
            guard depth > 0 else { return comparison() }
            switch rng.next() % 6 {
            case 0: return "(\(predicate(depth: depth - 1)) AND \(predicate(depth: depth - 1)))"
            case 1: return "(\(predicate(depth: depth - 1)) OR \(predicate(depth: depth - 1)))"
            case 2: return "NOT \(predicate(depth: depth - 1))"
            case 3: return pick(["tags.@count > 1", "SUBQUERY(tags, $t, $t.name == 'a').@count == 1", "folder == nil", "pages + 1 > 3"])
            default: return comparison()
            }
        }
    }

    @Test func theCorpusRunsClean() throws {
        let corpus = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fuzz/Corpus/FuzzPredicate")
        let files = try FileManager.default.contentsOfDirectory(at: corpus, includingPropertiesForKeys: nil)
        #expect(files.count >= 5)
        for file in files.sorted(by: { $0.path < $1.path }) {
            let finding = FuzzTargets.predicate([UInt8](try Data(contentsOf: file)))
            #expect(finding == nil, "\(file.lastPathComponent): \(finding ?? "")")
        }
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func randomPredicatesFetchWhatTheyEvaluateTo(seed: UInt64) throws {
        try run(seed: seed, fixture: try FuzzTargets.predicateFixture())
    }

    /// The same with unsaved changes in the context: an insert, edits of indexed and unindexed
    /// values, a moved note, a deletion, relinked tags.
    @Test(arguments: [UInt64(4), 5])
    func randomPredicatesFetchWhatTheyEvaluateToWithUnsavedChanges(seed: UInt64) throws {
        let (store, c) = try FuzzTargets.predicateFixture()
        let notes = try c.fetch(FetchRequest<ManagedObject>(entityName: "Note", sortDescriptors: [SortKey("pages"), SortKey("title")]))
        let folders = try c.fetch(FetchRequest<ManagedObject>(entityName: "Folder"))
        let tags = try c.fetch(FetchRequest<ManagedObject>(entityName: "Tag"))
        let new = try c.insertObject(forEntityName: "Note")
        try new.setValue("Inbox", forKey: "title")
        try new.setValue(2, forKey: "pages")
        try new.setValue(folders[1], forKey: "folder")
        try new.setValue(Set([tags[0], tags[2]]), forKey: "tags")
        try notes[0].setValue("zebra", forKey: "title")
        try notes[1].setValue(4, forKey: "pages")
        try notes[2].setValue(nil, forKey: "folder")
        try notes[3].setValue(Set<ManagedObject>(), forKey: "tags")
        try folders[0].setValue("Outbox", forKey: "name")
        try c.delete(notes[4])
        try run(seed: seed, fixture: (store, c))
        #expect(c.hasChanges)
    }

    func run(seed: UInt64, fixture: (Store, Context)) throws {
        var grammar = Grammar(rng: SplitMix64(seed: seed))
        for step in 0..<300 {
            let text = grammar.predicate(depth: Int(grammar.rng.next() % 3))
            if let finding = FuzzTargets.predicate(Array(text.utf8), fixture: fixture) {
                Issue.record("seed \(seed) step \(step): \(text)\n\(finding)")
                return
            }
        }
    }
}
