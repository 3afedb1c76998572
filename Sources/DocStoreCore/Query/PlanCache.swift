// PlanCache: a context's query plans kept per predicate shape, so a fetch that differs from an
// earlier one only in its constants — a find-or-create, a lookup by ID: one format string with
// new arguments each time — is neither checked against the schema nor planned again. Checking
// and choosing took a quarter of such a fetch.
//
// A predicate's shape is the predicate with each constant reduced to its kind (nil, an integer,
// a string, a date, …; a list to its length and its items' kinds). Two predicates of one shape
// name the same key paths, so checking one checks the other, and read the same properties.
//
// Invariants:
//   P1 An entry is kept only for a plan whose choice follows from the shape alone, given that
//      every bound it needs fits (PlanCache.followsFromShape): its source is an attribute index
//      whose ranges some conjuncts make, or involves no constant at all (a scan, the sort key's
//      index). Choices that read a constant's value — an object (`folder == %@`, `SELF IN %@`),
//      a compound index's leading elements, an OR's union — are planned every time. So is a
//      predicate with a conjunct that could use an index but whose constant does not fit it
//      (`count == 1.5` on an integer attribute): another constant might.
//   P2 A plan made from an entry is the plan the planner would make: its index ranges are made
//      from this fetch's constants by the planner's own `indexRanges`, their exactness decides
//      what is tested again as the planner decides it, and when a bound does not fit (an
//      integer out of the attribute's width) the fetch is planned in full instead. (An IN whose
//      items could collapse into one range, merging with another bound of its index, keeps
//      its predicate out of the cache: P1.)
//   P3 An entry is found by a hash of the shape and then compared in full (entity, sub-entities,
//      the kind of fetch limit the planner tells apart, the sort keys, the shape): a hash that collides only costs
//      a plan. At most `limit` entries; past that the cache starts again.

/// How a plan's source was chosen (QueryPlanner.choosePlan), when another fetch of the same
/// shape can be planned by following it (PlanCache, P1).
enum PlanRecipe {
    /// No conjunct chose the source: a scan, or the sort key's index — the same for any constants.
    case fixed
    /// The ranges of `p`'s index that the conjuncts at `conjuncts` admit (intersected in that
    /// order); empty `conjuncts`: the predicate is that one comparison.
    case index(PropertyInfo, conjuncts: [Int])
}

/// A context's plans by predicate shape (file comment).
struct PlanCache {
    /// A class, so a lookup retains one reference rather than copying a plan out.
    final class Entry {
        let entity: EntityInfo
        let includesSubentities: Bool
        let window: Int8
        let sorts: [SortKey]
        /// The predicate the plan was made for: its constants are not compared, only their kinds.
        let shape: QueryPredicate?
        let plan: QueryPlan
        let recipe: PlanRecipe

        init(entity: EntityInfo, includesSubentities: Bool, window: Int8, sorts: [SortKey], shape: QueryPredicate?,
             plan: QueryPlan, recipe: PlanRecipe) {
            self.entity = entity
            self.includesSubentities = includesSubentities
            self.window = window
            self.sorts = sorts
            self.shape = shape
            self.plan = plan
            self.recipe = recipe
        }
    }

    private var entries: [UInt64: Entry] = [:]
    static let limit = 64
    /// How many plans were made from an entry (for tests).
    private(set) var hits = 0

    /// The plan for a fetch like one planned before, made with this fetch's constants; nil when
    /// no entry fits or its bounds do not (P2).
    mutating func plan(entity: EntityInfo, includesSubentities: Bool, predicate: QueryPredicate?, sorts: [SortKey], limit: Int) -> QueryPlan? {
        let window = Self.window(limit)
        guard let entry = entries[Self.key(entity, includesSubentities, window, predicate)],
              entry.entity === entity, entry.includesSubentities == includesSubentities, entry.window == window,
              entry.sorts == sorts, PredicateShape.same(entry.shape, predicate),
              let plan = Self.follow(entry, predicate) else { return nil }
        hits += 1
        return plan
    }

    /// Keeps `plan` for fetches of its shape, if it follows from the shape alone (P1).
    mutating func keep(_ plan: QueryPlan, includesSubentities: Bool, sorts: [SortKey], limit: Int) {
        guard let recipe = plan.recipe, Self.followsFromShape(plan.predicate, plan.entity) else { return }
        if entries.count >= Self.limit { entries.removeAll(keepingCapacity: true) }
        let window = Self.window(limit)
        entries[Self.key(plan.entity, includesSubentities, window, plan.predicate)] =
            Entry(entity: plan.entity, includesSubentities: includesSubentities, window: window, sorts: sorts,
                  shape: plan.predicate, plan: plan, recipe: recipe)
    }

