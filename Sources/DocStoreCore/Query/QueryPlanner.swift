// QueryPlanner: checks a fetch against the schema and chooses its plan (QueryPlan.swift).
//
// Checking happens before anything is read: every key path must name properties that exist
// (following to-one and to-many relationships, and going on freely inside Codable documents),
// every variable must be bound (by substitution or SUBQUERY), and a sort key must reach a
// single value (no to-many step). Errors are `.invalidQuery`, naming the entity and property.
//
// Choosing a source, per comparison of a conjunction (the cheapest wins, by rank):
//   0 `SELF == obj`, `SELF IN objs`; a unique index equality
//   1 an index equality; `rel == obj`, `ANY rel == obj`, `rel CONTAINS obj`; a compound
//     index with its leading elements fixed by equalities (a unique one with all of them: 0)
//   2 an index IN
//   3 an index range or BEGINSWITH
//   4 a key path through a relationship whose rest the destination can answer
//     (`folder.name == "Inbox"`, `ANY tags.name == "x"`)
// An index serves a comparison whose left side is the attribute itself, with no [c]/[d]/[n]
// options, and whose constant has the attribute's kind (integers for integer attributes, any
// number for floating-point ones). An OR has a source when every branch has one (their union).
// ALL/NONE and NOT never narrow the candidates. A compound index serves the conjuncts that fix
// its leading elements by `==` (to-one elements by object or nil), plus ranges on the element
// after them — the leftmost prefix, as in SQL; it wins a tie with a single-attribute index.

import Foundation
internal import DocStoreEngine

enum QueryPlanner {
    static func plan(entity: EntityInfo, includesSubentities: Bool, predicate: QueryPredicate?,
                     sorts: [SortKey], limit: Int, model: StoreModel) throws(DocStoreError) -> QueryPlan {
        if let predicate { try check(predicate, self: .object(entity), variables: [:], model: model) }
        var sortExpressions: [(QueryExpression, SortKey)] = []
        for key in sorts {
            if let unresolved = key.unresolved { throw DocStoreError(.invalidQuery, "cannot sort: \(unresolved)", entity: entity.name) }
            let e = try PredicateParser.parseExpression(key.keyPath)
            let t = try check(e, self: .object(entity), variables: [:], model: model)
            if case .objects = t { try refuseSort(key, entity) }
            if case .values = t { try refuseSort(key, entity) }
            sortExpressions.append((e, key))
        }
        return try choosePlan(entity: entity, includesSubentities: includesSubentities, predicate: predicate,
                              sorts: sortExpressions, limit: limit, model: model)
    }

    private static func refuseSort(_ key: SortKey, _ entity: EntityInfo) throws(DocStoreError) {
        throw DocStoreError(.invalidQuery, "cannot sort by \(key.keyPath): it reaches a to-many relationship (many values)", entity: entity.name, property: key.keyPath)
    }

