// QueryPlan: how a fetch finds its candidates — and `explain`, which says so in words.
//
// A plan names a source of candidate primary keys; every candidate is then tested against the
// predicate (QueryEvaluator) — a stored one from an index only against the conjuncts the
// index's ranges do not answer exactly (`storedPredicate`) — so a source may return more than
// matches but never fewer:
//   scan       every record of the entity (and its sub-entities);
//   index      entries of an attribute index within ranges (equality, range, BEGINSWITH, IN);
//   compound   entries of a compound index whose leading elements are fixed by equalities
//              (and whose next element may be bounded by a range or BEGINSWITH);
//   related    objects linked to the candidates of a plan on a relationship's destination
//              (`folder == %@`, `ANY tags == %@`, `folder.name == "Inbox"`): the inverse
//              relationship's links (a prefix scan per target) or, for a to-one inverse, the
//              target's own record — never a join of whole tables;
//   keys       the given objects (`SELF == %@`, `SELF IN %@`);
//   union      the union of several sources (an OR whose every branch has one);
//   empty      nothing (FALSEPREDICATE).
// With pending changes included, the context's changed objects of the entity are added as
// candidates too, and candidates are tested with their unsaved values.
//
// An index source whose attribute is the first sort key — for a compound index, the element
// after the fixed ones — is walked in sort order, and the walk stops once the window
// (offset + limit) is full and the key value changes: O(limit) entries.

import Foundation
internal import DocStoreEngine

/// A key range over an index's encoded values: the entries whose value part lies between the
/// bounds (bounds are encoded values; a prefix bound matches every value that starts with it).
struct IndexRange: Hashable {
    var lower: [UInt8]?
    var lowerInclusive = true
    var upper: [UInt8]?
    var upperInclusive = true
    /// What it means, for explain (`text`).
    var meaning: RangeText
    /// An equality: every entry in it holds the value whose encoding is `lower` (or none does),
    /// so unsaved objects can be looked up by that encoding (ChangedObjects).
    var isPoint = false

    /// What it means, in words.
    var text: String { meaning.text }

    /// Whether an entry key is past the upper bound.
    func isAbove(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let upper else { return false }
        let c = compareBytes(key, upper)
        return upperInclusive ? (c > 0 && !key.starts(with: upper)) : c >= 0
    }

    /// Whether an entry key is below the lower bound.
    func isBelow(_ key: UnsafeRawBufferPointer) -> Bool {
        guard let lower else { return false }
        if !lowerInclusive && key.starts(with: lower) { return true }
        return compareBytes(key, lower) < 0
    }
}

/// memcmp order of two keys: -1, 0 or 1 (a prefix first).
func compareBytes(_ a: [UInt8], _ b: [UInt8]) -> Int {
    a.withUnsafeBytes { x in compareBytes(x, b) }
}

/// The same, for a key in place (an index entry in its page) against an array.
func compareBytes(_ a: UnsafeRawBufferPointer, _ b: [UInt8]) -> Int {
    b.withUnsafeBytes { y in
        let n = min(a.count, y.count)
        if n > 0, let pa = a.baseAddress, let pb = y.baseAddress {
            // Index keys mostly differ early: bytes first, memcmp only past a long common start.
            var i = 0
            while i < n && i < 16 {
                let (x, z) = (pa.load(fromByteOffset: i, as: UInt8.self), pb.load(fromByteOffset: i, as: UInt8.self))
                if x != z { return x < z ? -1 : 1 }
                i += 1
            }
            if n > i {
                let c = memcmp(pa + i, pb + i, n - i)
                if c != 0 { return c < 0 ? -1 : 1 }
            }
        }
        return a.count < y.count ? -1 : a.count == y.count ? 0 : 1
    }
}

/// How to read the entries of an index a source names: its tree, where an entry keeps the
/// object's primary key, and how much of an entry key is the value a sort orders by.
struct IndexReader {
    let tree: String
    /// The primary key is the entry's value (unique and compound indexes), not its key's tail.
    let primaryKeyInValue: Bool
    /// Compound indexes: the number of leading components that make an entry's sort value.
    let sortComponents: Int?
    let propertyName: String

