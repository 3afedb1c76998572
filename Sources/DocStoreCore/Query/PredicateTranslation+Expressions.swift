// PredicateTranslation+Expressions: each Foundation PredicateExpressions kind DocStore runs, and
// what it becomes in the query representation (see PredicateTranslation.swift):
//
//   Variable, Value, NilLiteral, KeyPath            SELF or a bound variable, a constant, nil, a key path
//   Equal, NotEqual, Comparison                     ==, !=, <, <=, >, >=
//   Conjunction, Disjunction, Negation              AND, OR, NOT
//   Arithmetic, FloatDivision, UnaryMinus           + - * /, negation
//   IntDivision, IntRemainder                       DIV, MOD
//   Conditional, NilCoalesce, OptionalFlatMap,      a ? b : c, a ?? b, optional chaining
//   ForcedUnwrap
//   SequenceContains                                x IN constants, or collection CONTAINS x
//   CollectionContainsCollection, SequenceStartsWith  CONTAINS, BEGINSWITH
//   SequenceContainsWhere, SequenceAllSatisfy,      SUBQUERY(…).@count > 0, == 0 with NOT,
//   Filter                                          and SUBQUERY(…) as a collection
//   SequenceMaximum, SequenceMinimum                @max, @min
//   RangeExpressionContains (Range, ClosedRange)    BETWEEN, or >= and <
//   TypeCheck, ConditionalCast, ForceCast           ANY x.@entities == "Dog" for a model class
//                                                   (x ? : nil for a cast); for values, what the
//                                                   static types decide (nil check, or constant)

import Foundation

extension PredicateExpressions.Variable: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        guard let bound = t.bindings[key] else { throw PredicateTranslator.unsupported(self, "a variable bound outside the predicate") }
        return .expression(bound)
    }
}

extension PredicateExpressions.Value: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        if let c = value as? Character { return .expression(.constant(.string(String(c)))) }
        guard let e = QueryArgument.expression(value) else {
            throw PredicateTranslator.unsupported(self, "a constant of type \(Output.self)")
        }
        return .expression(e)
    }
}

extension PredicateExpressions.NilLiteral: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode { .expression(.constant(.null)) }
}

extension PredicateExpressions.KeyPath: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        let base = try t.expression(root)
        let path: AnyKeyPath = keyPath
        if let model = Root.Output.self as? ManagedObject.Type {
            guard let name = model._$keyPathNames[path] else {
                throw PredicateTranslator.unsupported(self, "\(path) is not a persisted property of \(model)")
            }
            // `object.objectID` stands for the object itself (a reference, as an object constant is).
            if name == "objectID" { return .expression(base) }
            return .expression(appending(name, to: base))
        }
        // `count` and `isEmpty` of any collection (strings included) are recognized by Foundation.
        switch kind {
        case .collectionCount?: return .expression(.aggregate(.count, base, []))
        case .collectionIsEmpty?:
            return .predicate(.comparison(QueryComparison(.aggregate(.count, base, []), .equal, .constant(.int(0)))))
        case .some: throw PredicateTranslator.unsupported(self, "first and last of a collection have no order in the store")
        case nil: break
        }
        // A stored property of a Codable value (a document): its key path prints its name.
        let text = path.debugDescription
        if let dot = text.lastIndex(of: "."), !text.contains("<computed") {
            let name = String(text[text.index(after: dot)...]).trimmingCharacters(in: CharacterSet(charactersIn: "?!"))
            if !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
                return .expression(appending(name, to: base))
            }
        }
        throw PredicateTranslator.unsupported(self, "the key path \(text) names no stored property")
    }

}

/// A key path step after `base` (`a.b` + `c` is `a.b.c`).
private func appending(_ name: String, to base: QueryExpression) -> QueryExpression {
    if case .keyPath(let b, let names) = base { return .keyPath(b, names + [name]) }
    return .keyPath(base, [name])
}

// MARK: - Comparisons and logic

/// `lhs op rhs`, simplifying a condition compared with a Bool constant.
private func comparison(_ t: inout PredicateTranslator, _ lhs: Any, _ op: QueryOperator, _ rhs: Any) throws(DocStoreError) -> QueryNode {
    let (l, r) = (try t.node(lhs), try t.node(rhs))
    switch (l, r) {
    case (.predicate(let p), .expression(.constant(.bool(let b)))), (.expression(.constant(.bool(let b))), .predicate(let p)):
        if op == .equal { return .predicate(b ? p : .not(p)) }
        if op == .notEqual { return .predicate(b ? .not(p) : p) }
    default: break
    }
    return .predicate(.comparison(QueryComparison(try t.expression(lhs), op, try t.expression(rhs))))
}

extension PredicateExpressions.Equal: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode { try comparison(&t, lhs, .equal, rhs) }
}

extension PredicateExpressions.NotEqual: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode { try comparison(&t, lhs, .notEqual, rhs) }
}