    private static func choosePlan(entity: EntityInfo, includesSubentities: Bool, predicate: QueryPredicate?,
                                   sorts sortExpressions: [(QueryExpression, SortKey)], limit: Int, model: StoreModel) throws(DocStoreError) -> QueryPlan {
        let kinds: Set<UInt32> = includesSubentities ? entity.kindIDs : [entity.id]
        var source: QuerySource = .scan
        var exact = false
        let chosen = try predicate.flatMap { (p) throws(DocStoreError) in try choose(p, on: entity, model: model) }
        if let chosen {
            source = chosen.source
            exact = chosen.exact
        }
        // An index walked in the order of the first sort key: when a window is asked for (the
        // walk stops past it), or when the predicate chose that index and there is no other
        // sort key (the rows come in order, nothing is sorted).
        var indexOrder: Bool?
        if limit > 0 || sortExpressions.count == 1, let first = sortExpressions.first, first.1.options.isEmpty,
           case .keyPath(.evaluatedObject, let names) = first.0, names.count == 1,
           let p = entity.property(named: names[0]) {
            // A unique index holds no nils: it orders every object only if the value is required.
            let single = p.indexTree != nil && (!p.isUnique || p.attribute?.isOptional == false)
            switch source {
            case .scan where limit == 0:
                break
            case .scan where single:
                source = .index(p, [IndexRange(meaning: .words("every entry"))])
                exact = predicate == nil
                indexOrder = first.1.ascending
            case .scan:
                // A compound index led by the sort key holds every object (nils included).
                if let index = entity.compoundIndexes.first(where: { $0.elements[0] === p && !$0.isMultiValued }) {
                    source = .compound(index, fixed: 0, [IndexRange(meaning: .words("every entry"))])
                    exact = predicate == nil
                    indexOrder = first.1.ascending
                }
            case .index(let q, _) where q === p && single:
                indexOrder = first.1.ascending
            case .compound(let index, let fixed, let ranges)
                where fixed < index.elements.count && index.elements[fixed] === p && ranges.count == 1
                    && index.documentPaths[fixed...].allSatisfy(\.isEmpty):   // one entry per object from here on
                indexOrder = first.1.ascending
            default: break
            }
        }
        if predicate == nil, case .scan = source { exact = true }
        // What a stored candidate is still tested against: the conjuncts the source's ranges
        // do not answer.
        let stored = storedPredicate(predicate, exact: exact, decided: chosen?.decided ?? [])
        // The first property name of every key path that starts at SELF (a superset of what the
        // fetched object's record must provide: inside a SUBQUERY, SELF is the member).
        // A few names at most: a list, not a set (hashing them into a new set was a tenth of
        // planning a fetch by one indexed value).
        var names: [String] = []
        func add(_ path: [String]) { if !names.contains(path[0]) { names.append(path[0]) } }
        if let predicate { forEachRootPath(predicate, add) }
        for (e, _) in sortExpressions { forEachRootPath(e, add) }
        // How the source was chosen, for the context's plan cache (PlanCache.swift): from no
        // conjunct, or from the index ranges of the conjuncts named.
        var recipe: PlanRecipe?
        if chosen == nil {
            recipe = .fixed
        } else if let chosen, case .index(let p, _) = chosen.source, case .index(let q, _) = source, p === q {
            recipe = .index(p, conjuncts: chosen.conjuncts)
        }
        return QueryPlan(entity: entity, kinds: kinds, source: source, predicate: predicate,
                         sorts: sortExpressions.map { (expression: $0.0, key: $0.1) },
                         indexOrder: indexOrder, sourceIsExact: exact, storedPredicate: stored, rootProperties: names,
                         recipe: recipe)
    }

    /// What a stored candidate of a source is still tested against: nothing when the source is
    /// exact; else the predicate without the conjuncts at `decided`, which its ranges answer.
    static func storedPredicate(_ predicate: QueryPredicate?, exact: Bool, decided: [Int]) -> QueryPredicate? {
        if exact { return nil }
        guard case .and(let ps)? = predicate, !decided.isEmpty else { return predicate }
        let rest = ps.indices.filter { !decided.contains($0) }.map { ps[$0] }
        return rest.count == 1 ? rest[0] : .and(rest)
    }

    /// Every key path that starts at SELF, whole (`["folder", "name"]`).
    static func collectRootPaths(_ p: QueryPredicate, into paths: inout Set<[String]>) {
        forEachRootPath(p) { paths.insert($0) }
    }

    /// Calls `visit` with each key path that starts at SELF (not empty; repeats included).
    static func forEachRootPath(_ p: QueryPredicate, _ visit: ([String]) -> Void) {
        switch p {
        case .constant: return
        case .and(let ps), .or(let ps): for q in ps { forEachRootPath(q, visit) }
        case .not(let q): forEachRootPath(q, visit)
        case .comparison(let c):
            forEachRootPath(c.lhs, visit)
            forEachRootPath(c.rhs, visit)
        }
    }

    static func forEachRootPath(_ e: QueryExpression, _ visit: ([String]) -> Void) {
        switch e {
        case .constant, .variable, .evaluatedObject: return
        case .keyPath(.evaluatedObject, let path): if !path.isEmpty { visit(path) }
        case .keyPath(let base, _), .aggregate(_, let base, _), .negated(let base): forEachRootPath(base, visit)
        case .list(let items): for item in items { forEachRootPath(item, visit) }
        case .subquery(let collection, _, let p):
            forEachRootPath(collection, visit)
            forEachRootPath(p, visit)
        case .arithmetic(_, let a, let b), .coalesce(let a, let b):
            forEachRootPath(a, visit)
            forEachRootPath(b, visit)
        case .conditional(let p, let a, let b):
            forEachRootPath(p, visit)
            forEachRootPath(a, visit)
            forEachRootPath(b, visit)
        }
    }