    /// What the planner tells apart in a fetch limit: none (0), a window (> 0), and a negative
    /// one, which it takes as neither (QueryPlanner.choosePlan: only 0 skips the sort's index).
    private static func window(_ limit: Int) -> Int8 { limit > 0 ? 1 : limit == 0 ? 0 : 2 }

    private static func key(_ entity: EntityInfo, _ includesSubentities: Bool, _ window: Int8, _ predicate: QueryPredicate?) -> UInt64 {
        var h = PredicateShape.Hash()
        h.add(UInt64(entity.id) << 3 | (includesSubentities ? 4 : 0) | UInt64(window))
        if let predicate { PredicateShape.hash(predicate, into: &h) }
        return h.value
    }

    /// The entry's plan with `predicate`'s constants (P2).
    private static func follow(_ entry: Entry, _ predicate: QueryPredicate?) -> QueryPlan? {
        let template = entry.plan
        switch entry.recipe {
        case .fixed:
            // No conjunct chose the source: every stored candidate is tested against the whole
            // predicate, unless there is none (then the template's exactness stands).
            if predicate == nil { return template }
            return QueryPlan(entity: template.entity, kinds: template.kinds, source: template.source, predicate: predicate,
                             sorts: template.sorts, indexOrder: template.indexOrder,
                             sourceIsExact: predicate == nil ? template.sourceIsExact : false,
                             storedPredicate: predicate, rootProperties: template.rootProperties, recipe: entry.recipe)
        case .index(let p, let positions):
            guard let type = p.attributeType, let predicate else { return nil }
            let conjuncts: [QueryPredicate]
            if positions.isEmpty {
                conjuncts = [predicate]
            } else {
                guard case .and(let ps) = predicate, positions.allSatisfy({ $0 < ps.count }) else { return nil }
                conjuncts = positions.map { ps[$0] }
            }
            var ranges: [IndexRange] = []
            var decided: [Int] = []
            var exact = false
            for (n, conjunct) in conjuncts.enumerated() {
                guard case .comparison(let c) = conjunct,
                      let r = QueryPlanner.indexRanges(c, type, unique: p.isUnique) else { return nil }
                if n == 0 {
                    ranges = r.ranges
                    exact = r.exact
                } else {
                    // Two bounds merge only as one range each (QueryPlanner.choose).
                    guard ranges.count == 1, r.ranges.count == 1 else { return nil }
                    ranges = [QueryPlanner.intersect(ranges[0], r.ranges[0])]
                    exact = false
                }
                if r.exact, !positions.isEmpty { decided.append(positions[n]) }
                if conjuncts.count > 1, r.ranges.count != 1 { return nil }
            }
            // As the planner: an AND is exact when the ranges answer every conjunct; stored
            // candidates are tested on the conjuncts they do not answer.
            if case .and(let ps) = predicate, ps.count > 1 { exact = decided.count == ps.count }
            let stored = QueryPlanner.storedPredicate(predicate, exact: exact, decided: decided)
            return QueryPlan(entity: template.entity, kinds: template.kinds, source: .index(p, ranges), predicate: predicate,
                             sorts: template.sorts, indexOrder: template.indexOrder, sourceIsExact: exact,
                             storedPredicate: stored, rootProperties: template.rootProperties, recipe: entry.recipe)
        }
    }

    /// Whether the planner's choice for `predicate` follows from its shape alone (P1): it is
    /// one comparison or an AND of them, none reads an object, a compound index or a
    /// relationship, and each that an attribute index could serve has a constant that fits it.
    static func followsFromShape(_ predicate: QueryPredicate?, _ entity: EntityInfo) -> Bool {
        guard let predicate else { return true }
        func follows(_ q: QueryPredicate) -> Bool {
            switch q {
            case .constant(let value): return value   // FALSEPREDICATE chooses nothing to read
            case .not: return true                   // never narrows the candidates
            case .and, .or: return false
            case .comparison(let c):
                guard c.quantifier == .direct || c.quantifier == .any else { return true }
                if c.lhs == .evaluatedObject { return false }
                guard case .keyPath(.evaluatedObject, let names) = c.lhs, let first = names.first,
                      let p = entity.property(named: first) else { return true }
                if QueryPlanner.leadsACompoundIndex(c, entity) { return false }
                guard names.count == 1, let type = p.attributeType else { return false }
                guard c.quantifier == .direct, p.indexTree != nil else { return true }
                return QueryPlanner.indexRanges(c, type, unique: p.isUnique) != nil
            }
        }
        guard case .and(let ps) = predicate else { return follows(predicate) }
        guard ps.allSatisfy(follows) else { return false }
        // An IN's items may collapse to one range for other constants, which then merges with
        // another bound of the same index (QueryPlanner.choose): such a pair is planned each time.
        var compared: [String] = []
        var listed: [String] = []
        for case .comparison(let c) in ps {
            guard case .keyPath(.evaluatedObject, let names) = c.lhs, names.count == 1 else { continue }
            if c.op == .in { listed.append(names[0]) }
            compared.append(names[0])
        }
        return listed.allSatisfy { name in compared.filter { $0 == name }.count == 1 }
    }
}

