// Compound indexes and uniqueness constraints (#Index, #Unique): declared in code and kept in the
// catalog, maintained in the save's transaction through inserts, edits and deletes (the index
// trees are compared entry by entry with what the records say), used by the planner for the
// leftmost prefix (equalities, then a range or an order on the next element), and refusing
// duplicate combinations with a typed error that leaves the store as it was.

import DocStoreEngine
import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct CompoundIndexTests {
    @Model final class Board: ManagedObject {
        @Attribute(.unique) var name: String = ""
        @Relationship(deleteRule: .cascade, inverse: \Card.board) var cards: Set<Card> = []
    }

    @Model final class Card: ManagedObject {
        #Index<Card>([\.board, \.due], [\.stage, \.priority, \.title])
        #Unique<Card>([\.board, \.title])
        var title: String = ""
        var stage: String?
        var priority: Int = 0
        var due: Date = Date(timeIntervalSinceReferenceDate: 0)
        var board: Board?
    }

    /// Indexes a key path through a relationship, which an index cannot hold.
    @Model final class Misindexed: ManagedObject {
        #Index<Misindexed>([\.board?.name])
        var board: Board?
    }

    static let stages: [String?] = ["todo", "doing", "done", nil]

    /// 4 boards and `count` cards with ties in every element; card i's title is unique per board.
    static func makeStore(count: Int = 120, seed: UInt64 = 7) throws -> (Store, Context, [Board]) {
        let store = try Store.inMemory(models: [Board.self, Card.self])
        let c = Context(store: store)
        let boards = (0..<4).map { i in
            let b = Board()
            b.name = "board \(i)"
            return b
        }
        for b in boards { try c.insert(b) }
        var rng = SplitMix64(seed: seed)
        for i in 0..<count {
            let card = Card()
            card.title = "card \(i)"
            card.stage = stages[Int(rng.next() % 4)]
            card.priority = Int(rng.next() % 3)
            card.due = Date(timeIntervalSinceReferenceDate: Double(rng.next() % 20) * 3600)
            try c.insert(card)
            if i % 9 != 0 { card.board = boards[Int(rng.next() % 4)] }
        }
        try c.save()
        return (store, c, boards)
    }

    /// Fetches through the planner and checks the result against the predicate evaluated on
    /// every object; returns the plan with its read figures.
    @discardableResult
    func checkAgainstOracle(_ c: Context, _ predicate: QueryPredicate, sort: [SortKey] = [], limit: Int = 0,
                            sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        let request = FetchRequest<Card>(predicate: predicate, sortDescriptors: sort, fetchLimit: limit)
        let fetched = try c.fetch(request)
        var all = try c.fetch(FetchRequest<Card>(sortDescriptors: sort)).filter { try predicate.evaluate(with: $0) }
        if limit > 0 { all = Array(all.prefix(limit)) }
        #expect(fetched.map(\.objectID) == all.map(\.objectID), "\(predicate)", sourceLocation: sourceLocation)
        #expect(try c.count(for: request) == all.count, "\(predicate)", sourceLocation: sourceLocation)
        return try c.explain(request, analyze: true)
    }

    /// The figures of explain's last line: index entries read, records read, results.
    func reads(_ plan: String) -> [Int] {
        (plan.split(separator: "\n").last.map(String.init) ?? "").split { !$0.isNumber }.compactMap { Int($0) }
    }

    /// Every entry of every compound index is what the saved records say, and nothing else.
    func checkIndexTrees(_ store: Store, sourceLocation: SourceLocation = #_sourceLocation) throws {
        guard let entity = store.model.entity(named: "Card") else { Issue.record("no Card"); return }
        let c = Context(store: store)
        let cards = try c.fetch(Card.self)
        for index in entity.compoundIndexes {
            var expected: [[UInt8]: [UInt8]] = [:]
            for card in cards {
                guard let key = card.objectID?.primaryKey else { continue }
                for (k, _) in Context.compoundEntries(card.values, index, key: key) { expected[k] = PrimaryKey.bytes(key) }
            }
            var stored: [[UInt8]: [UInt8]] = [:]
            try store.engine.read { txn in
                guard try txn.treeExists(index.tree) else { return }
                var cursor = try txn.cursor(in: index.tree)
                var entry = try cursor.first()
                while let (k, v) = entry {
                    stored[k] = v
                    entry = try cursor.next()
                }
            }
            #expect(stored == expected, "\(index.text): \(stored.count) entries stored, \(expected.count) expected", sourceLocation: sourceLocation)
        }
    }

    @Test func theMacroDeclaresTheIndexesAndTheCatalogKeepsThem() throws {
        let entity = try #require(Card._$entityDescription)
        #expect(entity.indexes == [
            IndexDescription(["board", "due"]), IndexDescription(["stage", "priority", "title"]),
            IndexDescription(["board", "title"], isUnique: true),
        ])
        #expect(entity.uniquenessConstraints == [["board", "title"]])

        let dir = TemporaryDirectory()
        let url = URL(fileURLWithPath: dir.file("cards.docstore"))
        do {
            let store = try Store(url: url, models: [Board.self, Card.self])
            try store.close()
        }
        // Reopened with the same indexes: the catalog read back has them.
        let store = try Store(url: url, models: [Board.self, Card.self])
        #expect(store.schema.entity(named: "Card")?.indexes == entity.indexes)
        #expect(store.model.entity(named: "Card")?.compoundIndexes.map { $0.tree }.allSatisfy { $0.hasPrefix("compound.") || $0.hasPrefix("unique.") } == true)
        try store.close()

        // Another set of indexes is a schema difference, named.
        var schema = Schema(models: [Board.self, Card.self])
        schema.entities[1].indexes.removeFirst()
        let error = #expect(throws: DocStoreError.self) { try Store(url: url, schema: schema) }
        #expect(error?.code == .schemaMismatch)
        #expect(error?.problems.map { $0.message }.contains("index Card(board, due) removed") == true, "\(String(describing: error))")
    }

    @Test func badIndexDeclarationsAreSchemaErrorsNamingTheProperty() throws {
        var card = try #require(Card._$entityDescription)
        let board = try #require(Board._$entityDescription)
        card.indexes = [
            IndexDescription([]), IndexDescription(["title", "title"]), IndexDescription(["missing"]),
        ]
        var withToMany = board
        withToMany.indexes = [IndexDescription(["name", "cards"])]
        let error = #expect(throws: DocStoreError.self) { try Schema(entities: [withToMany, card]).validate() }
        let problems = error?.problems ?? []
        #expect(problems.filter { $0.message.contains("index") }.count == 4, "\(problems)")
        #expect(problems.contains { $0.property == "missing" && $0.message.contains("not a property of Card") })
        #expect(problems.contains { $0.property == "cards" && $0.message.contains("to-many") })
        #expect(problems.contains { $0.message.contains("names no property") })
        #expect(problems.contains { $0.message.contains("names a property twice") })

        // A key path of several steps in #Index reaches open as a schema error naming it.
        let deep = #expect(throws: DocStoreError.self) { try Store.inMemory(models: [Board.self, Misindexed.self]) }
        #expect(deep?.code == .invalidSchema)
        #expect(deep?.problems.contains { $0.property == "board.name" && $0.message.contains("not a property of Misindexed") } == true,
                "\(String(describing: deep))")
    }

    @Test func leftmostPrefixQueriesUseTheIndexAndMatchTheOracle() throws {
        let (_, c, boards) = try Self.makeStore()
        let b = boards[1]
        let both = try checkAgainstOracle(c, try QueryPredicate(format: "stage == 'doing' AND priority == 2"))
        #expect(both.contains("index compound.") && both.contains("Card(stage, priority, title), stage == \"doing\" and priority == 2"), "\(both)")
        #expect(both.contains("answered by the index"), "\(both)")
        let r = reads(both)
        #expect(r.count == 3 && r[0] == r[2] && r[1] == r[2], "only the matching entries are read: \(both)")

        let first = try checkAgainstOracle(c, try QueryPredicate(format: "stage == nil"))
        #expect(first.contains("Card(stage, priority, title), stage == nil"), "\(first)")
        let ranged = try checkAgainstOracle(c, try QueryPredicate(format: "stage == 'todo' AND priority >= 1 AND title BEGINSWITH 'card 1'"))
        #expect(ranged.contains("stage == \"todo\" and priority >= 1"), "\(ranged)")
        let prefix = try checkAgainstOracle(c, try QueryPredicate(format: "stage == 'done' AND priority == 0 AND title BEGINSWITH 'card 2'"))
        // A prefix range bounds the candidates, but a byte prefix can end inside a character
        // ("a\r" of "a\r\nb"), so each candidate is still tested.
        #expect(prefix.contains("title BEGINSWITH \"card 2\"") && prefix.contains("tested on each candidate"), "\(prefix)")
        let toOne = try checkAgainstOracle(c, try QueryPredicate(format: "board == %@ AND due < %@", b, Date(timeIntervalSinceReferenceDate: 5 * 3600)))
        #expect(toOne.contains("Card(board, due), board == ") && toOne.contains("and due < "), "\(toOne)")
        let noBoard = try checkAgainstOracle(c, try QueryPredicate(format: "board == nil"))
        #expect(noBoard.contains("Card(board, due), board == nil") || noBoard.contains("Card(board, title), board == nil"), "\(noBoard)")
        // The second element alone is not a leftmost prefix: a scan.
        let second = try checkAgainstOracle(c, try QueryPredicate(format: "priority == 1"))
        #expect(second.contains("source: scan"), "\(second)")
        // A residual filter on top of the prefix.
        try checkAgainstOracle(c, try QueryPredicate(format: "stage == 'todo' AND title CONTAINS '3'"))
        try checkAgainstOracle(c, try QueryPredicate(format: "(stage == 'todo' AND priority == 1) OR (stage == 'done' AND priority == 2)"))
    }

    @Test func anEqualityPrefixThenTheSortElementReadsOnlyTheWindow() throws {
        let (_, c, boards) = try Self.makeStore(count: 400)
        let b = boards[2]
        let plan = try checkAgainstOracle(c, try QueryPredicate(format: "board == %@", b), sort: [SortKey("due"), SortKey("title")], limit: 5)
        #expect(plan.contains("by the index's order (forward)"), "\(plan)")
        // Five results, then the ties of the fifth one's due date: far fewer than the board's cards.
        let boardCards = try c.count(for: FetchRequest<Card>(predicate: try QueryPredicate(format: "board == %@", b)))
        let r = reads(plan)
        #expect(r.count == 3 && r[2] == 5 && r[0] < boardCards / 2, "\(plan) — the board has \(boardCards) cards")
        let backward = try checkAgainstOracle(c, try QueryPredicate(format: "board == %@", b), sort: [SortKey("due", ascending: false)], limit: 7)
        #expect(backward.contains("backward"), "\(backward)")
        // Sorting by the first element with no predicate walks the compound index too.
        let byStage = try checkAgainstOracle(c, .constant(true), sort: [SortKey("stage"), SortKey("title")], limit: 4)
        #expect(byStage.contains("Card(stage, priority, title)") && byStage.contains("forward"), "\(byStage)")
    }

    /// A walk of an index in sort order meets the ties of a sort value in entry order: by the
    /// elements after it (stage, priority, title sorted by priority: by title), or backwards.
    /// F3 orders ties by primary key, whichever way the walk goes, with or without a window.
    @Test func tiesComeInKeyOrderWhicheverWayTheIndexIsWalked() throws {
        let (_, c, boards) = try Self.makeStore(count: 300, seed: 5)
        for limit in [0, 4, 25] {
            for ascending in [true, false] {
                let byPriority = try checkAgainstOracle(c, try QueryPredicate(format: "stage == 'todo'"),
                                                        sort: [SortKey("priority", ascending: ascending)], limit: limit)
                #expect(byPriority.contains("Card(stage, priority, title)") && byPriority.contains(ascending ? "forward" : "backward"), "\(byPriority)")
                let byDue = try checkAgainstOracle(c, try QueryPredicate(format: "board == %@", boards[1]),
                                                   sort: [SortKey("due", ascending: ascending)], limit: limit)
                #expect(byDue.contains(ascending ? "forward" : "backward"), "\(byDue)")
            }
        }
        // Unsaved cards take their places among the stored ones.
        for i in 0..<3 {
            let card = Card()
            card.title = "unsaved \(i)"
            card.stage = "todo"
            card.priority = i
            try c.insert(card)
        }
        for ascending in [true, false] {
            try checkAgainstOracle(c, try QueryPredicate(format: "stage == 'todo'"), sort: [SortKey("priority", ascending: ascending)])
        }
    }

    @Test func indexesFollowEditsAndDeletes() throws {
        let (store, c, boards) = try Self.makeStore(count: 60, seed: 11)
        try checkIndexTrees(store)
        var rng = SplitMix64(seed: 99)
        for round in 0..<6 {
            let cards = try c.fetch(Card.self)
            for card in cards where rng.next() % 4 == 0 {
                switch rng.next() % 4 {
                case 0: card.stage = Self.stages[Int(rng.next() % 4)]
                case 1: card.priority = Int(rng.next() % 3)
                case 2: card.board = rng.next() % 5 == 0 ? nil : boards[Int(rng.next() % 4)]
                default: try c.delete(card)
                }
            }
            let new = Card()
            new.title = "round \(round)"
            new.stage = "todo"
            try c.insert(new)
            new.board = boards[round % 4]
            try c.save()
            try checkIndexTrees(store)
            try checkAgainstOracle(c, try QueryPredicate(format: "stage == 'todo' AND priority == 0"))
            try checkAgainstOracle(c, try QueryPredicate(format: "board == %@", boards[round % 4]), sort: [SortKey("due")], limit: 3)
        }
        // Deleting a board cascades to its cards; their entries go with them.
        try c.delete(boards[0])
        try c.save()
        try checkIndexTrees(store)
        #expect(try store.verify().isEmpty)
    }

    /// Two new cards with one title, on one board (or none).
    func insertTwins(_ title: String, on board: Board?, _ c: Context) throws -> (Card, Card) {
        let a = Card(), b = Card()
        for card in [a, b] {
            card.title = title
            try c.insert(card)
            card.board = board
        }
        return (a, b)
    }

    @Test func aUniquenessConstraintRefusesADuplicateCombinationAndChangesNothing() throws {
        let (store, c, boards) = try Self.makeStore(count: 20)
        let taken = try #require(try c.fetch(FetchRequest<Card>(predicate: try QueryPredicate(format: "board != nil"), fetchLimit: 1)).first)
        let board = try #require(taken.board)
        let before = try c.count(for: FetchRequest<Card>())

        // The same title on the same board: refused, naming the constraint and both objects.
        let dup = Card()
        dup.title = taken.title
        try c.insert(dup)
        dup.board = board
        let error = #expect(throws: DocStoreError.self) { try c.save() }
        #expect(error?.code == .uniqueConstraint)
        #expect(error?.message.contains("Card(board, title) must be unique together") == true, "\(String(describing: error))")
        #expect(error?.property == "board, title")
        #expect(try Context(store: store).count(for: FetchRequest<Card>()) == before)
        try checkIndexTrees(store)

        // The same title on another board, or with no board (nil never conflicts), is fine.
        dup.board = boards.first { $0 !== board }
        try c.save()
        _ = try insertTwins("loose", on: nil, c)
        try c.save()

        // Two new objects with one combination in a single save: refused before anything is written.
        let (_, b) = try insertTwins("twin", on: boards[3], c)
        let twin = #expect(throws: DocStoreError.self) { try c.save() }
        #expect(twin?.code == .uniqueConstraint && twin?.message.contains("given to both") == true, "\(String(describing: twin))")
        b.title = "twin 2"
        try c.save()

        // Moving a card frees its old combination for another card in the same save.
        taken.title = "renamed"
        let heir = Card()
        heir.title = dup.title
        try c.insert(heir)
        heir.board = board
        try c.save()
        try checkIndexTrees(store)
        #expect(try store.verify().isEmpty)
    }
}