    // MARK: - Checking

    /// What an expression reaches, as far as the schema tells.
    indirect enum StaticType {
        case object(EntityInfo)
        case objects(EntityInfo)
        case document
        case value
        /// Many values (an attribute reached through a to-many relationship).
        case values
    }

    static func check(_ p: QueryPredicate, self selfType: StaticType, variables: [String: StaticType], model: StoreModel) throws(DocStoreError) {
        switch p {
        case .constant: return
        case .and(let ps), .or(let ps):
            for q in ps { try check(q, self: selfType, variables: variables, model: model) }
        case .not(let q): try check(q, self: selfType, variables: variables, model: model)
        case .comparison(let c):
            _ = try check(c.lhs, self: selfType, variables: variables, model: model)
            _ = try check(c.rhs, self: selfType, variables: variables, model: model)
        }
    }

    @discardableResult
    static func check(_ e: QueryExpression, self selfType: StaticType, variables: [String: StaticType], model: StoreModel) throws(DocStoreError) -> StaticType {
        switch e {
        case .constant, .list: return .value
        case .evaluatedObject: return selfType
        case .variable(let name):
            guard let t = variables[name] else {
                throw DocStoreError(.invalidQuery, "the variable $\(name) has no value: bind it with withSubstitutionVariables([\"\(name)\": …]) or in a SUBQUERY")
            }
            return t
        case .keyPath(let base, let names):
            var t = try check(base, self: selfType, variables: variables, model: model)
            for name in names { t = try step(t, name, model: model) }
            return t
        case .aggregate(_, let base, let names):
            var t = try check(base, self: selfType, variables: variables, model: model)
            for name in names { t = try step(t, name, model: model) }
            return .value
        case .subquery(let collection, let variable, let predicate):
            let t = try check(collection, self: selfType, variables: variables, model: model)
            let element: StaticType = switch t {
            case .objects(let d), .object(let d): .object(d)
            default: .value
            }
            var inner = variables
            inner[variable] = element
            try check(predicate, self: element, variables: inner, model: model)
            return t
        case .arithmetic(_, let a, let b):
            try check(a, self: selfType, variables: variables, model: model)
            try check(b, self: selfType, variables: variables, model: model)
            return .value
        case .negated(let a):
            try check(a, self: selfType, variables: variables, model: model)
            return .value
        case .conditional(let p, let a, let b):
            try check(p, self: selfType, variables: variables, model: model)
            try check(b, self: selfType, variables: variables, model: model)
            return try check(a, self: selfType, variables: variables, model: model)
        case .coalesce(let a, let b):
            try check(b, self: selfType, variables: variables, model: model)
            return try check(a, self: selfType, variables: variables, model: model)
        }
    }

    private static func step(_ t: StaticType, _ name: String, model: StoreModel) throws(DocStoreError) -> StaticType {
        switch t {
        case .document: return .document
        case .value, .values:
            throw DocStoreError(.invalidQuery, "cannot follow \"\(name)\" from a value that is not an object or a document", property: name)
        case .object(let e), .objects(let e):
            let many: Bool = if case .objects = t { true } else { false }
            if name == QueryExpression.entitiesKey { return .values }
            // A property of a sub-entity is allowed too (`(animal as? Dog)?.barks`); objects of
            // entities without it have nil there.
            guard let p = e.property(named: name)
                    ?? model.entities.lazy.filter({ e.kindIDs.contains($0.id) }).compactMap({ $0.property(named: name) }).first else {
                throw DocStoreError(.invalidQuery, "\(e.name) has no property \"\(name)\"", entity: e.name, property: name)
            }
            if let type = p.attributeType {
                if case .codable = type { return many ? .values : .document }
                return many ? .values : .value
            }
            guard p.destination >= 0, p.destination < model.entities.count else { return .value }
            let d = model.entities[p.destination]
            return many || p.isToMany ? .objects(d) : .object(d)
        }
    }

    // MARK: - Choosing a source

