// QueryEvaluator: runs a QueryPredicate against objects of one context, with the semantics of
// QueryPredicate.swift (Q1–Q5) and QueryValueSemantics.
//
// Objects are handled by primary key (`.reference(key)`), never materialized: an object's values
// come from the context when it holds the object loaded (so unsaved changes count) and from the
// stored record otherwise; a to-many relationship's members from the context's relationship state
// or the links tree. With `includesPendingChanges` false, every value comes from the store.
// Key paths continue into Codable documents (a field of a nested JSON document, arrays as
// collections). The evaluator is used for one fetch and caches compiled regular expressions.

import Foundation
internal import DocStoreEngine

/// What an expression evaluates to: one value, or a collection of values (Q1).
enum QueryOperand {
    case scalar(StoredValue)
    case collection([StoredValue])

    /// The values, a scalar being a collection of one (nil: none).
    var elements: [StoredValue] {
        switch self {
        case .scalar(.null): []
        case .scalar(let v): [v]
        case .collection(let vs): vs
        }
    }
}

final class QueryEvaluator {
    let context: Context
    let includesPendingChanges: Bool
    /// Values bound by SUBQUERY (and substituted variables that reach the evaluator).
    private var variables: [String: QueryOperand] = [:]
    /// SELF: the object tested, or the SUBQUERY member.
    private var selfValue: StoredValue = .null
    /// The tested object's values, already at hand (from the scan or the object).
    private var root: (key: UInt64, values: [StoredValue])?
    /// The slots of `root.values` that were decoded (nil: all).
    private var rootSlots: [Bool]?
    private var regexes: [String: NSRegularExpression?] = [:]
    /// What the fetch read, for `explain(_:analyze:)`: index entries walked, records decoded.
    var entriesRead = 0
    var recordsRead = 0

    init(context: Context, includesPendingChanges: Bool = true) {
        self.context = context
        self.includesPendingChanges = includesPendingChanges
    }

    /// Whether the object `key`, whose values are `values`, satisfies `predicate`. `available`
    /// names the slots `values` holds when it was decoded in part (nil: all of them); a slot
    /// outside it is read from the object's stored record, should a key path lead back to it.
    func test(_ predicate: QueryPredicate, key: UInt64, values: [StoredValue], available: [Bool]? = nil) throws(DocStoreError) -> Bool {
        root = (key, values)
        rootSlots = available
        selfValue = .reference(key)
        defer { root = nil; rootSlots = nil }
        return try test(predicate)
    }

    /// The value of `expression` for the object `key` (a sort key).
    func value(_ expression: QueryExpression, key: UInt64, values: [StoredValue]) throws(DocStoreError) -> QueryOperand {
        root = (key, values)
        selfValue = .reference(key)
        defer { root = nil }
        return try evaluate(expression)
    }

    // MARK: - Predicates

    private func test(_ p: QueryPredicate) throws(DocStoreError) -> Bool {
        switch p {
        case .constant(let b): return b
        case .and(let ps):
            for q in ps where try !test(q) { return false }
            return true
        case .or(let ps):
            for q in ps where try test(q) { return true }
            return false
        case .not(let q): return try !test(q)
        case .comparison(let c): return try compare(c)
        }
    }

    private func compare(_ c: QueryComparison) throws(DocStoreError) -> Bool {
        let lhs = try evaluate(c.lhs)
        let rhs = try evaluate(c.rhs)
        let items: [StoredValue]
        switch lhs {
        case .scalar(let v) where c.quantifier == .direct:
            return try compareScalar(v, c.op, rhs, c.options)
        case .scalar:
            items = lhs.elements   // ANY/ALL/NONE of a single value: a collection of it (nil: none)
        case .collection(let values):
            if c.quantifier == .direct && c.op == .contains {
                // `tags CONTAINS %@`: membership (every one of several).
                return rhs.elements.allSatisfy { wanted in values.contains { QueryValueSemantics.equal($0, wanted, c.options) } }
            }
            items = values
        }
        switch c.quantifier {
        case .all:
            for v in items where try !compareScalar(v, c.op, rhs, c.options) { return false }
            return true
        case .none:
            for v in items where try compareScalar(v, c.op, rhs, c.options) { return false }
            return true
        case .any, .direct:
            for v in items where try compareScalar(v, c.op, rhs, c.options) { return true }
            return false
        }
    }

    /// One value compared with an operand, as a direct comparison of it would be (for
    /// QuerySlotFilter).
    func compareValue(_ a: StoredValue, _ op: QueryOperator, _ rhs: QueryOperand, _ options: QueryStringOptions) throws(DocStoreError) -> Bool {
        try compareScalar(a, op, rhs, options)
    }

