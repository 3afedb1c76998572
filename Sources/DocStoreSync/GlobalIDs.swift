// GlobalIDs: the global identity of a synced object (Format/sync.md § Identity). Local object
// IDs are per-store numbers — two devices would both make Note/1 — so every synced object also
// has a UUID, chosen when sync first sees its insert and kept in the device's sync state.
//
//   G1 an object of an entity with a unique attribute gets a deterministic ID: SHA-256 of the
//      entity name, the attribute name and the value's wire form, cut to a version-8 UUID. Two
//      devices creating Tag "work" offline make the same ID, so the server merges them into
//      one object (SM3).
//      An entity without one but with a compound uniqueness constraint (`#Unique`) over
//      attributes and synced to-ones gets one from that constraint's values (to-ones as their
//      targets' global IDs): two devices adding item "milk" to one list make one item.
//   G2 any other object gets a random (version 4) UUID.
//   G3 (SyncReplica+Capture) a deterministic ID that another live object here already has —
//      one renamed away from the value after it got its ID — is not given twice: the new object
//      gets a random ID, and the unique merge (U1–U3) makes the two one where they meet.

import Crypto
import DocStoreCore
import DocStoreSyncWire
import Foundation

enum GlobalIDs {
    /// The ID of a new object (G1, G2).
    static func make(entity: String, identityAttribute: String?, values: [String: StoredValue]) -> UUID {
        guard let attribute = identityAttribute, let value = values[attribute], !value.isNull,
              let wire = WireValue(value) else { return UUID() }
        var hasher = SHA256()
        hasher.update(data: Data("docstore-sync-id\u{0}\(entity)\u{0}\(attribute)\u{0}".utf8))
        hasher.update(data: WireCoding.encode(wire))
        return uuid(hasher.finalize())
    }

    /// The ID of a new object of an entity whose identity is the compound constraint
    /// `constraint` with these values, in order (G1): SHA-256 over "docstore-sync-id", the
    /// entity and each property name, each followed by a 0 byte, then each value's wire JSON
    /// followed by a 0 byte.
    static func make(entity: String, constraint: [String], values: [WireValue]) -> UUID {
        var hasher = SHA256()
        hasher.update(data: Data((["docstore-sync-id", entity] + constraint).map { $0 + "\u{0}" }.joined().utf8))
        for value in values {
            hasher.update(data: WireCoding.encode(value))
            hasher.update(data: Data([0]))
        }
        return uuid(hasher.finalize())
    }

    private static func uuid(_ digest: SHA256.Digest) -> UUID {
        var bytes = Array(digest.prefix(16))
        bytes[6] = (bytes[6] & 0x0f) | 0x80     // version 8 (RFC 9562: custom)
        bytes[8] = (bytes[8] & 0x3f) | 0x80     // RFC 4122 variant
        return UUID(uuid: (bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7],
                           bytes[8], bytes[9], bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]))
    }
}