    struct Choice {
        var source: QuerySource
        var rank: Int
        /// Every candidate of `source` matches the predicate chosen for.
        var exact: Bool
        /// For an AND: the positions of the conjuncts every candidate of `source` passes (those
        /// its index ranges answer exactly); the others are still tested on each candidate.
        var decided: [Int] = []
        /// For an AND: the positions of the conjuncts whose index ranges make `source` (two
        /// bounds of one index make one range); empty when chosen for a lone comparison.
        var conjuncts: [Int] = []
    }

    static func choose(_ p: QueryPredicate, on entity: EntityInfo, model: StoreModel) throws(DocStoreError) -> Choice? {
        switch p {
        case .constant(false): return Choice(source: .empty, rank: 0, exact: true)
        case .constant(true), .not: return nil
        case .and(let ps):
            var choices: [Choice] = []
            for (i, q) in ps.enumerated() {
                if var c = try choose(q, on: entity, model: model) {
                    c.decided = c.exact ? [i] : []
                    c.conjuncts = [i]
                    choices.append(c)
                }
            }
            // Two bounds on one indexed attribute (`d >= a AND d < b`) make one range. Every
            // entry of it is within both ranges, so it decides what each of them decided.
            var merged: [Choice] = []
            for c in choices {
                if case .index(let p, let r) = c.source, r.count == 1,
                   let i = merged.firstIndex(where: { if case .index(let q, let s) = $0.source { q === p && s.count == 1 } else { false } }),
                   case .index(_, let s) = merged[i].source {
                    merged[i] = Choice(source: .index(p, [intersect(s[0], r[0])]), rank: min(merged[i].rank, c.rank), exact: false,
                                       decided: merged[i].decided + c.decided, conjuncts: merged[i].conjuncts + c.conjuncts)
                } else {
                    merged.append(c)
                }
            }
            // A compound index first, so it wins a tie (it narrows by more than one element).
            if var compound = compoundChoice(ps, on: entity) {
                compound.decided = compound.exact ? Array(ps.indices) : []
                compound.conjuncts = []
                merged.insert(compound, at: 0)
            }
            guard var best = merged.min(by: { $0.rank < $1.rank }) else { return nil }
            // Exact only when the source answers every conjunct (a one-element compound index
            // chosen for one conjunct answers that one alone).
            if ps.count > 1 { best.exact = best.decided.count == ps.count }
            return best
        case .or(let ps):
            var sources: [QuerySource] = []
            var rank = 0
            for q in ps {
                guard let c = try choose(q, on: entity, model: model) else { return nil }
                sources.append(c.source)
                rank = max(rank, c.rank)
            }
            return Choice(source: .union(sources), rank: rank + 1, exact: false)
        case .comparison(let c):
            let single = try choose(c, on: entity, model: model)
            guard leadsACompoundIndex(c, entity) else { return single }
            if let compound = compoundChoice([p], on: entity), compound.rank <= single?.rank ?? Int.max { return compound }
            return single
        }
    }

    private static func choose(_ c: QueryComparison, on entity: EntityInfo, model: StoreModel) throws(DocStoreError) -> Choice? {
        guard c.quantifier == .direct || c.quantifier == .any else { return nil }
        // SELF == obj, SELF IN objs.
        if c.lhs == .evaluatedObject, c.quantifier == .direct, let refs = references(c.rhs), c.op == .equal || c.op == .in {
            return Choice(source: .keys(refs), rank: 0, exact: false)
        }
        guard case .keyPath(.evaluatedObject, let names) = c.lhs, let first = names.first,
              let p = entity.property(named: first) else { return nil }
        if names.count == 1, let type = p.attributeType {
            guard c.quantifier == .direct else { return nil }
            return indexChoice(c, p, type)
        }
        guard p.destination >= 0, p.destination < model.entities.count, p.inverseSlot >= 0 else { return nil }
        let destination = model.entities[p.destination]
        guard p.inverseSlot < destination.properties.count else { return nil }
        let inverse = destination.properties[p.inverseSlot]
        if names.count == 1 {
            // rel == obj, rel IN objs, ANY rel == obj, rel CONTAINS obj.
            guard let refs = references(c.rhs) else { return nil }
            let fits = c.op == .equal || c.op == .in || (c.op == .contains && p.isToMany && c.quantifier == .direct)
            guard fits else { return nil }
            return Choice(source: .related(via: p, inverse: inverse, targets: .keys(refs), destination: destination, targetFilter: nil),
                          rank: 1, exact: false)
        }
        // rel.rest op value: the destination answers `rest op value`, then the links map back.
        // Objects whose to-one is nil are not reached that way, so the comparison must be false
        // for them (`folder.name != "x"` holds for a note without a folder: scan instead).
        if p.isToOne, !isFalseForNil(c) { return nil }
        let rest = QueryComparison(.keyPath(.evaluatedObject, Array(names.dropFirst())), c.op, c.rhs, quantifier: .direct, options: c.options)
        let inner = try choose(rest, on: destination, model: model)
        return Choice(source: .related(via: p, inverse: inverse, targets: inner?.source ?? .scan, destination: destination,
                                       targetFilter: .comparison(rest)),
                      rank: 4 + (inner?.rank ?? 2), exact: false)
    }