    private func compareScalar(_ a: StoredValue, _ op: QueryOperator, _ rhs: QueryOperand,
                               _ options: QueryStringOptions) throws(DocStoreError) -> Bool {
        switch op {
        case .equal, .notEqual:
            guard case .scalar(let b) = rhs else { return op == .notEqual }
            return QueryValueSemantics.equal(a, b, options) == (op == .equal)
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard case .scalar(let b) = rhs, let order = QueryValueSemantics.order(a, b, options) else { return false }
            switch op {
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            default: return order >= 0
            }
        case .between:
            guard case .collection(let bounds) = rhs, bounds.count == 2 else {
                throw DocStoreError(.invalidQuery, "BETWEEN needs two bounds, as {low, high}; it was given \(rhs.elements.count) value(s)")
            }
            guard let low = QueryValueSemantics.order(a, bounds[0], options),
                  let high = QueryValueSemantics.order(a, bounds[1], options) else { return false }
            return low >= 0 && high <= 0
        case .in:
            switch rhs {
            case .collection(let items): return items.contains { QueryValueSemantics.equal(a, $0, options) }
            case .scalar(.string(let s)):
                guard case .string(let needle) = a else { return false }
                return QueryValueSemantics.stringMatch(.contains, s, needle, options, regex: regex)
            case .scalar(let b): return QueryValueSemantics.equal(a, b, options)
            }
        case .contains, .beginsWith, .endsWith, .like, .matches:
            guard let s = Self.text(a), case .scalar(let b) = rhs, let pattern = Self.text(b) else { return false }
            return QueryValueSemantics.stringMatch(op, s, pattern, options, regex: { pattern in
                self.regex(pattern, caseInsensitive: options.contains(.caseInsensitive))
            })
        }
    }

    private static func text(_ v: StoredValue) -> String? {
        switch v {
        case .string(let s): s
        case .url(let u): u.absoluteString
        default: nil
        }
    }

    private func regex(_ pattern: String) -> NSRegularExpression? { regex(pattern, caseInsensitive: false) }

    private func regex(_ pattern: String, caseInsensitive: Bool) -> NSRegularExpression? {
        let cacheKey = (caseInsensitive ? "i:" : "s:") + pattern
        if let cached = regexes[cacheKey] { return cached }
        let compiled = try? NSRegularExpression(pattern: "^(?:\(pattern))$", options: caseInsensitive ? [.caseInsensitive] : [])
        regexes[cacheKey] = compiled
        return compiled
    }

    // MARK: - Expressions

    func evaluate(_ e: QueryExpression) throws(DocStoreError) -> QueryOperand {
        switch e {
        case .constant(let v): return .scalar(v)
        case .list(let items):
            var out: [StoredValue] = []
            for item in items { out += try evaluate(item).elements }
            return .collection(out)
        case .evaluatedObject: return .scalar(selfValue)
        case .variable(let name):
            guard let v = variables[name] else {
                throw DocStoreError(.invalidQuery, "the variable $\(name) has no value: bind it with withSubstitutionVariables([\"\(name)\": …])")
            }
            return v
        case .keyPath(let base, let names):
            var current = try evaluate(base)
            for name in names { current = try step(current, name) }
            return current
        case .aggregate(let op, let base, let names):
            let operand = try evaluate(base)
            // A string's @count is its length in characters (Swift's `count`).
            if op == .count, names.isEmpty, case .scalar(.string(let s)) = operand { return .scalar(.int(Int64(s.count))) }
            let members = operand.elements
            if op == .count { return .scalar(.int(Int64(members.count))) }
            var values = QueryOperand.collection(members)
            for name in names { values = try step(values, name) }
            return .scalar(Self.aggregate(op, values.elements.filter { !$0.isNull }))
        case .subquery(let collection, let variable, let predicate):
            let members = try evaluate(collection).elements
            let (savedSelf, savedVariable) = (selfValue, variables[variable])
            defer {
                selfValue = savedSelf
                variables[variable] = savedVariable
            }
            var kept: [StoredValue] = []
            for member in members {
                selfValue = member
                variables[variable] = .scalar(member)
                if try test(predicate) { kept.append(member) }
            }
            return .collection(kept)
        case .arithmetic(let op, let a, let b):
            guard case .scalar(let x) = try evaluate(a), case .scalar(let y) = try evaluate(b) else {
                throw DocStoreError(.invalidQuery, "\(e): arithmetic takes single values, not collections")
            }
            return .scalar(Self.arithmetic(op, x, y))
        case .negated(let a):
            guard case .scalar(let x) = try evaluate(a) else {
                throw DocStoreError(.invalidQuery, "\(e): negation takes a single value, not a collection")
            }
            return .scalar(Self.arithmetic(.subtract, .int(0), x))
        case .conditional(let p, let a, let b):
            return try test(p) ? evaluate(a) : evaluate(b)
        case .coalesce(let a, let b):
            let v = try evaluate(a)
            if case .scalar(.null) = v { return try evaluate(b) }
            return v
        }
    }

