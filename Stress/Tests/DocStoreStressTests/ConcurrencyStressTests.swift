// The concurrency stress test of issue #5: several background contexts insert, edit, relate and
// delete overlapping objects while the main context fetches and a results controller tracks a
// list. At the end the store verifies, the graph is consistent, every context converges to the
// store's state after merging, and every conflict was either resolved by the worker's merge
// policy or reported to it and retried — none lost silently. CI also runs this suite under the
// thread sanitizer (scripts/test.sh). Fixed seeds; a failure prints its seed.

import DocStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import DocStore
@testable import DocStoreCore

@Model final class Board: ManagedObject {
    @Attribute(.unique) var name: String
    @Relationship(deleteRule: .cascade) var cards: [Card] = []
    init(name: String) { self.name = name }
}

@Model final class Card: ManagedObject {
    var title: String = ""
    var points: Int = 0
    @Relationship(inverse: \Board.cards) var board: Board?
    var labels: Set<Label> = []
    init(title: String, board: Board?) {
        self.title = title
        self.board = board
    }
}

@Model final class Label: ManagedObject {
    @Attribute(.unique) var name: String
    @Relationship(inverse: \Card.labels) var cards: Set<Card> = []
    init(name: String) { self.name = name }
}

/// What a worker met: conflicts its policy resolved, conflicts reported to it (then retried).
struct WorkerReport: Sendable {
    var saves = 0
    var reportedConflicts = 0
    var reportedUniqueClashes = 0
}

