// QueryPredicate+Evaluate: testing one object in memory — NSPredicate's evaluate(with:) — with
// the same checks and evaluator a fetch uses, so an object matches here exactly when a fetch of
// its entity (with pending changes) would return it.

extension QueryPredicate {
    /// Whether `object` satisfies the predicate, with its current (unsaved) values.
    ///
    /// - Throws: ``DocStoreError/Code/wrongContext`` for an object not inserted into a context;
    ///   ``DocStoreError/Code/invalidQuery`` for a key path the entity does not have or an
    ///   unbound variable.
    public func evaluate(with object: ManagedObject) throws(DocStoreError) -> Bool {
        guard let context = object.context, let entity = object.entityInfo, object.key != 0 else {
            throw DocStoreError(.wrongContext, "evaluate(with:) needs an object inserted into a context; \(object) is in none")
        }
        try QueryPlanner.check(self, self: .object(entity), variables: [:], model: context.store.model)
        try context.fulfill(object)
        return try QueryEvaluator(context: context).test(self, key: object.key, values: object.visibleValues)
    }
}