    static func aggregate(_ op: QueryAggregate, _ values: [StoredValue]) -> StoredValue {
        switch op {
        case .count: return .int(Int64(values.count))
        case .sum, .avg:
            if op == .sum, values.allSatisfy({ if case .int = $0 { true } else { false } }) {
                var total: Int64 = 0
                for case .int(let v) in values {
                    let (sum, overflow) = total.addingReportingOverflow(v)
                    if overflow { return .double(values.compactMap(QueryValueSemantics.number).reduce(0, +)) }
                    total = sum
                }
                return .int(total)
            }
            let numbers = values.compactMap(QueryValueSemantics.number)
            let total = numbers.reduce(0, +)
            if op == .sum { return .double(total) }
            return numbers.isEmpty ? .null : .double(total / Double(numbers.count))
        case .min, .max:
            var best: StoredValue?
            for v in values {
                guard let current = best else { best = v; continue }
                if let order = QueryValueSemantics.order(v, current), op == .min ? order < 0 : order > 0 { best = v }
            }
            return best ?? .null
        }
    }

    static func arithmetic(_ op: QueryArithmetic, _ x: StoredValue, _ y: StoredValue) -> StoredValue {
        if x.isNull || y.isNull { return .null }
        if case .int(let a) = x, case .int(let b) = y, op != .divide {
            // Integer division by zero has no value (nil), where Swift would trap.
            if b == 0, op == .integerDivide || op == .remainder { return .null }
            let (r, overflow) = switch op {
            case .add: a.addingReportingOverflow(b)
            case .subtract: a.subtractingReportingOverflow(b)
            case .integerDivide: a.dividedReportingOverflow(by: b)
            case .remainder: a.remainderReportingOverflow(dividingBy: b)
            default: a.multipliedReportingOverflow(by: b)
            }
            if !overflow { return .int(r) }
        }
        guard let a = QueryValueSemantics.number(x), let b = QueryValueSemantics.number(y) else { return .null }
        switch op {
        case .add: return .double(a + b)
        case .subtract: return .double(a - b)
        case .multiply: return .double(a * b)
        case .divide: return .double(a / b)
        case .integerDivide: return b == 0 ? .null : .double((a / b).rounded(.towardZero))
        case .remainder: return b == 0 ? .null : .double(a.truncatingRemainder(dividingBy: b))
        }
    }

    // MARK: - Key paths

    /// Follows `name` from every value of `operand` (Q1: through collections, flattened).
    private func step(_ operand: QueryOperand, _ name: String) throws(DocStoreError) -> QueryOperand {
        switch operand {
        case .scalar(let v): return try step(v, name)
        case .collection(let items):
            var out: [StoredValue] = []
            for item in items { out += try step(item, name).elements }
            return .collection(out)
        }
    }

    private func step(_ v: StoredValue, _ name: String) throws(DocStoreError) -> QueryOperand {
        switch v {
        case .null: return .scalar(.null)
        case .reference(let key):
            guard let entity = context.store.model.entity(ofKey: key) else {
                throw DocStoreError(.corrupt, "a reference names key \(key), whose entity the store does not have")
            }
            if name == QueryExpression.entitiesKey { return .collection(entity.lineageNames.map { .string($0) }) }
            // The planner checked the name against the fetched entity and its sub-entities: an
            // object of an entity without it (a Cat, for a Dog's property) has nil there.
            guard let slot = entity.slotByName[name] else { return .scalar(.null) }
            let p = entity.properties[slot]
            if p.isToMany {
                return .collection(try members(of: key, p).map { .reference($0) })
            }
            let values = try values(of: key, entity, slot: slot)
            return .scalar(slot < values.count ? values[slot] : .null)
        case .document(let json):
            return try DocumentPath.step(json, name)
        default:
            throw DocStoreError(.invalidQuery, "cannot follow \"\(name)\" from the value \(v)", property: name)
        }
    }

    /// The values of the object `key`: the tested object's at hand, or as `objectValues` reads them.
    private func values(of key: UInt64, _ entity: EntityInfo, slot: Int) throws(DocStoreError) -> [StoredValue] {
        if let root, root.key == key, rootSlots.map({ slot < $0.count && $0[slot] }) ?? true { return root.values }
        return try objectValues(key, entity)
    }

    /// The values of the object `key` as this fetch sees them: the context's (unsaved ones
    /// included) when pending changes count and the context holds the object, else the stored
    /// record's (nulls when there is none).
    func objectValues(_ key: UInt64, _ entity: EntityInfo) throws(DocStoreError) -> [StoredValue] {
        if includesPendingChanges, let ref = context.registry[key] {
            let object = ref.takeUnretainedValue()
            try context.fulfill(object)
            return object.visibleValues
        }
        guard let bytes = try context.storedRecord(key, entity) else { return entity.defaults.map { _ in .null } }
        var values = entity.defaults
        _ = try RecordCoding.decode(bytes, key: key, into: &values, slotForField: entity.slotForField)
        return values
    }

    /// The members of a to-many relationship of the object `key`, in the same way.
    func members(of key: UInt64, _ p: PropertyInfo) throws(DocStoreError) -> [UInt64] {
        if includesPendingChanges, let ref = context.registry[key] {
            return try context.members(of: ref.takeUnretainedValue(), p)
        }
        return try context.storedMembers(of: key, p)
    }
}
