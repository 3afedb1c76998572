// Context+Dictionaries: dictionary results — Core Data's dictionary result type with
// propertiesToFetch, returnsDistinctResults and propertiesToGroupBy — computed from the matches
// of the request's plan without making objects.
//
//   D1  Every property and group-by key path is checked before anything is read: it must
//       resolve in the schema and reach one value (no to-many step); sum and average need a
//       number attribute (or a document field, checked per value); with groups or aggregates,
//       each plain property must be one of the group-by key paths. Errors are `.invalidQuery`.
//   D2  Matches are found, filtered and ordered as `fetch` would (pending changes included by
//       default); the window (offset, limit) applies to the dictionaries, after grouping and
//       after distinct.
//   D3  Without groups or aggregates: one dictionary per match. With them: one per group, in
//       the order groups first appear among the ordered matches (all matches are one group
//       when there are aggregates but no group-by key paths — even when there are no matches).
//   D4  Values are plain Swift values (as `value(forKey:)` gives them); a to-one relationship is
//       its target's ObjectID; a nil value leaves its key out, as in Core Data.

import Foundation
internal import DocStoreEngine

extension Context {
    /// The values `request` asks for (`propertiesToFetch`), one dictionary per matching object
    /// or, with `propertiesToGroupBy` or aggregates, one per group.
    ///
    /// ```swift
    /// var request = FetchRequest<Note>(sortDescriptors: [SortKey("folder.name")])
    /// request.propertiesToGroupBy = ["folder.name"]
    /// request.propertiesToFetch = [FetchProperty("folder.name", as: "folder"), .count(as: "notes")]
    /// for row in try context.fetchDictionaries(request) { print(row["folder"] ?? "none", row["notes"] ?? 0) }
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/invalidQuery`` (D1) before reading anything; the errors of
    ///   ``fetch(_:)``.
    public func fetchDictionaries<T: ManagedObject>(_ request: FetchRequest<T>) throws(DocStoreError) -> [[String: Any]] {
        let (plan, evaluator) = try prepare(request)
        let entity = plan.entity

        // D1
        var properties = request.propertiesToFetch
        if properties.isEmpty {
            properties = request.propertiesToGroupBy.isEmpty
                ? entity.properties.filter { !$0.isToMany }.map { FetchProperty($0.name) }
                : request.propertiesToGroupBy.map { FetchProperty($0) }
        }
        var columns: [(property: FetchProperty, expression: QueryExpression)] = []
        for p in properties { columns.append((p, try column(p, of: entity))) }
        var groupBy: [QueryExpression] = []
        for path in request.propertiesToGroupBy { groupBy.append(try column(FetchProperty(path), of: entity)) }
        let grouped = !groupBy.isEmpty || columns.contains { $0.property.function != nil }
        if grouped {
            for (p, _) in columns where p.function == nil && !request.propertiesToGroupBy.contains(p.keyPath) {
                throw DocStoreError(.invalidQuery, "\(p.keyPath) is fetched with groups or aggregates, so it must be one of propertiesToGroupBy (or an aggregate)",
                                    entity: entity.name, property: p.keyPath)
            }
        }

        // D2
        let rows = try matches(plan, evaluator, request, ordered: true, wholeRecords: true, windowed: false)
        func value(_ e: QueryExpression, _ row: QueryRow) throws(DocStoreError) -> StoredValue {
            var values = row.values ?? []
            if row.values == nil, let e = store.model.entity(ofKey: row.key) { values = try evaluator.objectValues(row.key, e) }
            switch try evaluator.value(e, key: row.key, values: values) {
            case .scalar(let v): return v
            case .collection(let vs): return vs.first ?? .null
            }
        }

        // D3
        var results: [[StoredValue]] = []
        if !grouped {
            results.reserveCapacity(rows.count)
            for row in rows {
                var out: [StoredValue] = []
                for (_, e) in columns { out.append(try value(e, row)) }
                results.append(out)
            }
        } else {
            var groupIndex: [[StoredValue]: Int] = [:]
            var groups: [(key: [StoredValue], aggregates: [AggregateState])] = []
            let fresh = columns.map { AggregateState($0.property.function) }
            if groupBy.isEmpty {
                groups.append(([], fresh))
                groupIndex[[]] = 0
            }
            for row in rows {
                var key: [StoredValue] = []
                for e in groupBy { key.append(try value(e, row)) }
                let g: Int
                if let known = groupIndex[key] {
                    g = known
                } else {
                    g = groups.count
                    groupIndex[key] = g
                    groups.append((key, fresh))
                }
                for (i, c) in columns.enumerated() where c.property.function != nil {
                    try groups[g].aggregates[i].add(try value(c.expression, row), c.property)
                }
            }
            for group in groups {
                results.append(columns.enumerated().map { i, c in
                    if c.property.function != nil { return group.aggregates[i].result }
                    return request.propertiesToGroupBy.firstIndex(of: c.property.keyPath).map { group.key[$0] } ?? .null
                })
            }
        }
        if request.returnsDistinctResults {
            var seen = Set<[StoredValue]>()
            results = results.filter { seen.insert($0).inserted }
        }
        if request.fetchOffset > 0 { results = Array(results.dropFirst(request.fetchOffset)) }
        if request.fetchLimit > 0, results.count > request.fetchLimit { results = Array(results.prefix(request.fetchLimit)) }

        // D4
        return results.map { values in
            var dictionary: [String: Any] = [:]
            for (i, c) in columns.enumerated() {
                switch values[i] {
                case .null: continue
                case .reference(let key):
                    if let target = store.model.entity(ofKey: key) {
                        dictionary[c.property.name] = ObjectID(store: store.identifier, entity: target.name, key: key)
                    }
                case let v: dictionary[c.property.name] = v.anyValue
                }
            }
            return dictionary
        }
    }