    /// A walk in ascending order meets the entries of one sort value in primary-key order: only
    /// the primary key (or nothing) follows the sort value in an entry key.
    let ascendingTiesInKeyOrder: Bool
    /// Two entries can have one sort value (a unique single-property index holds each value once).
    let mayHaveTies: Bool

    init(_ p: PropertyInfo) {
        tree = p.indexTree ?? ""
        primaryKeyInValue = p.isUnique
        sortComponents = nil
        propertyName = p.name
        ascendingTiesInKeyOrder = true
        mayHaveTies = !p.isUnique
    }

    init(_ index: CompoundIndex, fixed: Int) {
        tree = index.tree
        primaryKeyInValue = true
        sortComponents = min(fixed + 1, index.elements.count)
        propertyName = index.propertyList
        ascendingTiesInKeyOrder = fixed + 1 >= index.elements.count
        mayHaveTies = true
    }

    /// The part of an entry key a sort compares: the value without the primary key a
    /// non-unique entry ends with; for a compound index, its fixed elements and the next one.
    func sortValue(_ entryKey: [UInt8]) throws(DocStoreError) -> [UInt8] {
        let n: Result<Int, DocStoreError> = entryKey.withUnsafeBytes { raw in
            do throws(DocStoreError) { return .success(try sortValueLength(raw)) } catch { return .failure(error) }
        }
        return Array(entryKey.prefix(try n.get()))
    }

    /// The length of an entry key's sort value (see `sortValue`), read in place.
    func sortValueLength(_ entryKey: UnsafeRawBufferPointer) throws(DocStoreError) -> Int {
        guard let n = sortComponents else { return primaryKeyInValue ? entryKey.count : max(0, entryKey.count - 8) }
        do {
            return try KeyEncoding.prefixLength(entryKey, components: n)
        } catch {
            throw DocStoreError(.corrupt, "an entry of index \(tree) is not a valid key (\(error))", property: propertyName)
        }
    }
}

extension QuerySource {
    /// The index the source reads, with its ranges, when it reads one directly.
    var indexRead: (reader: IndexReader, ranges: [IndexRange])? {
        switch self {
        case .index(let p, let ranges): (IndexReader(p), ranges)
        case .compound(let index, let fixed, let ranges): (IndexReader(index, fixed: fixed), ranges)
        default: nil
        }
    }
}

indirect enum QuerySource {
    case scan
    case index(PropertyInfo, [IndexRange])
    /// A compound index: its first `fixed` elements are fixed by the ranges' shared prefix.
    case compound(CompoundIndex, fixed: Int, [IndexRange])
    /// Objects that `inverse` (a property of the destination) links to, for each candidate of
    /// `targets` (a source on the destination entity).
    case related(via: PropertyInfo, inverse: PropertyInfo, targets: QuerySource, destination: EntityInfo, targetFilter: QueryPredicate?)
    case keys([UInt64])
    case union([QuerySource])
    case empty
}

/// A class: a fetch passes its plan through many calls, and a struct of these fields was
/// retained and released field by field each time (a plan kept by PlanCache is shared as is).
final class QueryPlan {
    let entity: EntityInfo
    /// The entity IDs whose objects the fetch returns.
    let kinds: Set<UInt32>
    let source: QuerySource
    let predicate: QueryPredicate?
    let sorts: [(expression: QueryExpression, key: SortKey)]
    /// The index source is walked in the order of the first sort key (ascending or not).
    let indexOrder: Bool?
    /// Every candidate is a match: the index answers the predicate alone (count without reads).
    let sourceIsExact: Bool
    /// What each stored candidate of the source must still pass: the predicate without the
    /// conjuncts its index ranges answer exactly (`createdAt > d` of `isRead == NO AND
    /// createdAt > d` read from the createdAt index); nil when nothing is left. Unsaved objects
    /// are not candidates of the source: they are tested against the whole predicate.
    let storedPredicate: QueryPredicate?
    /// The properties of the fetched object the predicate and the sort read (by name); nil when
    /// that cannot be told. Candidates decode only these; matches are decoded whole. Each name
    /// once.
    let rootProperties: [String]?
    /// How the source was chosen, when another fetch of the same shape can be planned by
    /// following it with its own constants (PlanCache.swift); nil otherwise.
    let recipe: PlanRecipe?

