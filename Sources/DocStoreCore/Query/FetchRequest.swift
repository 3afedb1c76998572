// FetchRequest: what to fetch — Core Data's NSFetchRequest, SwiftData's FetchDescriptor. A plain
// value: a context plans and runs it (Context+Query.swift).

/// A description of objects to fetch: an entity, a predicate, an order and a window.
///
/// ```swift
/// var request = FetchRequest<Note>(predicate: try QueryPredicate(format: "isRead == NO"))
/// request.sortDescriptors = [SortKey("createdAt", ascending: false)]
/// request.fetchLimit = 20
/// let unread = try context.fetch(request)
/// ```
public struct FetchRequest<Result: ManagedObject>: Sendable {
    /// The entity; nil means `Result`'s entity (give it for plain `ManagedObject` results).
    public var entityName: String?
    /// Which objects; nil means all.
    public var predicate: QueryPredicate?
    /// The order, first key first; ties keep primary-key order.
    public var sortDescriptors: [SortKey]
    /// At most this many objects (0: no limit).
    public var fetchLimit: Int
    /// Skip this many objects of the ordered result first.
    public var fetchOffset: Int
    /// Whether unsaved inserts, changes and deletes of the context count (default true, as in
    /// Core Data). When false, objects are chosen and ordered by their saved values.
    public var includesPendingChanges: Bool
    /// Whether objects of sub-entities are included (default true).
    public var includesSubentities: Bool
    /// Whether fetched objects come back as faults (default false). DocStore reads each match's
    /// record to test it, so it fills the objects by default; with true each fault holds its
    /// record, read ahead with the others, and is filled when first touched (from that record
    /// if no save came in between, else from the store) — Core Data's default,
    /// useful when objects are fetched only to be related or deleted.
    public var returnsObjectsAsFaults: Bool
    /// Whether property values are fetched at all (default true). With false the objects are
    /// faults and nothing is cached for them: each reads its record when touched.
    public var includesPropertyValues: Bool
    /// Relationship key paths whose objects are loaded with the results (`["folder",
    /// "tags"]`, `["folder.notes"]`): one pass over the relationship per level for all the
    /// results together, so walking them later costs no read per object (no N+1).
    public var relationshipKeyPathsForPrefetching: [String]
    /// Dictionary results (``Context/fetchDictionaries(_:)``): the values each result has;
    /// empty means every attribute (or, with groups, the group-by key paths).
    public var propertiesToFetch: [FetchProperty]
    /// Dictionary results: leave out results equal to an earlier one.
    public var returnsDistinctResults: Bool
    /// Dictionary results: one result per distinct combination of these key paths' values, in
    /// the order the groups first appear in the sorted matches; aggregates in
    /// `propertiesToFetch` are computed per group.
    public var propertiesToGroupBy: [String]
    /// Keyset pagination: only the objects after this one in the request's order (its sort
    /// keys, then primary key), so "the next page" reads from where the last one ended instead
    /// of skipping an offset. See ``after(_:)``.
    public var fetchAfter: ObjectID?
    /// A `#Predicate` or `SortDescriptor` that could not be translated: thrown when the request
    /// is run (initializers of a plain value do not throw, as SwiftData's FetchDescriptor's).
    var deferredError: DocStoreError?

    public init(entityName: String? = nil, predicate: QueryPredicate? = nil, sortDescriptors: [SortKey] = [],
                fetchLimit: Int = 0, fetchOffset: Int = 0) {
        self.entityName = entityName
        self.predicate = predicate
        self.sortDescriptors = sortDescriptors
        self.fetchLimit = fetchLimit
        self.fetchOffset = fetchOffset
        self.includesPendingChanges = true
        self.includesSubentities = true
        self.returnsObjectsAsFaults = false
        self.includesPropertyValues = true
        self.relationshipKeyPathsForPrefetching = []
        self.propertiesToFetch = []
        self.returnsDistinctResults = false
        self.propertiesToGroupBy = []
    }

    /// The same request for the objects after `object` in its order: the next page.
    ///
    /// ```swift
    /// var page = FetchRequest<Note>(sortDescriptors: [SortKey("createdAt", ascending: false)], fetchLimit: 20)
    /// let first = try context.fetch(page)
    /// if let last = first.last {
    ///     let second = try context.fetch(page.after(last))
    /// }
    /// ```
    public func after(_ object: ManagedObject) -> FetchRequest {
        var next = self
        next.fetchAfter = object.objectID
        if object.objectID == nil, next.deferredError == nil {
            next.deferredError = DocStoreError(.invalidQuery, "the object to fetch after has no object ID yet: insert it into a context first")
        }
        return next
    }
}
