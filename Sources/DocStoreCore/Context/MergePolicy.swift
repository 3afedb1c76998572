// MergePolicy, MergeConflict, MergeResolution: what a save does when the store changed under it
// — Core Data's NSMergePolicy types and NSMergeConflict / NSConstraintConflict.
//
// Two kinds of conflict (Context+Conflicts.swift detects and resolves them):
//   - optimistic locking: an object this context read and changed (or deleted) was changed or
//     deleted in the store since — its stored row version moved on;
//   - a unique constraint: an object inserted here has the unique values of another object.

/// How a save resolves conflicts (``Context/mergePolicy``).
///
/// | policy | changed in the store | unique constraint |
/// | --- | --- | --- |
/// | ``error`` | the save fails with ``DocStoreError/Code/mergeConflict``, listing each conflict | fails with ``DocStoreError/Code/uniqueConstraint`` |
/// | ``mergeByPropertyStoreTrump`` | per property: the store's change wins, this context's other edits stay | upsert: the existing object keeps its values; the new one's fill only its defaults |
/// | ``mergeByPropertyObjectTrump`` | per property: this context's edits win, the store's other changes stay | upsert: the new object's set values win |
/// | ``overwrite`` | this context's values are saved whole | upsert: the new object's values replace the existing ones |
/// | ``rollback`` | the store's values win whole; this context's edits of the object are dropped | the existing object's values win whole |
///
/// Under every policy but ``error``: an object deleted in the store stays deleted (this
/// context's edits of it are dropped, and it leaves the context); a delete made here goes
/// through even if the store changed the object since (undoing it after its delete rules ran
/// would leave related objects half-changed). In an upsert the new object is merged into the
/// existing one — its relationships join the existing object's, every reference to it now leads
/// to the existing object — and it leaves the context; fetch the existing one by its unique
/// values (or ``Context/object(with:)``).
public enum MergePolicy {
    /// Conflicts fail the save (Core Data's `NSErrorMergePolicy`; the default).
    case error
    /// Property by property, the store's changes win (`NSMergeByPropertyStoreTrumpMergePolicy`).
    case mergeByPropertyStoreTrump
    /// Property by property, this context's changes win (`NSMergeByPropertyObjectTrumpMergePolicy`).
    case mergeByPropertyObjectTrump
    /// This context's objects are saved whole (`NSOverwriteMergePolicy`).
    case overwrite
    /// The store's objects win whole (`NSRollbackMergePolicy`).
    case rollback
    /// Decides each conflict in code; runs in the context's domain during save.
    case custom((MergeConflict) -> MergeResolution)
}

/// A custom policy's answer for one conflict.
public enum MergeResolution: Sendable, Equatable {
    /// The store's (or the existing object's) values, whole.
    case keepStore
    /// This context's (or the new object's) values, whole.
    case keepObject
    /// Per property, the store's changes win.
    case mergeStoreTrump
    /// Per property, this context's changes win.
    case mergeObjectTrump
    /// The store's (or existing object's) values with these attributes set over them.
    case values([String: StoredValue])
    /// Fail the save with the conflict.
    case fail
}

/// One conflict a save met (Core Data's `NSMergeConflict` / `NSConstraintConflict`). Values
/// are by property name — attributes, and to-one relationships as `.reference(primaryKey)`.
public struct MergeConflict: Sendable, Equatable, CustomStringConvertible {
    /// What kind of conflict it is.
    public enum Kind: Sendable, Equatable {
        /// The object changed in the store since this context read it.
        case changedInStore
        /// The object was deleted from the store since this context read it.
        case deletedInStore
        /// The object, inserted here, has the unique values of `existing`.
        case uniqueConstraint(constraint: String, existing: ObjectID)
    }

    /// The object of this context in conflict.
    public let objectID: ObjectID
    public let kind: Kind
    /// Whether this context deleted the object.
    public let isDeletedHere: Bool
    /// The values this context read from the store (nil for an inserted object).
    public let snapshotValues: [String: StoredValue]?
    /// The values this context would save.
    public let objectValues: [String: StoredValue]
    /// The values in the store now (nil when deleted there); for a unique constraint, the
    /// existing object's.
    public let storeValues: [String: StoredValue]?
    /// The properties that differ between the snapshot and this context (its edits), and
    /// between the snapshot and the store (the other edits).
    public let objectChangedKeys: Set<String>
    public let storeChangedKeys: Set<String>

    public var description: String {
        let name = "\(objectID.entityName)/\(objectID.number)"
        switch kind {
        case .changedInStore:
            let both = objectChangedKeys.intersection(storeChangedKeys).sorted()
            return "\(name) \(isDeletedHere ? "deleted here" : "changed here (\(objectChangedKeys.sorted().joined(separator: ", ")))") and changed in the store (\(storeChangedKeys.sorted().joined(separator: ", ")))"
                + (both.isEmpty ? "" : "; both changed \(both.joined(separator: ", "))")
        case .deletedInStore:
            return "\(name) changed here (\(objectChangedKeys.sorted().joined(separator: ", "))) and deleted from the store"
        case .uniqueConstraint(let constraint, let existing):
            return "\(name) inserted here has the values of \(constraint) that \(existing.entityName)/\(existing.number) already has"
        }
    }
}
