// HistoryTransaction, HistoryChange and HistoryToken: persistent history as a reader sees it —
// Core Data's NSPersistentHistoryTransaction, NSPersistentHistoryChange and
// NSPersistentHistoryToken. Every committed save is one transaction in the store's history
// tree (Format/history.md); the store-wide change stream (Store+Changes.swift) delivers the same
// values the moment they commit.
//
// Invariants:
//   H1  a token is the LSN of its transaction's commit: tokens grow in commit order and are
//       never reused, so "after token T" means exactly the transactions committed after T.
//   H2  a transaction lists each object at most once, in primary-key order: an insert, an
//       update (with the properties it changed) or a delete (with its tombstone).

import Foundation

/// Where a reader of history stands: the commit a transaction was (Core Data's
/// `NSPersistentHistoryToken`). Tokens compare in commit order; keep the last one you handled
/// (it is Codable) and ask for the history after it.
///
/// ```swift
/// let new = try store.history(after: lastToken)
/// lastToken = new.last?.token ?? lastToken
/// ```
public struct HistoryToken: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The commit's log sequence number.
    public let value: UInt64

    /// The token of commit `value` (as ``value`` gave it).
    public init(_ value: UInt64) { self.value = value }

    public static func < (a: HistoryToken, b: HistoryToken) -> Bool { a.value < b.value }

    public init(from decoder: any Decoder) throws {
        value = try decoder.singleValueContainer().decode(UInt64.self)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(value)
    }

    public var description: String { "token \(value)" }
}

/// What happened to one object in a transaction (Core Data's `NSPersistentHistoryChange`).
public struct HistoryChange: Sendable, Hashable, CustomStringConvertible {
    /// The kind of change.
    public enum ChangeType: Sendable, Hashable {
        case insert, update, delete
    }

    /// The object that changed.
    public let changedObjectID: ObjectID
    public let changeType: ChangeType
    /// Updates: the names of the attributes and relationships that changed. Empty for inserts
    /// and deletes.
    public let updatedProperties: Set<String>
    /// Deletes: the last values of the attributes marked `.preserveValueOnDeletion`, by name
    /// (nil values are left out). Empty otherwise.
    public let tombstone: [String: StoredValue]

    /// The entity of the object.
    public var entityName: String { changedObjectID.entityName }

    public var description: String {
        switch changeType {
        case .insert: "insert \(changedObjectID.entityName)/\(changedObjectID.number)"
        case .update: "update \(changedObjectID.entityName)/\(changedObjectID.number) \(updatedProperties.sorted())"
        case .delete: "delete \(changedObjectID.entityName)/\(changedObjectID.number)"
        }
    }
}

/// One committed transaction: a context's save (Core Data's `NSPersistentHistoryTransaction`).
public struct HistoryTransaction: Sendable, Hashable {
    /// Its place in history.
    public let token: HistoryToken
    /// When it committed.
    public let timestamp: Date
    /// The saving context's ``Context/transactionAuthor``.
    public let author: String?
    /// The saving context's ``Context/name``.
    public let contextName: String?
    /// What changed, one entry per object (H2).
    public let changes: [HistoryChange]
    /// The context that saved it, in this process (0: none, or read back from the file).
    let origin: UInt64

    /// The IDs of the inserted, updated and deleted objects.
    public var insertedObjectIDs: Set<ObjectID> { ids(.insert) }
    public var updatedObjectIDs: Set<ObjectID> { ids(.update) }
    public var deletedObjectIDs: Set<ObjectID> { ids(.delete) }

    private func ids(_ type: HistoryChange.ChangeType) -> Set<ObjectID> {
        Set(changes.lazy.filter { $0.changeType == type }.map(\.changedObjectID))
    }

    /// The names of the entities it changed.
    public var entityNames: Set<String> { Set(changes.map(\.changedObjectID.entityName)) }
}