extension PredicateExpressions.Comparison: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        let operation: QueryOperator = switch op {
        case .lessThan: .less
        case .lessThanOrEqual: .lessOrEqual
        case .greaterThan: .greater
        case .greaterThanOrEqual: .greaterOrEqual
        @unknown default: throw PredicateTranslator.unsupported(self, "a comparison operator newer than this DocStore")
        }
        return try comparison(&t, lhs, operation, rhs)
    }
}

/// `lhs AND rhs` or `lhs OR rhs`, nested ones of the same kind flattened into one list.
private func junction(_ t: inout PredicateTranslator, _ lhs: Any, _ rhs: Any, or: Bool) throws(DocStoreError) -> QueryNode {
    var terms: [QueryPredicate] = []
    for side in [try t.predicate(lhs), try t.predicate(rhs)] {
        switch (side, or) {
        case (.and(let inner), false), (.or(let inner), true): terms += inner
        default: terms.append(side)
        }
    }
    return .predicate(or ? .or(terms) : .and(terms))
}

extension PredicateExpressions.Conjunction: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode { try junction(&t, lhs, rhs, or: false) }
}

extension PredicateExpressions.Disjunction: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode { try junction(&t, lhs, rhs, or: true) }
}

extension PredicateExpressions.Negation: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode { .predicate(.not(try t.predicate(wrapped))) }
}

// MARK: - Arithmetic and optionals

extension PredicateExpressions.Arithmetic: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        let operation: QueryArithmetic = switch op {
        case .add: .add
        case .subtract: .subtract
        case .multiply: .multiply
        @unknown default: throw PredicateTranslator.unsupported(self, "an arithmetic operator newer than this DocStore")
        }
        return .expression(.arithmetic(operation, try t.expression(lhs), try t.expression(rhs)))
    }
}

extension PredicateExpressions.FloatDivision: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        .expression(.arithmetic(.divide, try t.expression(lhs), try t.expression(rhs)))
    }
}

extension PredicateExpressions.IntDivision: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        .expression(.arithmetic(.integerDivide, try t.expression(lhs), try t.expression(rhs)))
    }
}

extension PredicateExpressions.IntRemainder: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        .expression(.arithmetic(.remainder, try t.expression(lhs), try t.expression(rhs)))
    }
}

extension PredicateExpressions.UnaryMinus: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode { .expression(.negated(try t.expression(wrapped))) }
}

extension PredicateExpressions.Conditional: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        let condition = try t.predicate(test)
        let (a, b) = (try t.node(trueBranch), try t.node(falseBranch))
        if case .predicate(let p) = a, case .predicate(let q) = b {
            return .predicate(.or([.and([condition, p]), .and([.not(condition), q])]))
        }
        return .expression(.conditional(condition, try t.expression(trueBranch), try t.expression(falseBranch)))
    }
}

extension PredicateExpressions.NilCoalesce: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        .expression(.coalesce(try t.expression(lhs), try t.expression(rhs)))
    }
}

extension PredicateExpressions.OptionalFlatMap: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        // `a?.b`: the closure's variable stands for `a`; a nil `a` makes every step after it nil.
        t.bindings[variable.key] = try t.expression(wrapped)
        return try t.node(transform)
    }
}

extension PredicateExpressions.ForcedUnwrap: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode { try t.node(inner) }
}

// MARK: - Sequences and strings

extension PredicateExpressions.SequenceContains: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        let collection = try t.expression(sequence)
        let member = try t.expression(element)
        if case .list = collection { return .predicate(.comparison(QueryComparison(member, .in, collection))) }
        return .predicate(.comparison(QueryComparison(collection, .contains, member)))
    }
}

extension PredicateExpressions.CollectionContainsCollection: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        .predicate(.comparison(QueryComparison(try t.expression(base), .contains, try t.expression(other))))
    }
}

extension PredicateExpressions.SequenceStartsWith: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        .predicate(.comparison(QueryComparison(try t.expression(base), .beginsWith, try t.expression(prefix))))
    }
}

/// `SUBQUERY(sequence, $v, test)` for a closure over the sequence's members.
private func subquery(_ t: inout PredicateTranslator, _ sequence: Any, _ variable: PredicateExpressions.VariableID, _ test: Any, negated: Bool = false) throws(DocStoreError) -> QueryExpression {
    let collection = try t.expression(sequence)
    let name = t.newVariable()
    t.bindings[variable] = .variable(name)
    let condition = try t.predicate(test)
    return .subquery(collection, variable: name, negated ? .not(condition) : condition)
}

extension PredicateExpressions.SequenceContainsWhere: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        let matching = try subquery(&t, sequence, variable.key, test)
        return .predicate(.comparison(QueryComparison(.aggregate(.count, matching, []), .greater, .constant(.int(0)))))
    }
}

extension PredicateExpressions.SequenceAllSatisfy: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        let failing = try subquery(&t, sequence, variable.key, test, negated: true)
        return .predicate(.comparison(QueryComparison(.aggregate(.count, failing, []), .equal, .constant(.int(0)))))
    }
}

