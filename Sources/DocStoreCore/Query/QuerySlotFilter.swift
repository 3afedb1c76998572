// QuerySlotFilter: a predicate compiled to value slots, for the common shape — a comparison, or an
// AND of comparisons, each of a stored attribute or to-one of the object itself with constants
// (`isRead == NO AND createdAt > %@`). Testing a candidate then reads its slots directly instead
// of walking the expression tree and resolving names per candidate. Each comparison is decided by
// the evaluator's own scalar comparison, so the semantics (Q1–Q5) are the evaluator's exactly;
// any other shape compiles to nil and the evaluator tests it.

struct QuerySlotFilter {
    /// One comparison: the value in `slot` against a constant (or a list of them).
    struct Comparison {
        let slot: Int
        let op: QueryOperator
        let rhs: QueryOperand
        let options: QueryStringOptions
    }

    private let tests: [Comparison]

    /// The comparisons, all of which a match passes.
    var comparisons: [Comparison] { tests }

    /// The filter for `predicate` on objects of `entity` (and its sub-entities, whose slots for
    /// inherited properties are the same), or nil when the predicate has another shape.
    init?(_ predicate: QueryPredicate, entity: EntityInfo) {
        let conjuncts: [QueryPredicate]
        switch predicate {
        case .and(let ps): conjuncts = ps
        case .comparison: conjuncts = [predicate]
        default: return nil
        }
        var tests: [Comparison] = []
        for q in conjuncts {
            guard case .comparison(let c) = q, c.quantifier == .direct,
                  case .keyPath(.evaluatedObject, let names) = c.lhs, names.count == 1,
                  let p = entity.property(named: names[0]), p.isToOne || p.attribute.map({ a in
                      if case .codable = a.type { false } else { true }
                  }) == true else { return nil }
            let rhs: QueryOperand
            switch c.rhs {
            case .constant(let v): rhs = .scalar(v)
            case .list(let items):
                // As the evaluator reads a list: each item's elements (a nil item has none).
                var values: [StoredValue] = []
                for item in items {
                    guard case .constant(let v) = item else { return nil }
                    values += QueryOperand.scalar(v).elements
                }
                rhs = .collection(values)
            default: return nil
            }
            tests.append(Comparison(slot: p.slot, op: c.op, rhs: rhs, options: c.options))
        }
        self.tests = tests
    }

    /// Whether an object with these values (every slot the predicate reads decoded) matches.
    func matches(_ values: [StoredValue], _ evaluator: QueryEvaluator) throws(DocStoreError) -> Bool {
        for t in tests {
            guard t.slot < values.count, try evaluator.compareValue(values[t.slot], t.op, t.rhs, t.options) else { return false }
        }
        return true
    }
}
