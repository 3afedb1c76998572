// Context+ResultsPlacement: where one object belongs in a fetch's sorted results, as the context
// sees it now (unsaved changes included) — what a results controller needs to update its list
// from a change to one object instead of fetching again. The order is the fetch's own (F3: the
// sort keys, then the primary key), so a list kept this way is the list a fetch would return.

extension Context {
    /// A fetch request made ready to place objects: its plan and an evaluator over this
    /// context's current values.
    struct ResultsPlacement {
        let plan: QueryPlan
        let evaluator: QueryEvaluator
    }

    func resultsPlacement<T: ManagedObject>(_ request: FetchRequest<T>) throws(DocStoreError) -> ResultsPlacement {
        let (plan, evaluator) = try prepare(request)
        return ResultsPlacement(plan: plan, evaluator: evaluator)
    }

    /// The sort values of the object `key` if the request's results hold it now (it exists, is
    /// not deleted, is of a fetched kind and matches the predicate); nil otherwise.
    func sortValuesIfFetched(_ key: UInt64, _ placement: ResultsPlacement) throws(DocStoreError) -> [StoredValue]? {
        guard placement.plan.kinds.contains(PrimaryKey.entity(of: key)), let entity = store.model.entity(ofKey: key) else { return nil }
        if let ref = registry[key] {
            let object = ref.takeUnretainedValue()
            guard !object.isDeleted else { return nil }
        } else if try storedRecord(key, entity) == nil {
            return nil
        }
        let values = try placement.evaluator.objectValues(key, entity)
        if let p = placement.plan.predicate, !(try placement.evaluator.test(p, key: key, values: values)) { return nil }
        return try sortValues(placement.plan, placement.evaluator, key, values)
    }

    /// Where an object with sort values `values` and key `key` goes among `count` keys sorted in
    /// the request's order (`keyAt(i)` the i-th, the object itself not among them): a binary
    /// search reading the values of about log2(count) of them. Nil when one of those is no
    /// longer in the results (the list is stale).
    func insertionIndex(of key: UInt64, values: [StoredValue], count: Int, keyAt: (Int) -> UInt64,
                        _ placement: ResultsPlacement) throws(DocStoreError) -> Int? {
        var low = 0, high = count
        while low < high {
            let mid = (low + high) / 2
            let probe = keyAt(mid)
            guard let probeValues = try sortValuesIfFetched(probe, placement) else { return nil }
            if Self.compare(probeValues, probe, values, key, placement.plan) < 0 { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
