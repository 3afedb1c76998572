// BatchRequests: what a batch operation is asked to do — Core Data's NSBatchInsertRequest,
// NSBatchUpdateRequest and NSBatchDeleteRequest — and what it returns. Plain values: the store
// runs them (Store+BatchInsert, Store+BatchUpdate, Store+BatchDelete) in one engine write
// transaction each, without making managed objects.
//
// Unlike Core Data's, DocStore's batch operations keep the object graph whole: inverses are
// maintained, delete rules (nullify, cascade, deny) are applied through the links, validation
// applies, indexes and uniqueness constraints stay exact, and each batch is one transaction of
// persistent history that live contexts merge like any save.

import Foundation

/// What a batch operation reports (Core Data's `resultType`).
public enum BatchResultType: Sendable, Hashable {
    /// Only whether it succeeded (``BatchResult/count`` is still set).
    case statusOnly
    /// How many objects it inserted, updated or deleted.
    case count
    /// Their object IDs too, in primary-key order.
    case objectIDs
}

/// The outcome of a batch operation (Core Data's `NSBatchInsertResult`,
/// `NSBatchUpdateResult`, `NSBatchDeleteResult`).
public struct BatchResult: Sendable {
    /// How many objects the request itself inserted, updated or deleted. Objects deleted by a
    /// cascade rule, and related objects whose inverse relationship changed, are not counted;
    /// ``transaction`` lists them too.
    public let count: Int
    /// The IDs of the request's own objects, in primary-key order, when its result type is
    /// ``BatchResultType/objectIDs``; empty otherwise.
    public let objectIDs: [ObjectID]
    /// The history token of the commit; nil when the batch changed nothing (and wrote nothing).
    public let token: HistoryToken?
    let recorded: RecordedTransaction?
    let model: StoreModel
    let storeID: UUID

    /// The transaction the batch committed, as persistent history holds it: every object it
    /// inserted, updated or deleted, related objects included. Pass it to
    /// ``Context/mergeChanges(from:)`` or ``Context/mergeChanges(fromRemoteContextSave:into:)``
    /// to bring contexts up to date (contexts that merge automatically already are). Built
    /// when asked; nil when the batch changed nothing.
    public var transaction: HistoryTransaction? {
        guard let recorded, let token else { return nil }
        return HistoryTransaction(recorded, lsn: token.value, origin: 0, model: model, storeID: storeID)
    }
}

/// Inserts many objects of one entity in one transaction, without making managed objects
/// (Core Data's `NSBatchInsertRequest`).
///
/// ```swift
/// let request = BatchInsertRequest(entityName: "Note", objects: [
///     ["title": "Buy milk", "createdAt": Date(), "folder": inbox.objectID!],
///     ["title": "Call Ann", "createdAt": Date(), "tags": [work.objectID!]],
/// ])
/// let result = try store.execute(request)        // result.count == 2
/// ```
///
/// Rows give values by property name: attributes as their Swift values (`Int` for any integer
/// attribute, a `Codable` value for a document), to-one relationships as an ``ObjectID`` (or a
/// saved ``ManagedObject``), to-many ones as an array or set of them. A property a row leaves
/// out gets its default (or nil). Every row is validated as a save validates an insert —
/// required values, types, ranges, lengths, patterns, relationship counts, uniqueness — and
/// one bad row refuses the whole batch with every problem listed, naming each row.
public struct BatchInsertRequest {
    /// Where rows come from.
    enum Source {
        case dictionaries([[String: Any]])
        case encodables([any Encodable])
        case dictionaryHandler((inout [String: Any]) throws -> Bool)
        case objectHandler((ManagedObject) throws -> Bool)
    }

    /// The entity to insert into; nil when the request was made for a model class.
    public let entityName: String?
    let objectClass: ManagedObject.Type?
    let source: Source
    /// What the result reports (default ``BatchResultType/count``).
    public var resultType: BatchResultType = .count

    /// Inserts one object per dictionary.
    public init(entityName: String, objects: [[String: Any]]) {
        self.entityName = entityName
        self.objectClass = nil
        self.source = .dictionaries(objects)
    }

    /// Inserts one object per value, its stored properties giving the object's by name (a
    /// `Codable` struct whose property names match the entity's).
    ///
    /// ```swift
    /// struct NoteRow: Codable { var title: String; var createdAt: Date; var folder: ObjectID? }
    /// try store.execute(BatchInsertRequest(entityName: "Note", values: rows))
    /// ```
    public init<Value: Encodable>(entityName: String, values: [Value]) {
        self.entityName = entityName
        self.objectClass = nil
        self.source = .encodables(values)
    }