    /// The entries two ranges of one index both admit: the higher lower bound, the lower upper
    /// bound (an exclusive bound wins a tie; a prefix bound is kept as it is).
    static func intersect(_ a: IndexRange, _ b: IndexRange) -> IndexRange {
        var r = IndexRange(meaning: .all([a.meaning, b.meaning]))
        // Within an equality: its value, or nothing when the other range leaves it out (then
        // the lower bound is another value, which no match holds).
        r.isPoint = a.isPoint || b.isPoint
        switch (a.lower, b.lower) {
        case (nil, _): (r.lower, r.lowerInclusive) = (b.lower, b.lowerInclusive)
        case (_, nil): (r.lower, r.lowerInclusive) = (a.lower, a.lowerInclusive)
        case (let x?, let y?):
            let c = compareBytes(x, y)
            if c > 0 || (c == 0 && !a.lowerInclusive) { (r.lower, r.lowerInclusive) = (x, a.lowerInclusive) }
            else { (r.lower, r.lowerInclusive) = (y, b.lowerInclusive) }
        }
        switch (a.upper, b.upper) {
        case (nil, _): (r.upper, r.upperInclusive) = (b.upper, b.upperInclusive)
        case (_, nil): (r.upper, r.upperInclusive) = (a.upper, a.upperInclusive)
        case (let x?, let y?):
            // An inclusive bound that prefixes the other (the kind tag, a BEGINSWITH prefix)
            // admits everything the other does: keep the other.
            let c = x != y && y.starts(with: x) && a.upperInclusive ? 1
                : x != y && x.starts(with: y) && b.upperInclusive ? -1 : compareBytes(x, y)
            if c < 0 || (c == 0 && !a.upperInclusive) { (r.upper, r.upperInclusive) = (x, a.upperInclusive) }
            else { (r.upper, r.upperInclusive) = (y, b.upperInclusive) }
        }
        return r
    }

    /// Whether the comparison is false whenever its left side is nil (Q3).
    static func isFalseForNil(_ c: QueryComparison) -> Bool {
        func nonNullConstant(_ e: QueryExpression) -> Bool {
            if case .constant(let v) = e { return !v.isNull }
            return false
        }
        switch c.op {
        case .equal: return nonNullConstant(c.rhs)
        case .notEqual: return false
        case .in:
            if case .list(let items) = c.rhs { return items.allSatisfy(nonNullConstant) }
            return false
        default: return true   // orderings, BETWEEN and string operators never hold for nil
        }
    }

    /// Constant object references on the right (one, or a list of them).
    private static func references(_ e: QueryExpression) -> [UInt64]? {
        switch e {
        case .constant(.reference(let k)): return [k]
        case .list(let items):
            var keys: [UInt64] = []
            for item in items {
                guard case .constant(.reference(let k)) = item else { return nil }
                keys.append(k)
            }
            return keys
        default: return nil
        }
    }

    /// Whether a compound index of `entity` starts with the key path `c` compares: the only
    /// way `compoundChoice` can choose one for `c` alone (it needs a conjunct on the first
    /// element), found without matching `c` once per index and element.
    static func leadsACompoundIndex(_ c: QueryComparison, _ entity: EntityInfo) -> Bool {
        guard !entity.compoundIndexes.isEmpty, case .keyPath(.evaluatedObject, let names) = c.lhs else { return false }
        return entity.compoundIndexes.contains { !$0.paths.isEmpty && $0.paths[0] == names }
    }

