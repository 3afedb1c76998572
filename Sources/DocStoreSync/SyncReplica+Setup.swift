// SyncReplica+Setup: the first upload of a store that had objects before sync was enabled
// (Format/sync.md § Setup) — NSPersistentCloudKitContainer's "setup" and initial export. History
// from before sync has no values (and may have been purged), so the objects themselves are
// exported: every synced object as an insert with its current values and links, in chunks.
//
//   SU1 when sync is first enabled, `pushed` starts at the store's last history token, the
//       key "setup" holds 0 (the next chunk to push) and "setup-limit/<entity>" the highest key
//       handed out so far: the export takes the objects up to it, history everything after. An
//       object both exported and saved later keeps one global ID (the mapping).
//   SU2 chunk n is the client transaction 2^63 + n — an ID no history token reaches — so a
//       retried chunk applies once (F2). "setup" moves past a chunk only once the server
//       accepted it, and is removed after the last.

import DocStoreCore
import DocStoreEngine
import DocStoreSyncWire
import Foundation

extension SyncReplica {
    static let setupKey = Array("setup".utf8)
    static let setupChunkSize = 500
    static let setupIDBase: UInt64 = 1 << 63

    /// Marks a store that sync sees for the first time for export (SU1); in `txn`.
    func beginSetup(_ txn: WriteTransaction) throws {
        let last = try store.lastHistoryToken()?.value ?? 0
        try SyncState.put(last, SyncState.pushedKey, txn)
        try store.setRetentionHold(last, txn)
        try SyncState.put(0, Self.setupKey, txn)
        // Objects inserted from now on go through history; the export takes those before.
        for name in model.entities.keys { try SyncState.put(store.highestKey(ofEntity: name), Self.setupLimitKey(name), txn) }
    }

    static func setupLimitKey(_ entity: String) -> [UInt8] { Array("setup-limit/\(entity)".utf8) }

    /// Whether an export is still to be pushed (SU1): one read, no enumeration.
    func setupPending() throws(SyncError) -> Bool {
        do { return try store.syncRead { try $0.get(Self.setupKey, in: SyncState.tree) != nil } } catch {
            throw SyncError.store(error, "reading the export's progress")
        }
    }

    /// The next chunk of the export, or nil when the export is done (or was never needed).
    func nextSetupChunk(clock stampAt: Int64) throws(SyncError) -> ClientTransaction? {
        do {
            guard let chunk = try store.syncRead({ try SyncState.u64(Self.setupKey, $0) }) else { return nil }
            let context = Context(store: store)
            var keys: [(entity: SyncModel.Entity, key: UInt64, object: ManagedObject)] = []
            for (name, entity) in model.entities.sorted(by: { $0.key < $1.key }) {
                let limit = try store.syncRead { try SyncState.u64(Self.setupLimitKey(name), $0) } ?? 0
                for object in try context.fetch(entityName: name) where object.entityName == name {
                    if let key = object.objectID?.primaryKey, key <= limit { keys.append((entity, key, object)) }
                }
            }
            keys.sort { $0.key < $1.key }
            let start = Int(chunk) * Self.setupChunkSize
            guard start < keys.count else {
                _ = try store.syncWrite { txn in try txn.delete(Self.setupKey, in: SyncState.tree) }
                return nil
            }
            let slice = keys[start..<min(keys.count, start + Self.setupChunkSize)]
            var links: [UInt64: [(String, [UInt64])]] = [:]
            for (entity, key, object) in slice where !entity.toManys.isEmpty {
                for relationship in entity.toManys.keys.sorted() {
                    let value = try object.value(forKey: relationship)
                    let targets = (value as? Set<ManagedObject>).map(Array.init) ?? (value as? [ManagedObject]) ?? []
                    links[key, default: []].append((relationship, targets.compactMap { $0.objectID?.primaryKey }.sorted()))
                }
            }
            let changes = try store.syncWrite { txn -> [ObjectChange] in
                var out: [ObjectChange] = []
                var clock = HybridClock(last: HybridTimestamp(rawValue: try SyncState.u64(SyncState.clockKey, txn) ?? 0))
                _ = clock.tick(milliseconds: stampAt)
                try SyncState.put(clock.last.rawValue, SyncState.clockKey, txn)
                for (entity, key, _) in slice {
                    let values = try store.currentValues(ofKey: key) ?? [:]
                    let id = try globalID(key, entity: entity, values: values, txn)
                    var fields: [String: WireValue] = [:]
                    for (name, value) in values {
                        if entity.attributes[name] != nil, let wire = WireValue(value) { fields[name] = wire }
                        if entity.toOnes[name] != nil, case .reference(let target) = value {
                            fields[name] = .reference(try globalID(target, entity: nil, values: [:], txn))
                        }
                    }
                    for relationship in entity.orders {
                        guard let members = try store.orderedMembers(ofKey: key, relationship: relationship, txn), !members.isEmpty else { continue }
                        fields[SyncModel.orderField(relationship)] = .order(try members.map { try globalID($0, entity: nil, values: [:], txn) })
                    }
                    var linkChanges: [LinkChange] = []
                    for (relationship, targets) in links[key] ?? [] {
                        for target in targets {
                            linkChanges.append(LinkChange(relationship: relationship, target: try globalID(target, entity: nil, values: [:], txn), present: true))
                        }
                    }
                    out.append(ObjectChange(entity: entity.name, id: id, kind: .insert, fields: fields, links: linkChanges))
                }
                return out
            }
            let stamp = try store.syncRead { HybridTimestamp(rawValue: try SyncState.u64(SyncState.clockKey, $0) ?? 0) }
            return ClientTransaction(id: Self.setupIDBase + chunk, clock: stamp, changes: changes)
        } catch {
            throw SyncError.store(error, "exporting the store's existing objects")
        }
    }

    /// Records that the server accepted setup chunk `id` (SU2).
    func setupChunkAccepted(_ id: UInt64) throws(SyncError) {
        do { try store.syncWrite { txn in try SyncState.put(id - Self.setupIDBase + 1, Self.setupKey, txn) } } catch {
            throw SyncError.store(error, "recording the export's progress")
        }
    }
}
