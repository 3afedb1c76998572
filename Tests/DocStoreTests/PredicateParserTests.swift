// The predicate format-string language: what parses into what, printing back (description
// parses to the same predicate), arguments and variables, and malformed input — every one a
// typed `.invalidPredicate` error that says what was expected and at which character.

import DocStore
@testable import DocStoreCore
import Foundation
import Testing

@Suite struct PredicateParserTests {
    func parse(_ format: String, _ args: Any?...) throws -> QueryPredicate {
        try QueryPredicate(format: format, argumentArray: args)
    }

    @Test func comparisonsOperatorsAndModifiersParseToTheRepresentation() throws {
        #expect(try parse("title == 'Milk'") == .comparison(QueryComparison(.path("title"), .equal, .constant(.string("Milk")))))
        #expect(try parse("title = \"Milk\"") == parse("title == 'Milk'"))
        #expect(try parse("n <> 3") == .comparison(QueryComparison(.path("n"), .notEqual, .constant(.int(3)))))
        #expect(try parse("n =< 3") == parse("n <= 3"))
        #expect(try parse("n => 3") == parse("n >= 3"))
        #expect(try parse("title BEGINSWITH[cd] 'a'") == .comparison(QueryComparison(
            .path("title"), .beginsWith, .constant(.string("a")), options: [.caseInsensitive, .diacriticInsensitive])))
        #expect(try parse("title like[c] 'a*b?'") == .comparison(QueryComparison(
            .path("title"), .like, .constant(.string("a*b?")), options: .caseInsensitive)))
        #expect(try parse("n BETWEEN {1, 5}") == .comparison(QueryComparison(.path("n"), .between, .list([.constant(.int(1)), .constant(.int(5))]))))
        #expect(try parse("ANY tags.name == 'x'") == .comparison(QueryComparison(.path("tags.name"), .equal, .constant(.string("x")), quantifier: .any)))
        #expect(try parse("SOME tags.name == 'x'") == parse("ANY tags.name == 'x'"))
        #expect(try parse("NONE tags.name == 'x'") == .comparison(QueryComparison(.path("tags.name"), .equal, .constant(.string("x")), quantifier: .none)))
        #expect(try parse("n == -2.5e3") == .comparison(QueryComparison(.path("n"), .equal, .constant(.double(-2500)))))
        #expect(try parse("n == 0x1F") == .comparison(QueryComparison(.path("n"), .equal, .constant(.int(31)))))
        #expect(try parse("flag == YES AND other == false") == .and([
            .comparison(QueryComparison(.path("flag"), .equal, .constant(.bool(true)))),
            .comparison(QueryComparison(.path("other"), .equal, .constant(.bool(false)))),
        ]))
        #expect(try parse("x == nil || x == NULL") == .or([
            .comparison(QueryComparison(.path("x"), .equal, .constant(.null))),
            .comparison(QueryComparison(.path("x"), .equal, .constant(.null))),
        ]))
        #expect(try parse("TRUEPREDICATE") == .constant(true))
        #expect(try parse("NOT FALSEPREDICATE") == .not(.constant(false)))
    }

    @Test func precedenceParenthesesArithmeticAndCollectionOperators() throws {
        // AND binds tighter than OR; NOT tighter than AND.
        let p = try parse("a == 1 OR b == 2 AND NOT c == 3")
        let a = QueryPredicate.comparison(QueryComparison(.path("a"), .equal, .constant(.int(1))))
        let b = QueryPredicate.comparison(QueryComparison(.path("b"), .equal, .constant(.int(2))))
        let c = QueryPredicate.comparison(QueryComparison(.path("c"), .equal, .constant(.int(3))))
        #expect(p == .or([a, .and([b, .not(c)])]))
        #expect(try parse("(a == 1 OR b == 2) AND c == 3") == .and([.or([a, b]), c]))
        // A parenthesis that groups an expression, not a predicate.
        #expect(try parse("(a + b) * 2 > 3") == .comparison(QueryComparison(
            .arithmetic(.multiply, .arithmetic(.add, .path("a"), .path("b")), .constant(.int(2))), .greater, .constant(.int(3)))))
        #expect(try parse("tags.@count > 2") == .comparison(QueryComparison(.aggregate(.count, .path("tags"), []), .greater, .constant(.int(2)))))
        #expect(try parse("notes.@sum.rating >= 10") == .comparison(QueryComparison(.aggregate(.sum, .path("notes"), ["rating"]), .greaterOrEqual, .constant(.int(10)))))
        #expect(try parse("SUBQUERY(tags, $t, $t.name BEGINSWITH 'a').@count == 1") == .comparison(QueryComparison(
            .aggregate(.count, .subquery(.path("tags"), variable: "t",
                                         .comparison(QueryComparison(.keyPath(.variable("t"), ["name"]), .beginsWith, .constant(.string("a"))))), []),
            .equal, .constant(.int(1)))))
        #expect(try parse("SELF == $obj") == .comparison(QueryComparison(.evaluatedObject, .equal, .variable("obj"))))
        #expect(try parse("#in == 1") == .comparison(QueryComparison(.path("in"), .equal, .constant(.int(1)))))
    }

    @Test func argumentsAreTakenInOrderAndTyped() throws {
        let date = Date(timeIntervalSinceReferenceDate: 12345)
        let id = UUID()
        let p = try parse("%K == %@ AND d > %@ AND u == %@ AND n IN %@ AND i == %d AND f == %f",
                          "folder.name", "Inbox", date, id, [1, 2, 3], 7, 2.5)
        #expect(p == .and([
            .comparison(QueryComparison(.path("folder.name"), .equal, .constant(.string("Inbox")))),
            .comparison(QueryComparison(.path("d"), .greater, .constant(.date(date)))),
            .comparison(QueryComparison(.path("u"), .equal, .constant(.uuid(id)))),
            .comparison(QueryComparison(.path("n"), .in, .list([.constant(.int(1)), .constant(.int(2)), .constant(.int(3))]))),
            .comparison(QueryComparison(.path("i"), .equal, .constant(.int(7)))),
            .comparison(QueryComparison(.path("f"), .equal, .constant(.double(2.5)))),
        ]))
        let optional: String? = nil
        #expect(try parse("x == %@", optional) == .comparison(QueryComparison(.path("x"), .equal, .constant(.null))))
        #expect(try parse("d == CAST(100, \"NSDate\") AND u == CAST('\(id.uuidString)', \"UUID\")") == .and([
            .comparison(QueryComparison(.path("d"), .equal, .constant(.date(Date(timeIntervalSinceReferenceDate: 100))))),
            .comparison(QueryComparison(.path("u"), .equal, .constant(.uuid(id)))),
        ]))
    }

    /// A template's placeholders past the ninth (`%10`, `%11`) take their own arguments, parsed
    /// again from the cache with other values; only "%" and digits name a placeholder.
    @Test func twelveArgumentsFillTheirOwnPlaces() throws {
        let format = (0..<12).map { "a\($0) == %@" }.joined(separator: " AND ")
        for round in 0..<2 {
            let values = (0..<12).map { $0 * 10 + round }
            let p = try QueryPredicate(format: format, argumentArray: values)
            #expect(p == .and((0..<12).map { .comparison(QueryComparison(.path("a\($0)"), .equal, .constant(.int(Int64($0 * 10 + round))))) }))
        }
        #expect(VariableBindings.placeholderIndex("%11") == 11)
        for name in ["%", "%1a", "x1", "", "%1234567890"] { #expect(VariableBindings.placeholderIndex(name) == nil) }
    }

    @Test func variablesAreSubstitutedButNotInsideTheirSubquery() throws {
        let p = try parse("n > $min AND SUBQUERY(tags, $t, $t.name == $wanted).@count > 0")
        let bound = try p.withSubstitutionVariables(["min": 3, "wanted": "home", "t": "not used"])
        #expect(bound == (try parse("n > 3 AND SUBQUERY(tags, $t, $t.name == 'home').@count > 0")))
    }

    @Test func descriptionParsesBackToTheSamePredicate() throws {
        let formats = [
            "title BEGINSWITH[cd] \"a\\\"b\" AND (n < 3 OR NOT m >= 2.5)",
            "ANY tags.name IN {\"x\", \"y\"} AND NONE tags.name ==[c] \"z\"",
            "d BETWEEN {CAST(0.0, \"NSDate\"), CAST(100.0, \"NSDate\")}",
            "SUBQUERY(tags, $t, $t.name LIKE \"a*\").@count == (n + 1) * 2",
            "notes.@avg.rating > -1 AND SELF != nil AND #in == YES AND #1st == 2",
            "TRUEPREDICATE OR FALSEPREDICATE",
            "pages MOD 3 == 1 AND pages DIV 7 >= 2 * 2 AND #mod == 1",
        ]
        for format in formats {
            let p = try parse(format)
            #expect(try parse(p.description) == p, "\(format) printed as \(p.description)")
        }
    }

    /// Found by FuzzPredicate: a combining mark after an escape or a quote made one Character
    /// with it, so `"\n\u{301}"` printed as `\ń` and read back as another string. The lexer
    /// reads Unicode scalars now.
    @Test func combiningMarksAfterEscapesAndQuotesRoundTrip() throws {
        for text in ["\n\u{301}", "\u{301}start", "end\\\u{301}", "a\"\u{301}b", "\u{600}", "x\u{200D}"] {
            let p = QueryPredicate.comparison(QueryComparison(.keyPath(.evaluatedObject, ["title"]), .equal, .constant(.string(text))))
            #expect(try parse(p.description) == p, "\(String(reflecting: text)) printed as \(String(reflecting: p.description))")
        }
        // Written by hand: a decomposed é right after the opening quote, and in a key path.
        #expect(try parse("title == '\u{301}x'") == parse("title == \"\\u0301x\""))
        #expect(try parse("cafe\u{301} == 1") == QueryPredicate.comparison(QueryComparison(.keyPath(.evaluatedObject, ["cafe\u{301}"]), .equal, .constant(.int(1)))))
    }

    /// Found by FuzzPredicate: nested parentheses were tried as a predicate, then again as an
    /// expression, at every level — seconds for 40 levels. Each position is tried once now, and
    /// nesting past PredicateParser.maxDepth is a typed error rather than unbounded recursion.
    @Test func deepNestingIsLinearAndBounded() throws {
        let nested = String(repeating: "(", count: 60) + "a > 1" + String(repeating: ")", count: 60)
        #expect(try parse(nested) == parse("a > 1"))
        #expect(try PredicateParser.parenthesizedAttempts(nested) <= 60)
        // Parentheses that never close, around subqueries: each tried once, not once per retry.
        let unbalanced = String(repeating: "((SUBQUERY(t, $t, $t.n > 0 AND ", count: 12) + "x"
        #expect(throws: DocStoreError.self) { try parse(unbalanced) }
        let attempts = try PredicateParser.parenthesizedAttempts(unbalanced)
        #expect(attempts <= 2 * 12 * 2, "\(attempts) attempts for 24 parentheses")
        for deep in [String(repeating: "(", count: 500) + "a", String(repeating: "NOT ", count: 500) + "a > 1",
                     "a == " + String(repeating: "-", count: 500) + "1", "a IN " + String(repeating: "{", count: 500)] {
            let error = #expect(throws: DocStoreError.self) { try parse(deep) }
            #expect(error?.code == .invalidPredicate && error?.message.contains("levels deep") == true, "\(String(describing: error))")
        }
    }

    /// Found by FuzzPredicate: `-%@` given 3 stayed "minus the constant 3", printed `-3`, and `-3`
    /// parses as the constant -3. A negated number folds once substituted, as when parsed.
    @Test func aNegatedArgumentFoldsAsANegatedLiteralDoes() throws {
        for (format, argument) in [("a == -%@", 3 as Any), ("a == - -%@", 3), ("a == -%@", 2.5), ("a > -$x", 7)] {
            var p = try QueryPredicate(format: format, argumentArray: format.contains("%") ? [argument] : [])
            if format.contains("$x") { p = try p.withSubstitutionVariables(["x": argument]) }
            #expect(try parse(p.description) == p, "\(format) with \(argument) printed as \(p.description)")
        }
        #expect(try QueryPredicate(format: "a == -%@", 3) == parse("a == -3"))
    }

    /// Malformed input: the code, the message's hint, and the character position.
    @Test(arguments: [
        ("title ==", "expected a value or a property name, found the end", 8),
        ("title 'x'", "expected a comparison operator", 6),
        ("== 3", "expected a value or a property name", 0),
        ("title == 'open", "unterminated string", 9),
        ("a == 1 AND", "expected a value or a property name, found the end", 10),
        ("a == 1 b == 2", "expected AND, OR or the end", 7),
        ("(a == 1", "expected \"\\)\"", 7),
        ("a ==[x] 1", "unknown comparison option x", 5),
        ("a.@median > 1", "unknown collection operator @median", 2),
        ("a BETWEEN 3", "BETWEEN takes two bounds", 2),
        ("a == 3abc", "a number runs into", 6),
        ("a == %s", "unknown format argument %s", 5),
        ("a == %@", "the format needs argument 1", 5),
        ("a == ^", "unexpected character", 5),
        ("AND == 1", "found the keyword AND", 0),
        ("SUBQUERY(tags, t, t == 1)", "expected a $variable", 15),
        ("d == CAST('yesterday', \"NSDate\")", "is not an ISO 8601 date", 10),
    ])
    func malformedInputIsATypedErrorWithAPosition(_ format: String, _ hint: String, _ position: Int) throws {
        do {
            _ = try QueryPredicate(format: format)
            Issue.record("\(format) parsed")
        } catch {
            #expect(error.code == .invalidPredicate, "\(format)")
            #expect(error.position == position, "\(format): \(error.message)")
            #expect(error.message.range(of: hint.replacingOccurrences(of: "\\", with: ""), options: .literal) != nil, "\(format): \(error.message)")
        }
    }

    @Test func argumentsThatDoNotFitAreTypedErrors() throws {
        #expect(throws: DocStoreError.self) { try QueryPredicate(format: "a == %d", "seven") }
        #expect(throws: DocStoreError.self) { try QueryPredicate(format: "%K == 1", 3) }
        #expect(throws: DocStoreError.self) { try QueryPredicate(format: "a == %@", NSObject()) }
        do {
            _ = try QueryPredicate(format: "a == 1", "extra")
            Issue.record("an extra argument was accepted")
        } catch {
            #expect(error.code == .invalidPredicate)
            #expect(error.message.contains("1 argument was given, but the format uses 0"))
            #expect(error.position == 6, "reported at the format's end: \(error.message)")
        }
    }

    /// FuzzPredicate (Corpus/FuzzPredicate/long-subtraction-chain): a chain of over 100 terms
    /// printed with a parenthesis per operator, past the parser's nesting limit, so the printed
    /// text did not read back. Arithmetic now prints with only the parentheses precedence needs.
    @Test func arithmeticPrintsWithOnlyTheParenthesesItNeeds() throws {
        let chain = (0..<300).map { "n\($0)" }.joined(separator: " - ")
        let long = try QueryPredicate(format: "\(chain) == 0")
        #expect(long.description == "\(chain) == 0")
        #expect(try QueryPredicate(format: long.description) == long)
        for (format, printed) in [
            ("(a + b) * c == 1", "(a + b) * c == 1"), ("a - (b - c) == 1", "a - (b - c) == 1"),
            ("((a * b) + c) == 1", "a * b + c == 1"), ("a / (b * c) == 1", "a / (b * c) == 1"),
            ("-(a - b) == 1", "-(a - b) == 1"), ("(-x).y == 1", "(-x).y == 1"), ("a - -b == 1", "a - -b == 1"),
            ("(a MOD 2) + (b DIV 3) == 1", "a MOD 2 + b DIV 3 == 1"),
        ] {
            let p = try QueryPredicate(format: format)
            #expect(p.description == printed, "\(format)")
            #expect(try QueryPredicate(format: p.description) == p, "\(format) printed as \(p.description)")
        }
    }

    /// Errors found only once the arguments are in still say where (issue #8: "a typed error
    /// with a position"), whether the format was parsed as a template or directly (`%K`).
    @Test func argumentErrorsHaveAPosition() throws {
        let cases: [(String, [Any?], Int)] = [
            ("rating BETWEEN %@", [3], 7),                        // not a pair: at BETWEEN
            ("rating BETWEEN %@", [[1, 2, 3]], 7),
            ("%K BETWEEN %@", ["rating", [1]], 3),                  // parsed directly
            ("a == %@ AND b == 2", ["x", "surplus"], 18),           // a surplus: at the end
            ("%K == %@", ["a", 1, 2], 8),
        ]
        for (format, arguments, position) in cases {
            let error = #expect(throws: DocStoreError.self) { try QueryPredicate(format: format, argumentArray: arguments) }
            #expect(error?.code == .invalidPredicate && error?.position == position, "\(format): \(error?.message ?? "no error")")
        }
        // A pair is still a pair after the check moved.
        let p = try QueryPredicate(format: "rating BETWEEN %@", argumentArray: [[1, 5]])
        #expect(p.description == "rating BETWEEN {1, 5}")
    }

    /// Sort keys are parsed once and then taken from a cache: a second parse gives the same
    /// expression, and a key path that does not parse throws every time (errors are not kept).
    @Test func expressionsParseTheSameFromTheCacheAndErrorsAreNotKept() throws {
        let first = try PredicateParser.parseExpression("folder.name")
        let again = try PredicateParser.parseExpression("folder.name")
        #expect(first == again)
        #expect(first == .keyPath(.evaluatedObject, ["folder", "name"]))
        for _ in 0..<2 {
            #expect(throws: DocStoreError.self) { try PredicateParser.parseExpression("folder..name") }
            #expect(throws: DocStoreError.self) { try PredicateParser.parseExpression("%@") }
        }
        // Many texts, interleaved and past the cache's bound: each answer is its own text's.
        for round in 0..<3 {
            for i in 0..<700 {
                let path = ["a\(i)", "b\(i % 7)"]
                #expect(try PredicateParser.parseExpression(path.joined(separator: ".")) == .keyPath(.evaluatedObject, path), "round \(round), \(i)")
                #expect(try PredicateParser.parseExpression("-rating") == .negated(.keyPath(.evaluatedObject, ["rating"])), "round \(round), \(i)")
            }
        }
    }
}