/// A predicate's shape (PlanCache's file comment): hashed, and compared.
enum PredicateShape {
    /// A 64-bit hash of words (multiply and fold; not for anything but finding an entry).
    struct Hash {
        private(set) var value: UInt64 = 0xcbf2_9ce4_8422_2325

        mutating func add(_ word: UInt64) {
            value = (value ^ word) &* 0x0000_0100_0000_01b3
            value ^= value >> 29
        }

        mutating func add(_ name: String) {
            var name = name
            name.withUTF8 { bytes in
                for byte in bytes { add(UInt64(byte)) }
            }
            add(0xFF)
        }
    }

    static func hash(_ p: QueryPredicate, into h: inout Hash) {
        switch p {
        case .constant(let value): h.add(value ? 1 : 2)
        case .and(let ps):
            h.add(3)
            for q in ps { hash(q, into: &h) }
            h.add(4)
        case .or(let ps):
            h.add(5)
            for q in ps { hash(q, into: &h) }
            h.add(6)
        case .not(let q):
            h.add(7)
            hash(q, into: &h)
        case .comparison(let c):
            h.add(8 | UInt64(c.options.rawValue) << 8 | UInt64(c.op.hashTag) << 16 | UInt64(c.quantifier.hashTag) << 24)
            hash(c.lhs, into: &h)
            hash(c.rhs, into: &h)
        }
    }

    static func hash(_ e: QueryExpression, into h: inout Hash) {
        switch e {
        case .constant(let v): h.add(32 | UInt64(kind(v)) << 8)
        case .list(let items):
            h.add(33 | UInt64(items.count) << 8)
            for item in items { hash(item, into: &h) }
        case .evaluatedObject: h.add(34)
        case .keyPath(let base, let names):
            h.add(35)
            hash(base, into: &h)
            for name in names { h.add(name) }
        default:
            h.add(36)   // compared in full (`same`); the hash only has to agree with that
        }
    }

    /// Whether two predicates have one shape: equal but for their constants' values.
    static func same(_ a: QueryPredicate?, _ b: QueryPredicate?) -> Bool {
        switch (a, b) {
        case (nil, nil): return true
        case (let a?, let b?): return same(a, b)
        default: return false
        }
    }

    static func same(_ a: QueryPredicate, _ b: QueryPredicate) -> Bool {
        switch (a, b) {
        case (.constant(let x), .constant(let y)): return x == y
        case (.and(let x), .and(let y)), (.or(let x), .or(let y)):
            return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.not(let x), .not(let y)): return same(x, y)
        case (.comparison(let x), .comparison(let y)):
            return x.op == y.op && x.quantifier == y.quantifier && x.options == y.options && same(x.lhs, y.lhs) && same(x.rhs, y.rhs)
        default: return false
        }
    }

    static func same(_ a: QueryExpression, _ b: QueryExpression) -> Bool {
        switch (a, b) {
        case (.constant(let x), .constant(let y)): return kind(x) == kind(y)
        case (.list(let x), .list(let y)): return x.count == y.count && zip(x, y).allSatisfy { same($0, $1) }
        case (.evaluatedObject, .evaluatedObject): return true
        case (.keyPath(let x, let m), .keyPath(let y, let n)): return m == n && same(x, y)
        case (.constant, _), (.list, _), (.evaluatedObject, _), (.keyPath, _): return false
        default: return a == b   // anything else: equal in full, constants included
        }
    }

    /// A constant's kind.
    static func kind(_ v: StoredValue) -> UInt8 {
        switch v {
        case .null: 0
        case .bool: 1
        case .int: 2
        case .double: 3
        case .float: 4
        case .decimal: 5
        case .string: 6
        case .date: 7
        case .uuid: 8
        case .url: 9
        case .data: 10
        case .document: 11
        case .reference: 12
        }
    }
}

private extension QueryOperator {
    var hashTag: UInt8 {
        switch self {
        case .equal: 0
        case .notEqual: 1
        case .less: 2
        case .lessOrEqual: 3
        case .greater: 4
        case .greaterOrEqual: 5
        case .between: 6
        case .in: 7
        case .beginsWith: 8
        case .endsWith: 9
        case .contains: 10
        case .like: 11
        case .matches: 12
        }
    }
}

private extension QueryQuantifier {
    var hashTag: UInt8 {
        switch self {
        case .direct: 0
        case .any: 1
        case .all: 2
        case .none: 3
        }
    }
}
