// ObjectsDidChange: what a context tells its observers when its objects change — Core Data's
// NSManagedObjectContextObjectsDidChange notification, as a Sendable value of object IDs (objects
// stay in their context's domain; an observer elsewhere looks them up by ID).
//
// A context sends one when it processes its pending changes (processPendingChanges: at save, at
// fetch, at the end of a background context's `perform`, on the main actor's next turn for the
// main context) and when it merges other contexts' saves. Its own edits are `inserted`,
// `updated` and `deleted`; merged saves are `inserted`, `refreshed` and `deleted`.

/// The objects of a context that changed, by ID.
public struct ObjectsDidChange: Sendable, Equatable, CustomStringConvertible {
    /// Objects inserted into the context, or inserted by another context's save that it merged.
    public var insertedObjectIDs: Set<ObjectID> = []
    /// Objects the context's own code changed.
    public var updatedObjectIDs: Set<ObjectID> = []
    /// Objects deleted in the context, or by another context's save it merged.
    public var deletedObjectIDs: Set<ObjectID> = []
    /// Objects whose saved values changed in another context's save this context merged (those
    /// it has took the new values), and objects refreshed or rolled back here.
    public var refreshedObjectIDs: Set<ObjectID> = []
    /// Objects the context no longer has (rolled-back inserts).
    public var invalidatedObjectIDs: Set<ObjectID> = []
    /// The context was reset: every object it had is invalid.
    public var invalidatedAllObjects = false
    /// For updated and refreshed objects: the names of the properties that changed.
    public var changedKeys: [ObjectID: Set<String>] = [:]

    public init() {}

    /// Whether nothing is in it.
    public var isEmpty: Bool {
        insertedObjectIDs.isEmpty && updatedObjectIDs.isEmpty && deletedObjectIDs.isEmpty
            && refreshedObjectIDs.isEmpty && invalidatedObjectIDs.isEmpty && !invalidatedAllObjects
    }

    /// Every ID in it.
    public var allObjectIDs: Set<ObjectID> {
        insertedObjectIDs.union(updatedObjectIDs).union(deletedObjectIDs).union(refreshedObjectIDs).union(invalidatedObjectIDs)
    }

    /// The names of the entities it touches.
    public var entityNames: Set<String> { Set(allObjectIDs.map(\.entityName)) }

    /// Only the objects whose entity ID is in `kinds` (nil: all of them); nil when nothing is
    /// left (a reset always stays).
    func narrowed(to kinds: Set<UInt32>?) -> ObjectsDidChange? {
        guard let kinds else { return isEmpty ? nil : self }
        func keep(_ id: ObjectID) -> Bool { kinds.contains(PrimaryKey.entity(of: id.primaryKey)) }
        var out = ObjectsDidChange()
        out.insertedObjectIDs = insertedObjectIDs.filter(keep)
        out.updatedObjectIDs = updatedObjectIDs.filter(keep)
        out.deletedObjectIDs = deletedObjectIDs.filter(keep)
        out.refreshedObjectIDs = refreshedObjectIDs.filter(keep)
        out.invalidatedObjectIDs = invalidatedObjectIDs.filter(keep)
        out.invalidatedAllObjects = invalidatedAllObjects
        out.changedKeys = changedKeys.filter { keep($0.key) }
        return out.isEmpty ? nil : out
    }

    /// Adds `other`'s objects to this one.
    mutating func formUnion(_ other: ObjectsDidChange) {
        insertedObjectIDs.formUnion(other.insertedObjectIDs)
        updatedObjectIDs.formUnion(other.updatedObjectIDs)
        deletedObjectIDs.formUnion(other.deletedObjectIDs)
        refreshedObjectIDs.formUnion(other.refreshedObjectIDs)
        invalidatedObjectIDs.formUnion(other.invalidatedObjectIDs)
        invalidatedAllObjects = invalidatedAllObjects || other.invalidatedAllObjects
        changedKeys.merge(other.changedKeys) { $0.union($1) }
    }

    public var description: String {
        var parts: [String] = []
        func list(_ name: String, _ ids: Set<ObjectID>) {
            if !ids.isEmpty { parts.append("\(name) " + ids.map { "\($0.entityName)/\($0.number)" }.sorted().joined(separator: ",")) }
        }
        list("inserted", insertedObjectIDs)
        list("updated", updatedObjectIDs)
        list("deleted", deletedObjectIDs)
        list("refreshed", refreshedObjectIDs)
        list("invalidated", invalidatedObjectIDs)
        if invalidatedAllObjects { parts.append("all invalidated") }
        return "ObjectsDidChange(" + parts.joined(separator: "; ") + ")"
    }
}