    private static func indexChoice(_ c: QueryComparison, _ p: PropertyInfo, _ a: AttributeType) -> Choice? {
        guard p.indexTree != nil, let r = indexRanges(c, a, unique: p.isUnique) else { return nil }
        return Choice(source: .index(p, r.ranges), rank: r.rank == 1 && p.isUnique ? 0 : r.rank, exact: r.exact)
    }

    /// The ranges of encoded values an index over `a` holds for the values `c` admits, with
    /// the rank of such a choice (1 equality, 2 IN, 3 range or prefix) and whether every entry
    /// in them is a match. Nil when the index cannot serve `c`.
    static func indexRanges(_ c: QueryComparison, _ a: AttributeType, unique: Bool) -> (ranges: [IndexRange], rank: Int, exact: Bool)? {
        guard c.options.isEmpty else { return nil }
        func bound(_ e: QueryExpression) -> [UInt8]? {
            guard case .constant(let v) = e else { return nil }
            return indexBound(v, for: a, unique: unique)
        }
        // Ranges over doubles admit NaN (it sorts last in the index), so they are not exact.
        let floating = a == .double || a == .float || a == .decimal
        // NaN equals nothing (Q3), yet the index holds NaN under a key of its own: the entries
        // under a NaN constant are tested.
        func isNaN(_ e: QueryExpression) -> Bool {
            guard floating, case .constant(let v) = e, let d = QueryValueSemantics.number(v) else { return false }
            return d.isNaN
        }
        // A URL orders only against a URL (QueryValueSemantics), though the index holds it as
        // its string: a range with a string constant is tested.
        func ordersExactly(_ e: QueryExpression) -> Bool {
            if floating { return false }
            if a == .url, case .constant(.string) = e { return false }
            return true
        }
        switch c.op {
        case .equal:
            guard let b = bound(c.rhs) else { return nil }
            return ([IndexRange(lower: b, upper: b, meaning: .comparison("==", c.rhs), isPoint: true)], 1, !isNaN(c.rhs))
        case .in:
            guard case .list(let items) = c.rhs else { return nil }
            var ranges: [IndexRange] = []
            var seen = Set<[UInt8]>()
            for item in items {
                guard let b = bound(item) else { return nil }
                if seen.insert(b).inserted { ranges.append(IndexRange(lower: b, upper: b, meaning: .comparison("==", item), isPoint: true)) }
            }
            ranges.sort { compareBytes($0.lower ?? [], $1.lower ?? []) < 0 }
            // `x IN {nil, …}` does not match a nil x (as SQL's IN), though the index holds nils
            // under the nil item's bound: then candidates are tested.
            let listsNil = items.contains { if case .constant(let v) = $0 { v.isNull } else { false } }
            return (ranges, 2, !listsNil && !items.contains(where: isNaN))
        case .less, .lessOrEqual:
            guard let b = bound(c.rhs), case .constant(let v) = c.rhs, !v.isNull, let tag = kindPrefix(for: a) else { return nil }
            return ([IndexRange(lower: tag, upper: b, upperInclusive: c.op == .lessOrEqual, meaning: .comparison(c.op.rawValue, c.rhs))], 3,
                    ordersExactly(c.rhs))
        case .greater, .greaterOrEqual:
            guard let b = bound(c.rhs), case .constant(let v) = c.rhs, !v.isNull, let tag = kindPrefix(for: a) else { return nil }
            return ([IndexRange(lower: b, lowerInclusive: c.op == .greaterOrEqual, upper: tag, meaning: .comparison(c.op.rawValue, c.rhs))], 3,
                    ordersExactly(c.rhs))
        case .between:
            guard case .list(let bounds) = c.rhs, bounds.count == 2, let lo = bound(bounds[0]), let hi = bound(bounds[1]),
                  case .constant(let v) = bounds[0], !v.isNull, case .constant(let w) = bounds[1], !w.isNull else { return nil }
            return ([IndexRange(lower: lo, upper: hi, meaning: .comparison("BETWEEN", c.rhs))], 3, ordersExactly(bounds[0]) && ordersExactly(bounds[1]))
        case .beginsWith:
            guard a == .string, case .constant(.string(let s)) = c.rhs,
                  var prefix = Context.indexKey(.string(s), unique: true, key: 0) else { return nil }
            prefix.removeLast(2)   // the string terminator 00 01: every extension of s starts with the rest
            // Not exact: a byte prefix can end inside a character ("a\r" of "a\r\nb", "q" of
            // "q\u{301}"), which BEGINSWITH (by characters) does not match — candidates are tested.
            return ([IndexRange(lower: prefix, upper: prefix, meaning: .comparison("BEGINSWITH", c.rhs))], 3, false)
        default:
            return nil
        }
    }

