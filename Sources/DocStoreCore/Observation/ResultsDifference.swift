// ResultsSnapshot and ResultsDifference: a results controller's state and the change between two
// states, in the terms a table or collection view takes (NSFetchedResultsController's
// didChange(at:for:newIndexPath:) and section changes).
//
//   RD1  applying a difference to the snapshot it was computed from gives the new snapshot:
//        remove the rows at the old index paths of deletes and moves (each section from the
//        end), remove deleted sections, insert new sections whole, then insert the rows at the
//        new index paths of inserts and moves (in ascending order). `applying(_:)` does exactly
//        this, and the tests check it on every step of random workloads.
//   RD2  rows inside a deleted or inserted section are not listed: the section change covers
//        them. A section whose place among the kept sections changed is deleted and inserted.
//   RD3  among the rows that stay in their section, the longest run already in order stays
//        put; the others are moves. An update is a row that stays put and whose object changed.

import Foundation

/// The sections and rows of a results controller, by object ID.
public struct ResultsSnapshot: Sendable, Equatable {
    /// A section: its name (the section key path's value) and its objects in order.
    public struct Section: Sendable, Equatable {
        public var name: String
        public var objectIDs: [ObjectID]

        public init(name: String, objectIDs: [ObjectID]) {
            self.name = name
            self.objectIDs = objectIDs
        }
    }

    public var sections: [Section]

    public init(sections: [Section] = []) { self.sections = sections }

    /// Every object ID, section after section.
    public var objectIDs: [ObjectID] { sections.flatMap(\.objectIDs) }

    /// The snapshot `difference` leads to from this one (RD1).
    public func applying(_ difference: ResultsDifference) -> ResultsSnapshot {
        var sections = self.sections
        // Rows out, at their old index paths, from the end of each section.
        let removals = difference.changes.compactMap { c -> IndexPath? in
            c.type == .delete || c.type == .move ? c.indexPath : nil
        }.sorted { $0 > $1 }
        for path in removals where path.section < sections.count && path.item < sections[path.section].objectIDs.count {
            sections[path.section].objectIDs.remove(at: path.item)
        }
        for change in difference.sectionChanges.filter({ $0.type == .delete }).sorted(by: { $0.index > $1.index })
        where change.index < sections.count {
            sections.remove(at: change.index)
        }
        for change in difference.sectionChanges.filter({ $0.type == .insert }).sorted(by: { $0.index < $1.index }) {
            sections.insert(Section(name: change.name, objectIDs: change.objectIDs), at: Swift.min(change.index, sections.count))
        }
        let insertions = difference.changes.compactMap { c -> (IndexPath, ObjectID)? in
            guard c.type == .insert || c.type == .move, let path = c.newIndexPath else { return nil }
            return (path, c.objectID)
        }.sorted { $0.0 < $1.0 }
        for (path, id) in insertions where path.section < sections.count {
            sections[path.section].objectIDs.insert(id, at: Swift.min(path.item, sections[path.section].objectIDs.count))
        }
        return ResultsSnapshot(sections: sections)
    }
}

/// How a results controller's content changed.
public struct ResultsDifference: Sendable, Equatable, CustomStringConvertible {
    /// A section that appeared or went away.
    public struct SectionChange: Sendable, Equatable {
        public enum ChangeType: Sendable, Equatable { case insert, delete }
        public var type: ChangeType
        /// The old index of a deleted section, the new index of an inserted one.
        public var index: Int
        public var name: String
        /// An inserted section's objects.
        public var objectIDs: [ObjectID]
    }

    /// A row that appeared, went away, moved or changed (RD2, RD3).
    public struct Change: Sendable, Equatable {
        public enum ChangeType: Sendable, Equatable { case insert, delete, move, update }
        public var type: ChangeType
        public var objectID: ObjectID
        /// Where it was (deletes, moves, updates).
        public var indexPath: IndexPath?
        /// Where it is now (inserts, moves, updates).
        public var newIndexPath: IndexPath?
    }

    public var sectionChanges: [SectionChange] = []
    public var changes: [Change] = []

    public init() {}

    public var isEmpty: Bool { sectionChanges.isEmpty && changes.isEmpty }

