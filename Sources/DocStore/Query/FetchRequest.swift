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
    }
}
