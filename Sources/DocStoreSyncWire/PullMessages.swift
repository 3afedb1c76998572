// PullMessages: how a device reads the server's feed (Format/sync.md § Pull). The feed is the
// server's commit order; a cursor is the position of the last entry read, and a pull from a
// cursor returns exactly the entries after it (the server's F1 makes that safe).
//
//   PL1 an entry carries the object's state after the merge, each field with the clock and
//       device that wrote it, so a device can apply entries in feed order and keep a local,
//       not yet pushed edit that is newer.

import Foundation

/// A device's request for the feed after `after`.
public struct PullRequest: Sendable, Hashable, Codable {
    public var protocolVersion: Int
    public var device: String
    /// The cursor: the `seq` of the last entry the device applied (0: from the beginning).
    public var after: Int64
    /// The most entries to return (at most ``SyncProtocol/maximumPullLimit``).
    public var limit: Int

    public init(device: String, after: Int64, limit: Int = SyncProtocol.maximumPullLimit) {
        protocolVersion = SyncProtocol.version
        self.device = device
        self.after = after
        self.limit = limit
    }
}

/// A page of the feed.
public struct PullResponse: Sendable, Hashable, Codable {
    public var entries: [FeedEntry]
    /// The cursor to pull after next time.
    public var cursor: Int64
    /// Whether more entries follow right away.
    public var hasMore: Bool
    /// The server's clock (milliseconds since 1970) when it answered (C2).
    public var serverTime: Int64

    public init(entries: [FeedEntry], cursor: Int64, hasMore: Bool, serverTime: Int64) {
        self.entries = entries
        self.cursor = cursor
        self.hasMore = hasMore
        self.serverTime = serverTime
    }
}

/// One object's state after a merge on the server (PL1).
public struct FeedEntry: Sendable, Hashable, Codable {
    public var seq: Int64
    public var entity: String
    public var id: UUID
    /// true: the object is deleted (a tombstone); its fields are empty.
    public var deleted: Bool
    /// Every field the server holds for the object, with who wrote it when.
    public var fields: [String: ClockedValue]
    /// The links this merge changed.
    public var links: [ClockedLink]
    /// The device whose push made this entry (of a tombstone: the device that deleted).
    public var device: String
    /// A tombstone's delete clock: a device keeps a re-insert of its own that is later (M2).
    public var deletedClock: HybridTimestamp?

    public init(seq: Int64, entity: String, id: UUID, deleted: Bool, fields: [String: ClockedValue], links: [ClockedLink], device: String,
                deletedClock: HybridTimestamp? = nil) {
        self.seq = seq
        self.entity = entity
        self.id = id
        self.deleted = deleted
        self.fields = fields
        self.links = links
        self.device = device
        self.deletedClock = deletedClock
    }
}

/// A field's value with the edit that set it.
public struct ClockedValue: Sendable, Hashable, Codable {
    public var value: WireValue
    public var clock: HybridTimestamp
    public var device: String

    public init(value: WireValue, clock: HybridTimestamp, device: String) {
        self.value = value
        self.clock = clock
        self.device = device
    }
}

/// A to-many link's state with the edit that set it.
public struct ClockedLink: Sendable, Hashable, Codable {
    public var relationship: String
    public var target: UUID
    public var present: Bool
    public var clock: HybridTimestamp
    public var device: String

    public init(relationship: String, target: UUID, present: Bool, clock: HybridTimestamp, device: String) {
        self.relationship = relationship
        self.target = target
        self.present = present
        self.clock = clock
        self.device = device
    }
}