    public var description: String {
        var parts = sectionChanges.map { "section \($0.type) \($0.index) \"\($0.name)\"" }
        parts += changes.map { c in
            "\(c.type) \(c.objectID.entityName)/\(c.objectID.number)"
                + (c.indexPath.map { " from \($0.section).\($0.item)" } ?? "")
                + (c.newIndexPath.map { " to \($0.section).\($0.item)" } ?? "")
        }
        return "ResultsDifference(" + parts.joined(separator: "; ") + ")"
    }
}

/// The difference between two states of sections of primary keys (RD1–RD3).
struct ResultsDiffer {
    typealias Sections = [(name: String, keys: [UInt64])]

    let id: (UInt64) -> ObjectID

    func difference(from old: Sections, to new: Sections, updated: Set<UInt64>) -> ResultsDifference {
        // One section before and after (a plain list): rows alike at both ends stay put; only
        // the rows between are compared in full — a change to a long list costs what it touched.
        if old.count == 1, new.count == 1, old[0].name == new[0].name {
            let a = old[0].keys, b = new[0].keys
            var prefix = 0
            while prefix < a.count && prefix < b.count && a[prefix] == b[prefix] { prefix += 1 }
            var suffix = 0
            while suffix < a.count - prefix && suffix < b.count - prefix && a[a.count - 1 - suffix] == b[b.count - 1 - suffix] { suffix += 1 }
            if prefix + suffix > 0 {
                var out = difference(from: [(old[0].name, Array(a[prefix..<(a.count - suffix)]))],
                                     to: [(new[0].name, Array(b[prefix..<(b.count - suffix)]))], updated: updated)
                for i in out.changes.indices {
                    if let p = out.changes[i].indexPath { out.changes[i].indexPath = IndexPath(item: p.item + prefix, section: 0) }
                    if let p = out.changes[i].newIndexPath { out.changes[i].newIndexPath = IndexPath(item: p.item + prefix, section: 0) }
                }
                if !updated.isEmpty {
                    for i in Array(0..<prefix) + Array((a.count - suffix)..<a.count) where updated.contains(a[i]) {
                        let to = i < prefix ? i : i - a.count + b.count
                        out.changes.append(.init(type: .update, objectID: id(a[i]), indexPath: IndexPath(item: i, section: 0),
                                                 newIndexPath: IndexPath(item: to, section: 0)))
                    }
                }
                // A middle that empties or fills its section is not a section change here.
                out.sectionChanges = []
                return out
            }
        }
        var out = ResultsDifference()
        // Sections kept: in both, in the same order among themselves (RD2).
        var newSectionIndex: [String: Int] = [:]
        for (i, s) in new.enumerated() where newSectionIndex[s.name] == nil { newSectionIndex[s.name] = i }
        let common = old.indices.compactMap { i in newSectionIndex[old[i].name].map { (old: i, new: $0) } }
        let kept = Self.longestIncreasing(common.map(\.new)).map { common[$0] }
        var keptOldToNew: [Int: Int] = [:]
        for pair in kept { keptOldToNew[pair.old] = pair.new }
        let keptNew = Set(kept.map(\.new))
        for i in old.indices where keptOldToNew[i] == nil {
            out.sectionChanges.append(.init(type: .delete, index: i, name: old[i].name, objectIDs: []))
        }
        for i in new.indices where !keptNew.contains(i) {
            out.sectionChanges.append(.init(type: .insert, index: i, name: new[i].name, objectIDs: new[i].keys.map(id)))
        }

        var newPlace: [UInt64: (section: Int, item: Int)] = [:]
        newPlace.reserveCapacity(new.reduce(0) { $0 + $1.keys.count })
        for (s, section) in new.enumerated() { for (i, key) in section.keys.enumerated() { newPlace[key] = (s, i) } }
        var oldPlace: [UInt64: (section: Int, item: Int)] = [:]
        oldPlace.reserveCapacity(old.reduce(0) { $0 + $1.keys.count })
        for (s, section) in old.enumerated() { for (i, key) in section.keys.enumerated() { oldPlace[key] = (s, i) } }

        for (s, section) in old.enumerated() {
            let target = keptOldToNew[s]
            var stayers: [(item: Int, newItem: Int, key: UInt64)] = []
            for (i, key) in section.keys.enumerated() {
                let now = newPlace[key]
                let from = IndexPath(item: i, section: s)
                guard let target else {
                    // The section goes: its rows go with it; one still shown elsewhere is inserted there.
                    if let now, keptNew.contains(now.section) {
                        out.changes.append(.init(type: .insert, objectID: id(key), indexPath: nil, newIndexPath: IndexPath(item: now.item, section: now.section)))
                    }
                    continue
                }
                guard let now else {
                    out.changes.append(.init(type: .delete, objectID: id(key), indexPath: from, newIndexPath: nil))
                    continue
                }
                if !keptNew.contains(now.section) {
                    out.changes.append(.init(type: .delete, objectID: id(key), indexPath: from, newIndexPath: nil))
                } else if now.section != target {
                    out.changes.append(.init(type: .move, objectID: id(key), indexPath: from, newIndexPath: IndexPath(item: now.item, section: now.section)))
                } else {
                    stayers.append((i, now.item, key))
                }
            }
            guard let target else { continue }
            let inOrder = Self.keptInPlace(stayers.map { ($0.newItem, updated.contains($0.key)) })
            for (n, stayer) in stayers.enumerated() {
                let from = IndexPath(item: stayer.item, section: s), to = IndexPath(item: stayer.newItem, section: target)
                if !inOrder.contains(n) {
                    out.changes.append(.init(type: .move, objectID: id(stayer.key), indexPath: from, newIndexPath: to))
                } else if updated.contains(stayer.key) {
                    out.changes.append(.init(type: .update, objectID: id(stayer.key), indexPath: from, newIndexPath: to))
                }
            }
        }
        // Rows new to a kept section.
        for (s, section) in new.enumerated() where keptNew.contains(s) {
            // A row shown before is a stayer or a move, or was listed as an insert when its old
            // section went.
            for (i, key) in section.keys.enumerated() where oldPlace[key] == nil {
                out.changes.append(.init(type: .insert, objectID: id(key), indexPath: nil, newIndexPath: IndexPath(item: i, section: s)))
            }
        }
        return out
    }