    /// The best compound index for a conjunction: the one whose longest run of leading elements
    /// the conjuncts fix by `==`, then bound on the next element (Choice ranks as above).
    static func compoundChoice(_ conjuncts: [QueryPredicate], on entity: EntityInfo) -> Choice? {
        guard !entity.compoundIndexes.isEmpty else { return nil }
        /// Direct comparisons, without options, of element `i` of `index` itself.
        func comparisons(_ index: CompoundIndex, _ i: Int) -> [QueryComparison] {
            let path = index.path(i)
            return conjuncts.compactMap { q in
                guard case .comparison(let c) = q, c.quantifier == .direct || (c.quantifier == .any && index.isMultiValued), c.options.isEmpty,
                      case .keyPath(.evaluatedObject, let names) = c.lhs, names == path else { return nil }
                return c
            }
        }
        func equalityBound(_ c: QueryComparison, _ index: CompoundIndex, _ i: Int) -> [UInt8]? {
            guard c.op == .equal, case .constant(let v) = c.rhs else { return nil }
            if !index.documentPaths[i].isEmpty { return documentBound(v) }
            if let a = index.elements[i].attributeType { return indexBound(v, for: a, unique: false) }
            switch v {
            case .null: return KeyEncoding.encode([.null])
            case .reference(let k): return KeyEncoding.encode([.uint(k)])
            default: return nil
            }
        }
        var best: (choice: Choice, fixed: Int, bounded: Bool)?
        for index in entity.compoundIndexes {
            // An index serves only when a conjunct fixes or bounds its first element: most
            // fetches compare other attributes, and skip the index before any work for it.
            guard !index.paths.isEmpty, !comparisons(index, 0).isEmpty else { continue }
            var prefix: [UInt8] = []
            var texts: [RangeText] = []
            var used = 0
            var fixed = 0
            var exact = !index.isMultiValued
            for i in index.elements.indices {
                guard let (c, b) = comparisons(index, i).lazy.compactMap({ c in equalityBound(c, index, i).map { (c, $0) } }).first
                else { break }
                prefix += b
                texts.append(.path(index.path(i), .comparison("==", c.rhs)))
                used += 1
                fixed += 1
                // NaN equals nothing, though the index holds it under a key of its own.
                if case .constant(let v) = c.rhs, QueryValueSemantics.number(v)?.isNaN == true { exact = false }
            }
            var range = IndexRange(lower: prefix, upper: prefix, meaning: .words(""))
            var bounded = false
            if fixed < index.elements.count {
                let document = !index.documentPaths[fixed].isEmpty
                let attribute = index.elements[fixed].attributeType
                for c in comparisons(index, fixed) where c.op != .equal && c.op != .in {
                    let found = document ? documentRange(c) : attribute.flatMap { indexRanges(c, $0, unique: false) }
                    guard let r = found, r.ranges.count == 1 else { continue }
                    var piece = r.ranges[0]
                    piece.lower = prefix + (piece.lower ?? [])
                    piece.upper = prefix + (piece.upper ?? [])
                    range = bounded ? intersect(range, piece) : piece
                    texts.append(.path(index.path(fixed), r.ranges[0].meaning))
                    bounded = true
                    exact = exact && r.exact
                    used += 1
                }
            }
            guard fixed > 0 || bounded else { continue }
            range.meaning = .all(texts)
            let rank = fixed == index.elements.count && index.isUnique ? 0 : fixed > 0 ? 1 : 3
            let choice = Choice(source: .compound(index, fixed: fixed, [range]), rank: rank, exact: exact && used == conjuncts.count)
            if let b = best, (b.fixed, b.bounded ? 1 : 0) >= (fixed, bounded ? 1 : 0) { continue }
            best = (choice, fixed, bounded)
        }
        return best?.choice
    }

