// Context+Fetch: every object of an entity, its sub-entities included (entity inheritance: a
// fetch of the parent returns the children too) — the shorthand for a FetchRequest with no
// predicate (Context+Query.swift runs both). Objects already in the context keep their values
// (and their unsaved changes); objects inserted and not saved are included, deleted ones are not.

extension Context {
    /// Every object of `type`'s entity and its sub-entities, in primary-key order (objects
    /// inserted and not saved yet included).
    ///
    /// ```swift
    /// let notes = try context.fetch(Note.self)
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/unknownProperty`` if the class is not in the store's schema;
    ///   ``DocStoreError/Code/storage``, ``DocStoreError/Code/corrupt``.
    public func fetch<T: ManagedObject>(_ type: T.Type) throws(DocStoreError) -> [T] {
        try fetch(FetchRequest<T>())
    }

    /// Every object of the entity `entityName` and its sub-entities.
    public func fetch(entityName: String) throws(DocStoreError) -> [ManagedObject] {
        try fetch(FetchRequest<ManagedObject>(entityName: entityName))
    }
}