@Suite(.timeLimit(.minutes(5))) struct ConcurrencyStressTests {
    static let models: [ManagedObject.Type] = [Board.self, Card.self, Label.self]

    /// One worker's rounds: each picks a few random edits of shared objects and saves.
    static func work(_ context: Context, seed: UInt64, rounds: Int, strict: Bool) -> WorkerReport {
        var rng = SplitMix64(seed: seed)
        var report = WorkerReport()
        context.mergePolicy = strict ? .error : .mergeByPropertyObjectTrump
        for round in 0..<rounds {
            edit(context, &rng, label: "s\(seed) r\(round)")
            save(context, &report)
        }
        return report
    }

    /// A few random edits of shared objects: insert a card (on a board), add a point, delete a
    /// card, label a card (labels are unique by name), insert a board (unique by name).
    static func edit(_ context: Context, _ rng: inout SplitMix64, label: String) {
        do {
            let cards = try context.fetch(Card.self)
            let boards = try context.fetch(Board.self)
            for _ in 0..<(1 + Int(rng.next() % 3)) {
                switch rng.next() % 6 {
                case 0, 1:
                    let board = boards.isEmpty ? nil : boards[Int(rng.next() % UInt64(boards.count))]
                    if board?.isDeleted != true { try context.insert(Card(title: label, board: board)) }
                case 2 where !cards.isEmpty:
                    let card = cards[Int(rng.next() % UInt64(cards.count))]
                    if !card.isDeleted { card.points += 1 }
                case 3 where !cards.isEmpty:
                    let card = cards[Int(rng.next() % UInt64(cards.count))]
                    if !card.isDeleted { try context.delete(card) }
                case 4 where !cards.isEmpty:
                    let card = cards[Int(rng.next() % UInt64(cards.count))]
                    if !card.isDeleted { card.labels.insert(Label(name: "l\(rng.next() % 5)")) }
                default:
                    try context.insert(Board(name: "b\(rng.next() % 4)"))
                }
            }
        } catch {
            Issue.record("\(label): \(error)")
            context.rollback()
        }
    }

    /// Saves; a conflict the policy does not resolve is counted, the objects refreshed (keeping
    /// the edits) and the save tried again; a unique clash under `.error` drops the edits.
    static func save(_ context: Context, _ report: inout WorkerReport) {
        for _ in 0..<10 {
            let failure: DocStoreError
            do {
                try context.save()
                report.saves += 1
                return
            } catch {
                failure = error
            }
            if failure.code == .uniqueConstraint {
                report.reportedUniqueClashes += 1
                break
            }
            guard failure.code == .mergeConflict else {
                Issue.record("an unexpected save error: \(failure)")
                break
            }
            report.reportedConflicts += 1
            let gone = failure.conflicts.contains { $0.kind == .deletedInStore }
            if gone { break }
            for conflict in failure.conflicts {
                guard let object = try? context.object(with: conflict.objectID) else { continue }
                context.refresh(object, mergeChanges: true)
            }
        }
        context.rollback()
    }

    @Test(arguments: [0x57E5_5001, 0x57E5_5002] as [UInt64])
    func backgroundWritersAMainReaderAndAResultsControllerConverge(_ seed: UInt64) async throws {
        let store = try Store.inMemory(models: Self.models)
        let done = Flag()
        let workers = (0..<4).map { store.newBackgroundContext(name: "worker \($0)") }

        // The main context reads while the workers write, and a controller follows the cards.
        let reader = Task { @MainActor in try await Self.readWhileWriting(store, until: done, seed: seed) }

        let reports = try await withThrowingTaskGroup(of: WorkerReport.self) { group in
            for (w, worker) in workers.enumerated() {
                group.addTask {
                    // One round per perform: the main actor and the other workers run between.
                    var total = WorkerReport()
                    for round in 0..<100 {
                        let report = await worker.perform { context in
                            Self.work(context, seed: seed &+ UInt64(w * 1000 + round), rounds: 1, strict: w % 2 == 0)
                        }
                        total.saves += report.saves
                        total.reportedConflicts += report.reportedConflicts
                        total.reportedUniqueClashes += report.reportedUniqueClashes
                    }
                    return total
                }
            }
            var all: [WorkerReport] = []
            for try await report in group { all.append(report) }
            return all
        }
        done.value.store(true, ordering: .releasing)
        let (fetches, differences) = try await reader.value
        #expect(fetches > 0 && differences > 0, "seed \(seed): the reader did not run alongside")
        #expect(reports.reduce(0) { $0 + $1.saves } > 0)
        print("seed \(seed): \(reports.map(\.saves)) saves, \(reports.map(\.reportedConflicts)) conflicts reported, \(reports.map(\.reportedUniqueClashes)) unique clashes reported, \(fetches) main fetches, \(differences) differences")

        // The truth: a fresh context's view of the store.
        let truth = try Self.state(of: Context(store: store))
        #expect(try store.verify().isEmpty, "seed \(seed)")
        try Self.checkGraph(Context(store: store), seed: seed)
        // Every context, after merging, agrees with it.
        for worker in workers {
            let view = try await worker.perform { context in
                context.processPendingChanges()
                return try Self.state(of: context)
            }
            #expect(view == truth, "seed \(seed): a worker did not converge")
        }
        let (mainView, listed, fresh) = try await MainActor.run {
            let main = store.mainContext
            main.processPendingChanges()
            let controller = try FetchedResultsController(
                fetchRequest: FetchRequest<Card>(sortDescriptors: [SortKey("title"), SortKey("points")]), context: main)
            try controller.performFetch()
            return (try Self.state(of: main), controller.snapshot.objectIDs,
                    try Context(store: store).fetchIdentifiers(FetchRequest<Card>(sortDescriptors: [SortKey("title"), SortKey("points")])))
        }
        #expect(mainView == truth && listed == fresh, "seed \(seed): the main context did not converge")
    }

    /// The same edits on one thread, interleaved at random between edit and save phases of
    /// several contexts (the races of the threaded test, made reproducible): the graph must
    /// hold after every step.
    @Test(arguments: (1...12).map { UInt64($0) })
    func interleavedContextsKeepTheGraphWhole(_ seed: UInt64) throws {
        let store = try Store.inMemory(models: Self.models)
        var rng = SplitMix64(seed: seed)
        let contexts = (0..<4).map { i -> Context in
            let c = Context(store: store, name: "c\(i)")
            c.automaticallyMergesChangesFromParent = true
            c.mergePolicy = i % 2 == 0 ? .error : .mergeByPropertyObjectTrump
            return c
        }
        var reports = [WorkerReport](repeating: WorkerReport(), count: contexts.count)
        for step in 0..<300 {
            let i = Int(rng.next() % UInt64(contexts.count))
            if contexts[i].hasChanges && rng.next() % 2 == 0 {
                Self.save(contexts[i], &reports[i])
            } else {
                Self.edit(contexts[i], &rng, label: "c\(i) s\(step)")
            }
            let broken = try Self.graphProblems(Context(store: store))
            if !broken.isEmpty {
                Issue.record("seed \(seed) step \(step) (context c\(i)): \(broken.joined(separator: "; "))")
                return
            }
        }
        // Every context saves what it has left, then all agree with the store.
        for (i, c) in contexts.enumerated() { Self.save(c, &reports[i]) }
        let truth = try Self.state(of: Context(store: store))
        for (i, c) in contexts.enumerated() {
            c.processPendingChanges()
            #expect(try Self.state(of: c) == truth, "seed \(seed): context c\(i) did not converge")
        }
    }

    final class Flag: Sendable { let value = Atomic<Bool>(false) }

    /// What the controller reported, checked as it comes (main actor only).
    final class Follower {
        var differences = 0
        var previous: ResultsSnapshot
        init(_ start: ResultsSnapshot) { previous = start }
    }

    /// The main context fetching and a results controller following the cards, until `done`.
    @MainActor static func readWhileWriting(_ store: Store, until done: Flag, seed: UInt64) async throws -> (fetches: Int, differences: Int) {
        let main = store.mainContext
        let controller = try FetchedResultsController(
            fetchRequest: FetchRequest<Card>(sortDescriptors: [SortKey("title"), SortKey("points")]), context: main)
        try controller.performFetch()
        let follower = Follower(controller.snapshot)
        controller.onChange = { [unowned controller] difference in
            follower.differences += 1
            let next = follower.previous.applying(difference)
            #expect(next == controller.snapshot, "seed \(seed): a difference does not lead to the new state")
            follower.previous = next
        }
        var fetches = 0
        while !done.value.load(ordering: .acquiring) {
            _ = try main.fetch(FetchRequest<Card>(predicate: try QueryPredicate(format: "points > 0")))
            fetches += 1
            await Task.yield()
        }
        return (fetches, follower.differences)
    }

    /// Every card as "title|points|board|labels", sorted: what a context sees.
    static func state(of context: Context) throws -> [String] {
        try context.fetch(Card.self).map { card in
            "\(card.objectID?.number ?? 0)|\(card.title)|\(card.points)|\(card.board?.name ?? "-")|\(card.labels.map(\.name).sorted())"
        }.sorted()
    }

    /// What breaks the graph: halves of a relationship that disagree.
    static func graphProblems(_ context: Context) throws -> [String] {
        var out: [String] = []
        for card in try context.fetch(Card.self) {
            if let board = card.board, !board.cards.contains(card) { out.append("\(card) not in \(board).cards") }
            for label in card.labels where !label.cards.contains(card) { out.append("\(label) lacks \(card)") }
        }
        for board in try context.fetch(Board.self) {
            for card in board.cards where card.board !== board { out.append("\(card) in \(board).cards points at \(String(describing: card.board))") }
        }
        for label in try context.fetch(Label.self) {
            for card in label.cards where !card.labels.contains(label) { out.append("\(card) in \(label).cards lacks it") }
        }
        return out
    }

    /// Both halves of every relationship agree, and nothing points at a missing object.
    static func checkGraph(_ context: Context, seed: UInt64) throws {
        for card in try context.fetch(Card.self) {
            if let board = card.board, !board.cards.contains(card) {
                let ids = Set([card.objectID, board.objectID].compactMap { $0 })
                var trail: [String] = []
                for t in (try? context.store.history()) ?? [] {
                    for change in t.changes where ids.contains(change.changedObjectID) {
                        trail.append("\(t.token.value) \(t.contextName ?? "?"): \(change)")
                    }
                }
                Issue.record("seed \(seed): \(card) not in \(board)'s cards; history:\n\(trail.joined(separator: "\n"))")
            }
            for label in card.labels { #expect(label.cards.contains(card), "seed \(seed): label \(label.name) lacks \(card)") }
        }
        for board in try context.fetch(Board.self) {
            for card in board.cards { #expect(card.board === board, "seed \(seed): \(card) of \(board.name) points elsewhere") }
        }
        for label in try context.fetch(Label.self) {
            for card in label.cards { #expect(card.labels.contains(label), "seed \(seed): \(card) lacks label \(label.name)") }
        }
    }
}
