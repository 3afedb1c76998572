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
        if s.ascending && s.indexed {
            Issue.record("an ascending list keeps a set — \(context())")
        }
    }

    /// What `load(stored:)` makes the members: the stored ones not removed here, then the
    /// additions the store lacks, in key order.
    static func loaded(_ stored: [UInt64], added: Set<UInt64>, removed: Set<UInt64>) -> [UInt64] {
        let removedHere = removed.intersection(stored)
        let list = stored.filter { !removedHere.contains($0) }
        return list + added.subtracting(list).sorted()
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
        var bisected = 0, copies = 0
        var state = ToManyState()
        state.load(stored: [])
        // The members the state should have: changed by each operation as its contract says.
        var shadow: [UInt64]? = []
        var crossings = 0
        for round in 0..<200 {
            let logged = pick(3) == 0
            let growing = pick(2) == 0
            let before = Self.model(state)
            if logged { state.changeLog = [] }
            for step in 0..<Int(pick(12) + 1) {
                let place = "seed \(seed), round \(round), step \(step)"
                let wasIndexed = (state.members?.count ?? 0) > ToManyState.indexedAbove
                let key = newKey(growing: growing)
                let old = state.members.flatMap { $0.isEmpty ? nil : $0[Int(pick(UInt64($0.count)))] } ?? key
                switch pick(11) {
                case 0...3:
                    state.add(key)
                    if shadow != nil, !(shadow ?? []).contains(key) { shadow?.append(key) }
                    #expect(state.isMember(key), "added \(key) is not a member: \(place)")
                case 4...6:
                    let gone = pick(3) == 0 ? key : old
                    state.remove(gone)
                    shadow?.removeAll { $0 == gone }
                    #expect(!state.isMember(gone), "removed \(gone) is still a member: \(place)")
                case 7:
                    let order = Array(Set((0..<pick(16)).map { _ in pick(24) }))
                    let given = pick(2) == 0 ? order.sorted() : order   // a reorder, ascending or not
                    state.setOrder(given)
                    shadow = given
                case 8:
                    let stored = Array(Set((0..<pick(16)).map { _ in pick(24) }))
                    switch pick(3) {
                    case 0:
                        shadow = Self.loaded(stored, added: Set(state.added), removed: Set(state.removed))
                        state.load(stored: stored)
                    case 1:
                        shadow = Self.loaded(stored.sorted(), added: Set(state.added), removed: Set(state.removed))
                        state.load(stored: stored.sorted())   // the store's order: by key
                    default:
                        state.rebase()
                        shadow = nil
                    }
                case 9:
                    // A copy (an undo snapshot's) answers as the state did; go on with it.
                    if !logged {
                        state = state.copy()
                        copies += 1
                    }
                default:
                    // Another context's deletes arrive between saves, never inside a delete's
                    // logged run (the journal is not told of them).
                    if !logged {
                        let gone = Set((0..<pick(6)).map { _ in pick(24) })
                        state.forgetMembers(gone)
                        shadow?.removeAll { gone.contains($0) }
                    }
                }
                #expect(state.members == shadow, "members \(String(describing: state.members)), expected \(String(describing: shadow)): \(place)")
                if wasIndexed != ((state.members?.count ?? 0) > ToManyState.indexedAbove) { crossings += 1 }
                if state.ascending && (state.members?.count ?? 0) > ToManyState.indexedAbove { bisected += 1 }
                Self.check(state, keysBelow: nextKey + 2, place)
                if state.members == nil {
                    shadow = Self.loaded([], added: Set(state.added), removed: Set(state.removed))
                    state.load(stored: [])
                }
            }
            if logged && pick(2) == 0 {
                state.undoLoggedChanges()
                #expect(Self.model(state) == before, "seed \(seed), round \(round): undo did not restore the state")
                shadow = state.members
                Self.check(state, keysBelow: nextKey + 2, "seed \(seed), round \(round), after undo")
            } else {
                state.changeLog = nil
            }
        }
        #expect(copies >= 20, "seed \(seed): the state was copied only \(copies) times")
        #expect(crossings >= 20, "seed \(seed): the state crossed the threshold only \(crossings) times")
        #expect(bisected >= 20, "seed \(seed): a large ascending list was searched only \(bisected) times")
    }

    /// An object's states by slot: set in any order, read by slot, iterated in slot order,
    /// replaced, removed, and copied as copies.
    @Test func statesBySlot() {
        var states = ToManyStates(capacity: 2)
        let (a, b, c, d) = (ToManyState(), ToManyState(), ToManyState(), ToManyState())
        states[5] = a
        states[2] = b
        states[7] = c
        #expect(states[5] === a && states[2] === b && states[7] === c && states[3] == nil && states[9] == nil)
        #expect(states.map(\.slot) == [2, 5, 7])
        states[5] = nil
        #expect(states[5] == nil && states.map(\.slot) == [2, 7])
        states[2] = d
        states[0] = a
        #expect(states[2] === d && states.map(\.slot) == [0, 2, 7] && states.map(\.state) .elementsEqual([a, d, c], by: ===))
        states[4] = nil   // removing what is not there changes nothing
        #expect(states.map(\.slot) == [0, 2, 7])
        let copied = states.copied()
        #expect(copied.map(\.slot) == [0, 2, 7])
        #expect(zip(copied, states).allSatisfy { $0.state !== $1.state })
    }
}