    /// D1 for one property: its expression, checked against the schema.
    private func column(_ p: FetchProperty, of entity: EntityInfo) throws(DocStoreError) -> QueryExpression {
        let e = try PredicateParser.parseExpression(p.keyPath)
        let type = try QueryPlanner.check(e, self: .object(entity), variables: [:], model: store.model)
        switch type {
        case .objects, .values:
            throw DocStoreError(.invalidQuery, "cannot fetch \(p.keyPath): it reaches a to-many relationship (many values)", entity: entity.name, property: p.keyPath)
        default: break
        }
        if p.function == .sum || p.function == .average, case .keyPath(.evaluatedObject, let names) = e,
           let attribute = attribute(at: names, from: entity), !attribute.type.isNumber {
            throw DocStoreError(.invalidQuery, "cannot take the \(p.function?.rawValue ?? "") of \(p.keyPath), a \(attribute.type) attribute: it needs numbers",
                                entity: entity.name, property: p.keyPath)
        }
        return e
    }

    /// The attribute a key path ends at (through to-one relationships), if it ends at one.
    private func attribute(at names: [String], from entity: EntityInfo) -> AttributeDescription? {
        var current = entity
        for (i, name) in names.enumerated() {
            guard let p = current.property(named: name) else { return nil }
            if i == names.count - 1 { return p.attribute }
            guard p.isToOne, p.destination >= 0, p.destination < store.model.entities.count else { return nil }
            current = store.model.entities[p.destination]
        }
        return nil
    }
}

/// One aggregate of one group, as values arrive.
struct AggregateState {
    let function: FetchProperty.Function?
    var count = 0
    var integerSum: Int64 = 0
    var integersOnly = true
    var sum: Double = 0
    var best: StoredValue = .null

    init(_ function: FetchProperty.Function?) { self.function = function }

    mutating func add(_ v: StoredValue, _ p: FetchProperty) throws(DocStoreError) {
        guard !v.isNull, let function else { return }
        switch function {
        case .count:
            count += 1
        case .sum, .average:
            guard let d = QueryValueSemantics.number(v), !v.isBool else {
                throw DocStoreError(.invalidQuery, "cannot take the \(function.rawValue) of \(p.keyPath): \(v) is not a number", property: p.keyPath)
            }
            count += 1
            sum += d
            if case .int(let i) = v, integersOnly {
                let (total, overflow) = integerSum.addingReportingOverflow(i)
                if overflow { integersOnly = false } else { integerSum = total }
            } else {
                integersOnly = false
            }
        case .min, .max:
            count += 1
            if best.isNull { best = v; return }
            guard let c = QueryValueSemantics.order(v, best) else { return }
            if (function == .min && c < 0) || (function == .max && c > 0) { best = v }
        }
    }

    var result: StoredValue {
        switch function {
        case nil: .null
        case .count: .int(Int64(count))
        case .sum: integersOnly ? .int(integerSum) : .double(sum)
        case .average: count == 0 ? .null : .double(sum / Double(count))
        case .min, .max: best
        }
    }
}
