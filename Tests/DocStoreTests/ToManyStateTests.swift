// ToManyState keeps a set beside its loaded members only past ToManyState.indexedAbove and out of
// ascending order; a smaller list is searched in place, an ascending one by bisection. A
// fixed-seed property test drives states across that threshold in both directions with every
// operation (add, remove, new order, load, rebase, another context's deletes), with keys drawn at
// random or growing (as new objects' keys do), logging some runs and undoing them, and checks
// against a plain list after each step: membership answers as the list does, no member appears
// twice, a list said to be ascending is, a set kept beside the list holds exactly its members,
// and an undone run restores the state it started from exactly.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreCore

@Suite struct ToManyStateTests {
    struct Model: Equatable {
        var members: [UInt64]?
        var added: Set<UInt64>
        var removed: Set<UInt64>
        var orderChanged: Bool
    }

    static func model(_ s: ToManyState) -> Model {
        Model(members: s.members, added: Set(s.added), removed: Set(s.removed), orderChanged: s.orderChanged)
    }

    static func check(_ s: ToManyState, keysBelow limit: UInt64, _ context: @autoclosure () -> String) {
        for key in UInt64(0)..<limit {
            let expected = s.members?.contains(key) ?? false
            if s.isMember(key) != expected {
                Issue.record("isMember(\(key)) is \(!expected) with members \(String(describing: s.members)) — \(context())")
                return
            }
        }
        if let members = s.members, Set(members).count != members.count {
            Issue.record("a member appears twice: \(members) — \(context())")
        }
        if let members = s.members, s.ascending, members != members.sorted() {
            Issue.record("members \(members) are said to be ascending — \(context())")
        }
        if s.indexed, Set(s.memberSet) != Set(s.members ?? []) {
            Issue.record("the set \(s.memberSet) is not the members \(String(describing: s.members)) — \(context())")
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6, 7, 8])
    func membershipHoldsAcrossTheIndexThreshold(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        func pick(_ n: UInt64) -> UInt64 { rng.next() % n }
        // Half the rounds add growing keys, as a folder gets new notes; the rest random ones.
        var nextKey: UInt64 = 24
        func newKey(growing: Bool) -> UInt64 {
            guard growing else { return pick(24) }
            nextKey += pick(3) + 1
            return nextKey
        }
        var bisected = 0
        let state = ToManyState()
        state.load(stored: [])
        var crossings = 0
        for round in 0..<200 {
            let logged = pick(3) == 0
            let growing = pick(2) == 0
            let before = Self.model(state)
            if logged { state.changeLog = [] }
            for step in 0..<Int(pick(12) + 1) {
                let wasIndexed = (state.members?.count ?? 0) > ToManyState.indexedAbove
                let key = newKey(growing: growing)
                let old = state.members.flatMap { $0.isEmpty ? nil : $0[Int(pick(UInt64($0.count)))] } ?? key
                switch pick(10) {
                case 0...3: state.add(key)
                case 4...6: state.remove(pick(3) == 0 ? key : old)
                case 7: state.setOrder(Array(Set((0..<pick(16)).map { _ in pick(24) })).sorted())
                case 8:
                    let stored = Array(Set((0..<pick(16)).map { _ in pick(24) }))
                    switch pick(3) {
                    case 0: state.load(stored: stored)
                    case 1: state.load(stored: stored.sorted())   // the store's order: by key
                    default: state.rebase()
                    }
                default:
                    // Another context's deletes arrive between saves, never inside a delete's
                    // logged run (the journal is not told of them).
                    if !logged { state.forgetMembers(Set((0..<pick(6)).map { _ in pick(24) })) }
                }
                if wasIndexed != ((state.members?.count ?? 0) > ToManyState.indexedAbove) { crossings += 1 }
                if state.ascending && (state.members?.count ?? 0) > ToManyState.indexedAbove { bisected += 1 }
                Self.check(state, keysBelow: nextKey + 2, "seed \(seed), round \(round), step \(step)")
                if state.members == nil { state.load(stored: []) }
            }
            if logged && pick(2) == 0 {
                state.undoLoggedChanges()
                #expect(Self.model(state) == before, "seed \(seed), round \(round): undo did not restore the state")
                Self.check(state, keysBelow: nextKey + 2, "seed \(seed), round \(round), after undo")
            } else {
                state.changeLog = nil
            }
        }
        #expect(crossings >= 20, "seed \(seed): the state crossed the threshold only \(crossings) times")
        #expect(bisected >= 20, "seed \(seed): a large ascending list was searched only \(bisected) times")
    }
}