    /// Which rows stay put (RD3): a longest run in order of the rows whose objects did not
    /// change, then each changed row that still fits between its kept neighbours — so an edited
    /// object that moved is the one reported as moving.
    static func keptInPlace(_ rows: [(newItem: Int, changed: Bool)]) -> Set<Int> {
        let steady = rows.indices.filter { !rows[$0].changed }
        var kept = Set(longestIncreasing(steady.map { rows[$0].newItem }).map { steady[$0] })
        var nextKept = [Int](repeating: Int.max, count: rows.count + 1)
        for i in rows.indices.reversed() { nextKept[i] = kept.contains(i) ? rows[i].newItem : nextKept[i + 1] }
        var last = Int.min
        for i in rows.indices {
            if kept.contains(i) {
                last = rows[i].newItem
            } else if rows[i].changed, rows[i].newItem > last, rows[i].newItem < nextKept[i + 1] {
                kept.insert(i)
                last = rows[i].newItem
            }
        }
        return kept
    }

    /// The indices of a longest strictly increasing subsequence of `values` (patience sorting).
    static func longestIncreasing(_ values: [Int]) -> [Int] {
        guard !values.isEmpty else { return [] }
        var tails: [Int] = []                 // index into values of the smallest tail per length
        var previous = [Int](repeating: -1, count: values.count)
        for (i, v) in values.enumerated() {
            var lo = 0, hi = tails.count
            while lo < hi {
                let mid = (lo + hi) / 2
                if values[tails[mid]] < v { lo = mid + 1 } else { hi = mid }
            }
            if lo > 0 { previous[i] = tails[lo - 1] }
            if lo == tails.count { tails.append(i) } else { tails[lo] = i }
        }
        var out: [Int] = []
        var k = tails.last ?? -1
        while k >= 0 {
            out.append(k)
            k = previous[k]
        }
        return out.reversed()
    }
}