    /// Inserts the rows `handler` fills, one call each, until it returns true (Core Data's
    /// `dictionaryHandler`): the dictionary starts empty at each call, and the one filled by
    /// the call that returns true is not inserted.
    ///
    /// ```swift
    /// var n = 0
    /// let request = BatchInsertRequest(entityName: "Note") { row in
    ///     guard n < 1_000_000 else { return true }
    ///     n += 1
    ///     row["title"] = "Note \(n)"
    ///     return false
    /// }
    /// ```
    public init(entityName: String, dictionaryHandler: @escaping (inout [String: Any]) throws -> Bool) {
        self.entityName = entityName
        self.objectClass = nil
        self.source = .dictionaryHandler(dictionaryHandler)
    }

    /// Inserts the objects `handler` fills through the model class's own properties, one call
    /// each, until it returns true (Core Data's `managedObjectHandler`). The object passed is
    /// one scratch object, reset before each call and never inserted into a context; the one
    /// filled by the call that returns true is not inserted. Relationships take objects of a
    /// context on the same store (saved ones: they need their IDs).
    ///
    /// ```swift
    /// var n = 0
    /// let request = BatchInsertRequest(Note.self) { note in
    ///     guard n < 1_000 else { return true }
    ///     n += 1
    ///     note.title = "Note \(n)"
    ///     note.folder = inbox
    ///     return false
    /// }
    /// ```
    public init<T: ManagedObject>(_ type: T.Type, objectHandler: @escaping (T) throws -> Bool) {
        self.entityName = nil
        self.objectClass = type
        self.source = .objectHandler { object in
            guard let typed = object as? T else { return true }
            return try objectHandler(typed)
        }
    }
}

/// Changes properties of every object that matches a predicate, in one transaction, without
/// making managed objects (Core Data's `NSBatchUpdateRequest`).
///
/// ```swift
/// var request = BatchUpdateRequest(entityName: "Note", predicate: try QueryPredicate(format: "folder.name == %@", "Inbox"))
/// request.propertiesToUpdate = [
///     "isRead": true,                                         // a constant
///     "views": try QueryExpression(format: "views + 1"),      // an expression of the object
///     "folder": archive.objectID!,                            // a to-one relationship
/// ]
/// let result = try store.execute(request)
/// ```
///
/// Values are constants, ``QueryExpression``s evaluated per object (arithmetic, key paths,
/// `??`), or for a to-one relationship an ``ObjectID``, a saved ``ManagedObject`` or nil —
/// whose inverse is kept in step. New values are validated as a save validates them, indexes
/// and uniqueness constraints follow, and each changed object gets its next row version, so a
/// context still holding the old values meets a conflict (or merges the batch first).
/// Objects are chosen by their saved values: a context's unsaved changes do not count.
public struct BatchUpdateRequest {
    /// The entity whose objects are updated.
    public var entityName: String
    /// Which objects; nil means all.
    public var predicate: QueryPredicate?
    /// Property name → new value (see the type's description).
    public var propertiesToUpdate: [String: Any?]
    /// Whether objects of sub-entities are updated too (default true).
    public var includesSubentities = true
    /// What the result reports (default ``BatchResultType/count``).
    public var resultType: BatchResultType = .count

    public init(entityName: String, predicate: QueryPredicate? = nil, propertiesToUpdate: [String: Any?] = [:]) {
        self.entityName = entityName
        self.predicate = predicate
        self.propertiesToUpdate = propertiesToUpdate
    }
}

/// Deletes every object that matches a predicate, or the objects with given IDs, in one
/// transaction, without making managed objects (Core Data's `NSBatchDeleteRequest`).
///
/// ```swift
/// let old = try QueryPredicate(format: "createdAt < %@", cutoff)
/// let result = try store.execute(BatchDeleteRequest(entityName: "Note", predicate: old))
/// ```
///
/// Unlike Core Data's, delete rules apply: a nullify rule removes the deleted objects from
/// their related objects' relationships, a cascade rule deletes the related objects too (and
/// so on), and a deny rule that still reaches an object not being deleted refuses the whole
/// batch with ``DocStoreError/Code/deleteDenied``. Objects are chosen by their saved values.
public struct BatchDeleteRequest: Sendable {
    /// The entity whose objects are deleted; nil with ``objectIDs``.
    public var entityName: String?
    /// Which objects; nil means all of the entity.
    public var predicate: QueryPredicate?
    /// The objects to delete, by ID (of any entities); IDs of objects that no longer exist
    /// are passed over.
    public var objectIDs: [ObjectID]?
    /// Whether objects of sub-entities are deleted too (default true).
    public var includesSubentities = true
    /// What the result reports (default ``BatchResultType/count``).
    public var resultType: BatchResultType = .count

    /// Deletes the objects of `entityName` that match `predicate` (all of them when nil).
    public init(entityName: String, predicate: QueryPredicate? = nil) {
        self.entityName = entityName
        self.predicate = predicate
    }

    /// Deletes these objects.
    public init(objectIDs: [ObjectID]) {
        self.objectIDs = objectIDs
    }
}
