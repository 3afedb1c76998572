// SyncState: the device's sync bookkeeping, in the store's own tree `docstore.sync` (Format/
// sync.md § Device state), so it commits in the same engine transactions as the changes it
// describes and survives a crash exactly as they do.
//
//   key                              value
//   "device-secret"                  UTF-8: the secret this device pushes with
//   "pushed"                         u64 BE: the last history token the server acknowledged
//                                    (also the retention hold, Store+SyncSupport SS2)
//   "cursor"                         i64 BE: the last feed entry applied
//   "clock"                          u64 BE: the hybrid clock's last timestamp (C1)
//   "offset"                         i64 BE: the server's clock minus this device's (C2)
//   "id/" ‖ key (8)                  16 bytes: the global ID of the object with this key
//   "key/" ‖ global ID (16)          u64 BE: the local key of the object with this global ID
//   "tx/" ‖ token (8)                u64 BE: the clock a captured, unacknowledged save got
//   "applied/" ‖ token (8)           the link changes an applied page asked for (CP5): records
//                                    of source (8) ‖ target (8) ‖ flag (1) ‖ name ‖ 0
//   "ref/" ‖ target ID (16) ‖ key (8) ‖ name   empty: a to-one or link waiting for its target
//   "order/" ‖ global ID (16) ‖ name  the order the server last sent for an ordered to-many
//                                    (OR2): its clock (8), its device's length (2) and UTF-8,
//                                    then the members' global IDs, 16 bytes each
//
//   SST1 both directions of the ID mapping are written in the same transaction.

import DocStoreCore
import DocStoreEngine
import DocStoreSyncWire
import Foundation

enum SyncState {
    static let tree = Store.syncTree

    static let deviceSecretKey = Array("device-secret".utf8)
    static let pushedKey = Array("pushed".utf8)
    static let cursorKey = Array("cursor".utf8)
    static let clockKey = Array("clock".utf8)
    static let offsetKey = Array("offset".utf8)

    static func idKey(_ key: UInt64) -> [UInt8] { Array("id/".utf8) + be(key) }
    static func keyKey(_ id: UUID) -> [UInt8] { Array("key/".utf8) + bytes(id) }
    static func txKey(_ token: UInt64) -> [UInt8] { Array("tx/".utf8) + be(token) }
    static let txPrefix = Array("tx/".utf8)
    static func appliedKey(_ token: UInt64) -> [UInt8] { appliedPrefix + be(token) }
    static let appliedPrefix = Array("applied/".utf8)
    /// An applied link change as recorded under `applied/` (CP5): source, target, flag.
    static func linkRecord(source: UInt64, relationship: String, target: UInt64, present: Bool) -> [UInt8] {
        be(source) + be(target) + [present ? 1 : 0] + Array(relationship.utf8) + [0]
    }
    static func refPrefix(_ target: UUID) -> [UInt8] { Array("ref/".utf8) + bytes(target) }
    static func refKey(_ target: UUID, source: UInt64, name: String) -> [UInt8] { refPrefix(target) + be(source) + Array(name.utf8) }

    static func orderKey(_ id: UUID, _ relationship: String) -> [UInt8] { Array("order/".utf8) + bytes(id) + Array(relationship.utf8) }

    // MARK: - Reading

    static func u64(_ key: [UInt8], _ txn: Transaction) throws -> UInt64? {
        guard let v = try txn.get(key, in: tree), v.count == 8 else { return nil }
        return v.reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func globalID(ofKey key: UInt64, _ txn: Transaction) throws -> UUID? {
        guard let v = try txn.get(idKey(key), in: tree), v.count == 16 else { return nil }
        return uuid(v)
    }

    static func localKey(of id: UUID, _ txn: Transaction) throws -> UInt64? { try u64(keyKey(id), txn) }

    /// An order the server sent (OR2): the members' global IDs and the edit that set them.
    struct RecordedOrder: Equatable {
        var ids: [UUID]
        var clock: HybridTimestamp
        var device: String
    }

    /// The order the server last sent for the ordered to-many `relationship` of the object
    /// `id` (OR2), if any; nil for a value that does not parse.
    static func order(_ id: UUID, _ relationship: String, _ txn: Transaction) throws -> RecordedOrder? {
        guard let v = try txn.get(orderKey(id, relationship), in: tree), v.count >= 10 else { return nil }
        let clock = v[0..<8].reduce(0) { $0 << 8 | UInt64($1) }
        let length = Int(v[8]) << 8 | Int(v[9])
        guard v.count >= 10 + length, (v.count - 10 - length) % 16 == 0 else { return nil }
        let device = String(decoding: v[10..<10 + length], as: UTF8.self)
        let ids = stride(from: 10 + length, to: v.count, by: 16).map { uuid(Array(v[$0..<$0 + 16])) }
        return RecordedOrder(ids: ids, clock: HybridTimestamp(rawValue: clock), device: device)
    }

    /// The placeholders waiting for `target`: (source key, property name).
    static func waiting(for target: UUID, _ txn: Transaction) throws -> [(key: [UInt8], source: UInt64, name: String)] {
        let prefix = refPrefix(target)
        var out: [(key: [UInt8], source: UInt64, name: String)] = []
        var cursor = try txn.cursor(in: tree)
        var entry = try cursor.seek(to: prefix)
        while let (k, _) = entry, k.starts(with: prefix), k.count >= prefix.count + 8 {
            let source = k[prefix.count..<prefix.count + 8].reduce(0) { $0 << 8 | UInt64($1) }
            out.append((k, source, String(decoding: k[(prefix.count + 8)...], as: UTF8.self)))
            entry = try cursor.next()
        }
        return out
    }

    // MARK: - Writing

    static func put(_ value: UInt64, _ key: [UInt8], _ txn: WriteTransaction) throws {
        try txn.put(be(value), for: key, in: tree)
    }

    /// Maps `key` ↔ `id` (SST1).
    static func map(_ key: UInt64, to id: UUID, _ txn: WriteTransaction) throws {
        try txn.put(bytes(id), for: idKey(key), in: tree)
        try txn.put(be(key), for: keyKey(id), in: tree)
    }

    /// Records the order the server sent for `relationship` of `id` (nil: it holds none).
    static func setOrder(_ order: RecordedOrder?, _ id: UUID, _ relationship: String, _ txn: WriteTransaction) throws {
        guard let order else {
            _ = try txn.delete(orderKey(id, relationship), in: tree)
            return
        }
        let device = Array(order.device.utf8.prefix(0xffff))
        let value = be(order.clock.rawValue) + [UInt8(device.count >> 8), UInt8(device.count & 0xff)] + device + order.ids.flatMap(bytes)
        try txn.put(value, for: orderKey(id, relationship), in: tree)
    }

    static func unmap(_ key: UInt64, id: UUID, _ txn: WriteTransaction) throws {
        _ = try txn.delete(idKey(key), in: tree)
        _ = try txn.delete(keyKey(id), in: tree)
    }

    // MARK: - Bytes

    static func be(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * $0)) } }

    static func bytes(_ id: UUID) -> [UInt8] {
        withUnsafeBytes(of: id.uuid) { Array($0) }
    }

    static func uuid(_ b: [UInt8]) -> UUID {
        UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
    }
}
