// SyncConflictResolver: the app's say in a conflict its device lost — the merge policy of sync
// (Format/sync.md § Resolving). The server decides every conflict by its rules (M1–M6), the
// same way everywhere; a resolver runs on the device whose edit of an attribute lost (M1), sees
// both sides, and may answer with a new edit, which is saved here and pushed like any other —
// with a later clock, so it wins on every replica. Convergence never depends on the resolver:
// its answer is just one more edit.
//
//   RS1 it runs after the round's pull, so the object holds the winning value; one call per
//       object and attribute per round (the latest of this device's losing edits).
//   RS2 attributes only: a to-one or to-many relationship keeps the server's rules.
//   RS3 its edit is saved with the author `docstore.sync.resolver` and pushed in the same round;
//       an object deleted meanwhile is not brought back.

import DocStoreCore
import Foundation

/// An edit of this device that lost to another device's later edit of the same attribute,
/// offered to the app's ``SyncConflictResolver``.
public struct SyncFieldConflict: Sendable {
    /// The entity's name.
    public var entity: String
    /// The object, in this store.
    public var objectID: ObjectID
    /// The attribute's name.
    public var property: String
    /// This device's value, the one that lost.
    public var local: StoredValue
    /// The value that won, which the object holds now.
    public var server: StoredValue

    /// ``local`` as `ManagedObject.value(forKey:)` would give it.
    public var localValue: Any? { local.anyValue }
    /// ``server`` as `ManagedObject.value(forKey:)` would give it.
    public var serverValue: Any? { server.anyValue }
}

/// What a resolver decides.
public enum SyncResolution {
    /// Keep the value that won (what happens without a resolver).
    case keepServer
    /// Save this device's value again, as a new edit that wins everywhere.
    case keepLocal
    /// Save this value (of the attribute's type, as for `setValue(_:forKey:)`), as a new edit
    /// that wins everywhere — a merge of both sides.
    case use(Any?)
}

/// Decides an attribute conflict this device lost (RS1–RS3), like a Core Data merge policy
/// that sees both sides:
///
/// ```swift
/// let sync = try SyncEngine(store: store, server: url, device: id) { conflict in
///     guard conflict.property == "body",
///           let mine = conflict.localValue as? String, let theirs = conflict.serverValue as? String
///     else { return .keepServer }
///     return .use(theirs + "\n" + mine)          // keep both texts
/// }
/// ```
public typealias SyncConflictResolver = @Sendable (SyncFieldConflict) -> SyncResolution