    init(entity: EntityInfo, kinds: Set<UInt32>, source: QuerySource, predicate: QueryPredicate?,
         sorts: [(expression: QueryExpression, key: SortKey)], indexOrder: Bool?, sourceIsExact: Bool,
         storedPredicate: QueryPredicate?, rootProperties: [String]?, recipe: PlanRecipe? = nil) {
        self.entity = entity
        self.kinds = kinds
        self.source = source
        self.predicate = predicate
        self.sorts = sorts
        self.indexOrder = indexOrder
        self.sourceIsExact = sourceIsExact
        self.storedPredicate = storedPredicate
        self.rootProperties = rootProperties
        self.recipe = recipe
    }

    /// The plan in words, one step per line.
    func explanation(limit: Int, offset: Int, pendingCandidates: Int?) -> String {
        var lines = ["fetch \(entity.name)\(kinds.count > 1 ? " and its sub-entities" : "")"]
        lines.append("  source: " + Self.describe(source, entity: entity))
        if let predicate {
            let test: String
            if case .empty = source {
                test = "no candidate to test"
            } else if sourceIsExact {
                test = "answered by the index"
            } else {
                test = storedPredicate.map { $0 == predicate ? "tested on each candidate" : "tested on each candidate: \($0); the index answers the rest" }
                    ?? "answered by the index"
            }
            lines.append("  filter: \(predicate) (\(test))")
        }
        if !sorts.isEmpty {
            let keys = sorts.map(\.key.description).joined(separator: ", ")
            if let ascending = indexOrder {
                lines.append("  order: \(keys) — by the index's order (\(ascending ? "forward" : "backward")), stopping once \(offset + limit) match\(offset + limit == 1 ? "" : "es") and their ties are read")
            } else {
                lines.append("  order: \(keys) — sorted in memory")
            }
        }
        if offset > 0 || limit > 0 { lines.append("  window: offset \(offset), limit \(limit == 0 ? "none" : "\(limit)")") }
        if let pendingCandidates, pendingCandidates > 0 {
            lines.append("  pending changes: \(pendingCandidates) unsaved object\(pendingCandidates == 1 ? "" : "s") of the entity tested with their unsaved values; deleted ones left out")
        }
        return lines.joined(separator: "\n")
    }

    static func describe(_ source: QuerySource, entity: EntityInfo) -> String {
        switch source {
        case .scan: "scan of every \(entity.name) record (\(entity.recordsTree))"
        case .index(let p, let ranges):
            "index \(p.indexTree ?? "?") on \(entity.name).\(p.name)\(p.isUnique ? " (unique)" : ""), \(ranges.map(\.text).joined(separator: " or "))"
        case .related(let via, let inverse, let targets, let destination, let filter):
            "objects whose \(via.name) reaches \(filter.map { "the \(destination.name) objects matching \($0)" } ?? "the given \(destination.name) objects") — through \(destination.name).\(inverse.name) (\(inverse.isToMany ? "links \(inverse.linkTree)" : "the \(destination.name) records")); \(destination.name) candidates from: \(describe(targets, entity: destination))"
        case .compound(let index, _, let ranges):
            "index \(index.tree) on \(index.text), \(ranges.map(\.text).joined(separator: " or "))"
        case .keys(let keys): "the \(keys.count) given object\(keys.count == 1 ? "" : "s")"
        case .union(let sources): "union of: " + sources.map { describe($0, entity: entity) }.joined(separator: "; ")
        case .empty: "nothing (the predicate is always false)"
        }
    }
}

/// What an index range means, for explain, put into words only when explain asks: a fetch plans
/// every time it runs, and describing its constants (a date's description) was a few per cent
/// of a lookup by date.
indirect enum RangeText: Hashable {
    case words(String)
    /// An operator and its value: `== 2024-01-01 …`.
    case comparison(String, QueryExpression)
    /// Parts that all hold: joined by "and".
    case all([RangeText])
    /// A key path before a part: `folder == …`.
    case path([String], RangeText)

    var text: String {
        switch self {
        case .words(let s): return s
        case .comparison(let op, let value): return "\(op) \(value)"
        case .all(let parts): return parts.map(\.text).joined(separator: " and ")
        case .path(let names, let part): return "\(names.joined(separator: ".")) \(part.text)"
        }
    }
}
