// Counts and fetches of saved objects decide comparisons on the records' bytes
// (EncodedRecordFilter); the same objects unsaved are tested by the evaluator on their values.
// Random comparisons (fixed seeds; a failure prints its seed and predicate) must select the
// same objects both ways — over strings chosen to sit on the byte path's edges: case, CR LF,
// NUL, non-ASCII, canonically equivalent spellings, missing (nil) values and defaults — and over
// numbers and dates of every kind a record holds, NaN and -0 included.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct EncodedRecordFilterTests {
    typealias Book = QueryConformanceTests.Book

    static let texts = ["milk", "Milk", "MILK shake", "buy milk", "a\r\nb", "a\r", "\nb", "x\u{0}y", "café", "cafe\u{301}",
                        "", "Zz", "zz", "ab", "abc", "ABD", "straße", "STRASSE", "a*b", "~", "b"]
    static let constants = ["milk", "MILK", "a\r", "\nb", "b", "", "ab", "Ab", "cafe", "café", "x", "\u{0}", "zz", "a*b", "a?c"]
    static let ops = ["==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE", "IN"]
    static let options = ["", "[c]", "[d]", "[cd]", "[n]", "[cn]"]

    /// `count` books with random titles, subtitles (some nil), pages and read flags.
    static func books(_ rng: inout SplitMix64, _ count: Int) -> [Book] {
        (0..<count).map { _ in
            let b = Book()
            b.title = texts[Int(rng.next() % UInt64(texts.count))]
            if rng.next() % 3 != 0 { b.subtitle = texts[Int(rng.next() % UInt64(texts.count))] }
            b.pages = Int(rng.next() % 5)
            b.isRead = rng.next() % 2 == 0
            b.rating = [0, -0.0, 1.5, 2, .nan, -1][Int(rng.next() % 6)]
            if rng.next() % 4 != 0 { b.published = Date(timeIntervalSinceReferenceDate: Double(rng.next() % 3) * 100) }
            return b
        }
    }

    /// A random comparison, or an AND of two, with its arguments.
    static func predicate(_ rng: inout SplitMix64) throws -> (QueryPredicate, String) {
        func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }
        func comparison() -> (String, [Any]) {
            switch rng.next() % 6 {
            case 0: return ("pages \(pick(["==", "!=", "<", ">="])) %@", [pick([Int(rng.next() % 5), 2.5, true] as [Any])])
            case 1: return ("isRead \(pick(["==", "!=", ">"])) %@", [pick([true, false, 1, 0.5] as [Any])])
            case 2: return ("rating \(pick(["==", "!=", "<", "<=", ">", ">="])) %@", [pick([0, 1.5, -0.0, Double.nan, 2, true] as [Any])])
            case 3: return ("published \(pick(["==", "!=", "<", ">="])) %@", [Date(timeIntervalSinceReferenceDate: Double(rng.next() % 3) * 100)])
            default:
                let path = pick(["title", "subtitle"])
                let op = pick(ops)
                if op == "IN" { return ("\(path) IN%@ %@", [pick(options), [pick(constants), pick(constants)]]) }
                return ("\(path) \(op)\(pick(options)) %@", [pick(constants)])
            }
        }
        let (first, firstArguments) = comparison()
        var format = first, arguments = firstArguments
        if rng.next() % 2 == 0 {
            let (second, more) = comparison()
            format += " AND " + second
            arguments += more
        }
        // `IN%@` above carries the options as text, not as an argument.
        var text = format, values: [Any] = []
        for a in arguments {
            if let o = a as? String, options.contains(o), let r = text.range(of: "IN%@") {
                text.replaceSubrange(r, with: "IN\(o)")
            } else {
                values.append(a)
            }
        }
        return (try QueryPredicate(format: text, argumentArray: values), "\(text) with \(values)")
    }

    @Test(arguments: [1, 2, 3, 4, 5, 6, 7, 8] as [UInt64])
    func bytesAndValuesSelectTheSameObjects(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let store = try Store.inMemory(models: [QueryConformanceTests.Shelf.self, Book.self, QueryConformanceTests.Label.self])
        let unsaved = Context(store: store)
        let books = Self.books(&rng, 120)
        for b in books { try unsaved.insert(b) }
        var predicates: [(QueryPredicate, String)] = []
        for _ in 0..<150 { predicates.append(try Self.predicate(&rng)) }
        // Unsaved: the evaluator tests each object's values.
        var expected: [[String]] = []
        for (p, _) in predicates {
            expected.append(try unsaved.fetch(FetchRequest<Book>(predicate: p)).map { "\($0.title)|\($0.subtitle ?? "nil")|\($0.pages)" }.sorted())
        }
        try unsaved.save()
        // Saved, in a new context: the records' bytes decide.
        let saved = Context(store: store)
        for (i, (p, text)) in predicates.enumerated() {
            let request = FetchRequest<Book>(predicate: p)
            let got = try saved.fetch(request).map { "\($0.title)|\($0.subtitle ?? "nil")|\($0.pages)" }.sorted()
            #expect(got == expected[i], "seed \(seed), predicate \(text.debugDescription)")
            let count = try saved.count(for: request)
            #expect(count == expected[i].count, "seed \(seed), count of \(text.debugDescription): \(count), not \(expected[i])")
        }
    }
}