extension PredicateExpressions.Filter: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        .expression(try subquery(&t, sequence, variable.key, filter))
    }
}

extension PredicateExpressions.SequenceMaximum: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode { .expression(.aggregate(.max, try t.expression(elements), [])) }
}

extension PredicateExpressions.SequenceMinimum: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode { .expression(.aggregate(.min, try t.expression(elements), [])) }
}

// MARK: - Ranges

extension PredicateExpressions.RangeExpressionContains: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        let value = try t.expression(element)
        let (lower, upper, closed) = try bounds(&t)
        if closed { return .predicate(.comparison(QueryComparison(value, .between, .list([lower, upper])))) }
        return .predicate(.and([
            .comparison(QueryComparison(value, .greaterOrEqual, lower)),
            .comparison(QueryComparison(value, .less, upper)),
        ]))
    }

    /// The range's bounds: from a `lower..<upper` or `lower...upper` expression, or a constant range.
    private func bounds(_ t: inout PredicateTranslator) throws(DocStoreError) -> (QueryExpression, QueryExpression, Bool) {
        let mirror = Mirror(reflecting: range)
        let typeName = _typeName(type(of: range as Any), qualified: false)
        if let lower = mirror.descendant("lower"), let upper = mirror.descendant("upper") {
            return (try t.expression(lower), try t.expression(upper), typeName.hasPrefix("ClosedRange"))
        }
        // A constant range: Value<ClosedRange<…>> or Value<Range<…>>.
        if let value = mirror.descendant("value") {
            let inner = Mirror(reflecting: value)
            if let lower = inner.descendant("lowerBound").flatMap(QueryArgument.expression),
               let upper = inner.descendant("upperBound").flatMap(QueryArgument.expression) {
                return (lower, upper, _typeName(type(of: value), qualified: false).hasPrefix("ClosedRange"))
            }
        }
        throw PredicateTranslator.unsupported(range, "a range DocStore cannot read")
    }
}

// MARK: - Casts

/// Whether the class `type` is `ancestor` or inherits from it.
private func isSubclass(_ type: Any.Type, of ancestor: Any.Type) -> Bool {
    var current: AnyClass? = type as? AnyClass
    while let c = current {
        if ObjectIdentifier(c) == ObjectIdentifier(ancestor) { return true }
        current = _getSuperclass(c)
    }
    return false
}

/// Whether `value` (of static type `from`) is a `to`: for a model class, whether the object's
/// entity is `to`'s or inherits from it (a nil object is not); for values, what the types say —
/// the same type always, its optional when not nil, another type never (Swift's `as?` between
/// value types does not convert).
private func typeCheck(_ value: QueryExpression, from: Any.Type, to: Any.Type, _ e: Any) throws(DocStoreError) -> QueryPredicate {
    let unwrapped = (from as? OptionalType.Type)?.wrappedType ?? from
    let notNil = QueryPredicate.comparison(QueryComparison(value, .notEqual, .constant(.null)))
    if let model = to as? ManagedObject.Type {
        // An upcast (a Dog is an Animal) holds for every object.
        if isSubclass(unwrapped, of: to) { return unwrapped == from ? .constant(true) : notNil }
        let name = model._$entityDescription?.name ?? _typeName(model, qualified: false)
        return .comparison(QueryComparison(appending(QueryExpression.entitiesKey, to: value), .equal, .constant(.string(name)), quantifier: .any))
    }
    if unwrapped == to { return unwrapped == from ? .constant(true) : notNil }
    if unwrapped is ManagedObject.Type || to == Any.self || to is AnyObject.Type {
        throw PredicateTranslator.unsupported(e, "a cast from \(from) to \(to)")
    }
    return .constant(false)
}

extension PredicateExpressions.TypeCheck: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        .predicate(try typeCheck(try t.expression(input), from: Input.Output.self, to: Desired.self, self))
    }
}

extension PredicateExpressions.ConditionalCast: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        let value = try t.expression(input)
        switch try typeCheck(value, from: Input.Output.self, to: Desired.self, self) {
        case .constant(true): return .expression(value)
        case .constant(false): return .expression(.constant(.null))
        case let check: return .expression(.conditional(check, value, .constant(.null)))
        }
    }
}

extension PredicateExpressions.ForceCast: QueryTranslatable {
    func translate(_ t: inout PredicateTranslator) throws(DocStoreError) -> QueryNode {
        let value = try t.expression(input)
        switch try typeCheck(value, from: Input.Output.self, to: Desired.self, self) {
        case .constant(true): return .expression(value)
        case .constant(false): throw PredicateTranslator.unsupported(self, "a cast from \(Input.Output.self) to \(Desired.self) that always fails")
        // An object of another entity has nothing to compare: as nil, every comparison is false.
        case let check: return .expression(.conditional(check, value, .constant(.null)))
        }
    }
}
