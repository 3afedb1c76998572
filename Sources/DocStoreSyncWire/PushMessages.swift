// PushMessages: what a device sends to push its saves, and what the server answers
// (Format/sync.md § Push). A push carries whole client transactions — each one local save,
// identified by the device's history token — so the server applies each atomically and at
// most once (a retried push after a lost response is answered, not applied again).
//
//   PM1 an object change carries only the fields that save changed (a field patch), never a
//       whole record: a device on an older schema cannot null fields it does not know.
//   PM2 transaction IDs of one device grow in the order the device saved them.

import Foundation

/// A device's push: its unacknowledged saves, oldest first.
public struct PushRequest: Sendable, Hashable, Codable {
    public var protocolVersion: Int
    /// The pushing device's ID.
    public var device: String
    /// The device's secret: the server remembers the first one a device ID pushed with and
    /// refuses any other (a push under someone else's device ID).
    public var deviceSecret: String
    /// The schema the device saved with.
    public var schema: SchemaManifest
    /// Saves, oldest first (PM2).
    public var transactions: [ClientTransaction]

    public init(device: String, deviceSecret: String, schema: SchemaManifest, transactions: [ClientTransaction]) {
        protocolVersion = SyncProtocol.version
        self.device = device
        self.deviceSecret = deviceSecret
        self.schema = schema
        self.transactions = transactions
    }
}

/// One local save of a device.
public struct ClientTransaction: Sendable, Hashable, Codable {
    /// The device's history token of the save: unique per device, growing (PM2).
    public var id: UInt64
    /// When the save happened, on the hybrid clock.
    public var clock: HybridTimestamp
    /// The objects it changed.
    public var changes: [ObjectChange]

    public init(id: UInt64, clock: HybridTimestamp, changes: [ObjectChange]) {
        self.id = id
        self.clock = clock
        self.changes = changes
    }
}

/// One object's change in a save.
public struct ObjectChange: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable { case insert, update, delete }
    public var entity: String
    /// The object's global ID.
    public var id: UUID
    public var kind: Kind
    /// Attributes and to-one relationships the save set, by name (PM1). Empty for deletes.
    public var fields: [String: WireValue]
    /// To-many links the save added or removed.
    public var links: [LinkChange]

    public init(entity: String, id: UUID, kind: Kind, fields: [String: WireValue] = [:], links: [LinkChange] = []) {
        self.entity = entity
        self.id = id
        self.kind = kind
        self.fields = fields
        self.links = links
    }
}

/// A to-many link added or removed.
public struct LinkChange: Sendable, Hashable, Codable {
    public var relationship: String
    public var target: UUID
    /// true: the link was added; false: removed.
    public var present: Bool

    public init(relationship: String, target: UUID, present: Bool) {
        self.relationship = relationship
        self.target = target
        self.present = present
    }
}

/// The server's answer to a push.
public struct PushResponse: Sendable, Hashable, Codable {
    /// The transactions now applied (including ones a previous, unanswered push applied).
    public var accepted: [UInt64]
    /// What the server's rules decided against the device's edits.
    public var conflicts: [SyncConflict]
    /// The server's clock (milliseconds since 1970) when it answered (C2).
    public var serverTime: Int64

    public init(accepted: [UInt64], conflicts: [SyncConflict], serverTime: Int64) {
        self.accepted = accepted
        self.conflicts = conflicts
        self.serverTime = serverTime
    }
}

/// An edit that a conflict rule set aside (Format/sync.md § Conflicts).
public struct SyncConflict: Sendable, Hashable, Codable, CustomStringConvertible {
    public enum Kind: String, Sendable, Hashable, Codable {
        /// A newer edit of the same field won (last writer wins).
        case olderEdit
        /// The object was deleted; the update was dropped.
        case updateOfDeletedObject
        /// A clock too far ahead of the server's was held back (C3).
        case clockHeldBack
        /// A link added to an object that is deleted on the server was dropped (M6); `field`
        /// names the relationship.
        case linkToDeletedObject
    }
    public var kind: Kind
    public var entity: String
    public var id: UUID
    public var field: String?
    public var transaction: UInt64

    public init(kind: Kind, entity: String, id: UUID, field: String? = nil, transaction: UInt64) {
        self.kind = kind
        self.entity = entity
        self.id = id
        self.field = field
        self.transaction = transaction
    }

    public var description: String {
        "\(kind.rawValue): \(entity) \(id.uuidString)\(field.map { ".\($0)" } ?? "") (transaction \(transaction))"
    }
}