    /// A constant as a document field's index entry holds it (numbers as doubles); nil for a
    /// kind a document field cannot hold.
    static func documentBound(_ v: StoredValue) -> [UInt8]? {
        let converted: StoredValue
        switch v {
        case .null, .bool, .string: converted = v
        case .int, .double, .float, .decimal:
            guard let d = QueryValueSemantics.number(v) else { return nil }
            converted = .double(d)
        default: return nil
        }
        return Context.indexComponent(converted).map { KeyEncoding.encode([$0]) }
    }

    /// The range of a document field's index a comparison admits. Bounds are inclusive (large
    /// integers round to doubles) and never exact: candidates are tested again.
    static func documentRange(_ c: QueryComparison) -> (ranges: [IndexRange], rank: Int, exact: Bool)? {
        func bound(_ e: QueryExpression) -> (bytes: [UInt8], tag: [UInt8])? {
            guard case .constant(let v) = e, !v.isNull, let b = documentBound(v), let tag = b.first else { return nil }
            return (b, [tag])
        }
        switch c.op {
        case .less, .lessOrEqual:
            guard let b = bound(c.rhs) else { return nil }
            return ([IndexRange(lower: b.tag, upper: b.bytes, meaning: .comparison(c.op.rawValue, c.rhs))], 3, false)
        case .greater, .greaterOrEqual:
            guard let b = bound(c.rhs) else { return nil }
            return ([IndexRange(lower: b.bytes, upper: b.tag, meaning: .comparison(c.op.rawValue, c.rhs))], 3, false)
        case .between:
            guard case .list(let bounds) = c.rhs, bounds.count == 2, let lo = bound(bounds[0]), let hi = bound(bounds[1]), lo.tag == hi.tag else { return nil }
            return ([IndexRange(lower: lo.bytes, upper: hi.bytes, meaning: .comparison("BETWEEN", c.rhs))], 3, false)
        case .beginsWith:
            guard case .constant(.string(let s)) = c.rhs, var prefix = documentBound(.string(s)) else { return nil }
            prefix.removeLast(2)
            return ([IndexRange(lower: prefix, upper: prefix, meaning: .comparison("BEGINSWITH", c.rhs))], 3, false)
        default:
            return nil
        }
    }

    /// The encoded value of a constant as the attribute's index holds it, or nil when the
    /// constant is not of the attribute's kind (then the index is not used).
    static func indexBound(_ v: StoredValue, for a: AttributeType, unique: Bool) -> [UInt8]? {
        let converted: StoredValue
        switch (a, v) {
        case (_, .null):
            guard !unique else { return nil }   // a unique index holds no nulls
            return KeyEncoding.encode([.null])
        case (.double, _), (.float, _), (.decimal, _):
            guard let d = QueryValueSemantics.number(v), !(v.isBool) else { return nil }
            converted = .double(d)
        case (.url, .string(let s)):
            converted = .string(s)
        default:
            guard v.fits(a), !(v.isBool && a != .bool) else { return nil }
            converted = v
        }
        return Context.indexValue(converted)
    }

    /// The one-byte type tag every indexed value of the attribute starts with (so a range with
    /// one open end stays within the attribute's kind and leaves nulls out).
    private static func kindPrefix(for a: AttributeType) -> [UInt8]? {
        let sample: StoredValue? = switch a {
        case .int16, .int32, .int64, .int8: .int(0)
        case .double, .float, .decimal: .double(0)
        case .string, .url: .string("")
        case .date: .date(Date(timeIntervalSinceReferenceDate: 0))
        case .bool: .bool(false)
        case .uuid: .uuid(UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)))
        case .binaryData: .data(Data())
        default: nil
        }
        guard let sample, let encoded = Context.indexKey(sample, unique: true, key: 0) else { return nil }
        return [encoded[0]]
    }
}

extension StoredValue {
    var isBool: Bool { if case .bool = self { true } else { false } }
}
