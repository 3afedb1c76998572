// SyncReplica+Capture: local saves to client transactions (Format/sync.md § Push). Reads the
// history after the acknowledged token, gives each save a hybrid timestamp and each new object
// its global ID — both persisted before anything is sent, so a retried push sends the same
// transaction with the same clock.
//
//   CP1 saves authored by sync itself (applied remote changes) are never pushed (no echo).
//   CP2 a save whose history holds its values pushes those values, as of that save; one that
//       does not (saved before sync was enabled, or a batch operation) pushes the object's
//       current values of the properties it changed.
//   CP3 a save's clock is its own time corrected by the server's offset (C2), after every
//       timestamp issued or received before (C1).
//   CP4 of a save that applied remote changes, the deletes its delete rules cascaded to are
//       pushed: a folder deleted on one device while another added a note to it offline ends
//       with the note deleted everywhere, as the cascade rule says.
//   CP5 so are the links it changed beyond the page's own link changes (recorded under
//       `applied/` by SyncReplica+Apply): what a delete rule removed here is removed everywhere.
//   CP6 a save that changed an ordered to-many (its members or their order) pushes the
//       relationship's order as the store holds it when captured, not as of that save: history
//       records links, not positions. The last save that touched the order carries it with the
//       latest clock, so the value the server keeps is the same.

import DocStoreCore
import DocStoreEngine
import DocStoreSyncWire
import Foundation

/// A store's side of sync: capture and apply, without networking.
struct SyncReplica: Sendable {
    let store: Store
    let model: SyncModel
    let device: String
    /// How far this device's clock is off, in milliseconds: 0, except in tests that play a
    /// device whose clock is wrong (C2). Added to every time the device reads.
    var clockSkew: Int64 = 0
    static let author = "docstore.sync"

    /// Up to `limit` unacknowledged saves as client transactions, and the token they run
    /// through (sync-authored and empty saves included, so acknowledging moves past them).
    func capture(limit: Int = 200) throws(SyncError) -> (transactions: [ClientTransaction], through: UInt64?) {
        do {
            let pushed = try store.syncRead { try SyncState.u64(SyncState.pushedKey, $0) } ?? 0
            let saves = try store.capturedHistory(after: pushed, limit: limit)
            guard let last = saves.last?.token else { return ([], nil) }
            let transactions = try store.syncWrite { txn -> [ClientTransaction] in
                var clock = HybridClock(last: HybridTimestamp(rawValue: try SyncState.u64(SyncState.clockKey, txn) ?? 0))
                let offset = Int64(bitPattern: try SyncState.u64(SyncState.offsetKey, txn) ?? 0)
                var out: [ClientTransaction] = []
                for save in saves {
                    if save.author == Self.author {
                        // CP1: applied remote changes are not pushed back — except deletes its
                        // delete rules cascaded to, which only this device knows of (CP4).
                        let cascaded = try cascadedDeletes(save, txn)
                        if !cascaded.isEmpty {
                            out.append(ClientTransaction(id: save.token, clock: try stamp(save, &clock, offset: offset, txn), changes: cascaded))
                        }
                        continue
                    }
                    let changes = try objectChanges(save, txn)
                    if !changes.isEmpty {
                        out.append(ClientTransaction(id: save.token, clock: try stamp(save, &clock, offset: offset, txn), changes: changes))
                    }
                }
                try SyncState.put(clock.last.rawValue, SyncState.clockKey, txn)
                return out
            }
            return (transactions, last)
        } catch {
            throw SyncError.store(error, "reading local changes")
        }
    }

    /// The clock of a save: the one it got when first captured, or a new one (CP3).
    private func stamp(_ save: CapturedTransaction, _ clock: inout HybridClock, offset: Int64, _ txn: WriteTransaction) throws -> HybridTimestamp {
        if let stored = try SyncState.u64(SyncState.txKey(save.token), txn) { return HybridTimestamp(rawValue: stored) }
        let ms = Int64((save.timestamp.timeIntervalSince1970 * 1000).rounded()) &+ clockSkew &+ offset
        let stamp = clock.tick(milliseconds: ms)
        try SyncState.put(stamp.rawValue, SyncState.txKey(save.token), txn)
        return stamp
    }

    /// CP4: the deletes of an applied page that the server did not ask for — objects its delete
    /// rules cascaded to. A delete the server asked for unmapped its object when it was applied
    /// (SyncReplica+Apply), so the deletes whose objects are still mapped are the cascaded ones.
    private func cascadedDeletes(_ save: CapturedTransaction, _ txn: WriteTransaction) throws -> [ObjectChange] {
        var out: [ObjectChange] = []
        for change in save.changes where change.kind == .delete {
            guard let entity = model.entities[change.entity], let id = try SyncState.globalID(ofKey: change.key, txn) else { continue }
            out.append(ObjectChange(entity: entity.name, id: id, kind: .delete))
        }
        // CP5: link changes the page did not ask for (its delete rules removed them).
        let intended = Set(try intendedLinks(save.token, txn))
        for change in save.changes where change.kind == .update {
            guard let entity = model.entities[change.entity] else { continue }
            var links: [LinkChange] = []
            for link in change.links where entity.toManys[link.relationship] != nil {
                let record = SyncState.linkRecord(source: change.key, relationship: link.relationship, target: link.target, present: link.present)
                guard !intended.contains(record), let target = try SyncState.globalID(ofKey: link.target, txn) else { continue }
                links.append(LinkChange(relationship: link.relationship, target: target, present: link.present))
            }
            if !links.isEmpty, let id = try SyncState.globalID(ofKey: change.key, txn) {
                out.append(ObjectChange(entity: entity.name, id: id, kind: .update, links: links))
            }
        }
        return out
    }

    /// The link records an applied page asked for (SyncState `applied/`).
    private func intendedLinks(_ token: UInt64, _ txn: WriteTransaction) throws -> [[UInt8]] {
        guard let bytes = try txn.get(SyncState.appliedKey(token), in: SyncState.tree) else { return [] }
        var out: [[UInt8]] = []
        var i = 0
        while i + 17 <= bytes.count {
            guard let end = bytes[(i + 17)...].firstIndex(of: 0) else { break }
            out.append(Array(bytes[i...end]))
            i = end + 1
        }
        return out
    }

    /// The synced part of one save, IDs assigned and mapped in `txn`.
    private func objectChanges(_ save: CapturedTransaction, _ txn: WriteTransaction) throws -> [ObjectChange] {
        var out: [ObjectChange] = []
        // Inserts first get their IDs, so references within the save resolve.
        var valuesByKey: [UInt64: [String: StoredValue]] = [:]
        for change in save.changes where change.kind != .delete {
            guard model.entities[change.entity] != nil else { continue }
            valuesByKey[change.key] = save.hasValues ? change.values : try currentValues(change)
        }
        for change in save.changes where change.kind == .insert {
            guard let entity = model.entities[change.entity] else { continue }
            if try SyncState.globalID(ofKey: change.key, txn) == nil {
                try SyncState.map(change.key, to: try freshID(change.key, entity, valuesByKey[change.key] ?? [:], txn), txn)
            }
        }
        for change in save.changes {
            guard let entity = model.entities[change.entity] else { continue }      // SM2
            switch change.kind {
            case .delete:
                guard let id = try SyncState.globalID(ofKey: change.key, txn) else { continue }
                out.append(ObjectChange(entity: entity.name, id: id, kind: .delete))
            case .insert, .update:
                let id = try globalID(change.key, entity: entity, values: valuesByKey[change.key] ?? [:], txn)
                var fields: [String: WireValue] = [:]
                for (name, value) in valuesByKey[change.key] ?? [:] {
                    if change.kind == .update, !change.changedProperties.contains(name) { continue }
                    if entity.attributes[name] != nil, let wire = WireValue(value) {
                        fields[name] = wire
                    } else if entity.toOnes[name] != nil {
                        if case .reference(let target) = value {
                            fields[name] = .reference(try globalID(target, entity: nil, values: [:], txn))
                        } else if value.isNull {
                            fields[name] = .null
                        }
                    }
                }
                // CP6: an ordered to-many the save changed pushes its order as it is now.
                for relationship in entity.orders where change.kind == .insert || change.changedProperties.contains(relationship) {
                    guard let members = try store.orderedMembers(ofKey: change.key, relationship: relationship, txn),
                          change.kind == .update || !members.isEmpty else { continue }
                    fields[SyncModel.orderField(relationship)] = .order(try members.map { try globalID($0, entity: nil, values: [:], txn) })
                }
                var links: [LinkChange] = []
                for link in change.links where entity.toManys[link.relationship] != nil {
                    links.append(LinkChange(relationship: link.relationship, target: try globalID(link.target, entity: nil, values: [:], txn),
                                            present: link.present))
                }
                if change.kind == .update, fields.isEmpty, links.isEmpty { continue }
                out.append(ObjectChange(entity: entity.name, id: id, kind: change.kind == .insert ? .insert : .update,
                                        fields: fields, links: links))
            }
        }
        return out
    }

    /// CP2: a save without values pushes the current ones.
    private func currentValues(_ change: CapturedChange) throws -> [String: StoredValue] {
        guard let values = try store.currentValues(ofKey: change.key) else { return [:] }
        if change.kind == .insert { return values }
        var out: [String: StoredValue] = [:]
        for name in change.changedProperties { out[name] = values[name] ?? .null }
        return out
    }

    /// The global ID of the object `key`, made now for one that has none (G2: an object saved
    /// before sync was enabled).
    func globalID(_ key: UInt64, entity: SyncModel.Entity?, values: [String: StoredValue], _ txn: WriteTransaction,
                  depth: Int = 0) throws -> UUID {
        if let id = try SyncState.globalID(ofKey: key, txn) { return id }
        // A target met before its own insert: its entity and values decide its ID (G1).
        let entity = entity ?? store.entityName(ofKey: key).flatMap { model.entities[$0] }
        let values = entity.map(SyncModel.hasIdentity) == true && values.isEmpty ? (try store.currentValues(ofKey: key) ?? [:]) : values
        let id: UUID
        if let entity { id = try freshID(key, entity, values, txn, depth: depth) } else { id = UUID() }
        try SyncState.map(key, to: id, txn)
        return id
    }

    /// The ID of the object `key`, new to sync: deterministic where it can be (G1), random when
    /// that ID is already another live object's here (G3).
    private func freshID(_ key: UInt64, _ entity: SyncModel.Entity, _ values: [String: StoredValue], _ txn: WriteTransaction,
                         depth: Int = 0) throws -> UUID {
        let id = try deterministicID(key, entity, values, txn, depth: depth) ?? UUID()
        if let other = try SyncState.localKey(of: id, txn), other != key, try store.objectExists(key: other, txn) { return UUID() }
        return id
    }

    /// G1: the ID the values of the object `key` give it — from its unique attribute, or from
    /// its identity constraint with to-ones as their targets' global IDs — or nil (G2). A chain
    /// of identities through to-ones deeper than 8 (a cycle) ends in a random ID.
    func deterministicID(_ key: UInt64, _ entity: SyncModel.Entity, _ values: [String: StoredValue], _ txn: WriteTransaction,
                         depth: Int = 0) throws -> UUID? {
        if entity.identityAttribute != nil {
            return GlobalIDs.make(entity: entity.name, identityAttribute: entity.identityAttribute, values: values)
        }
        guard let constraint = entity.identityConstraint else { return nil }
        var wire: [WireValue] = []
        for name in constraint {
            guard let value = values[name], !value.isNull else { return nil }
            if case .reference(let target) = value {
                guard target != key, depth < 8 else { return nil }
                wire.append(.reference(try globalID(target, entity: nil, values: [:], txn, depth: depth + 1)))
            } else if let w = WireValue(value) {
                wire.append(w)
            } else {
                return nil
            }
        }
        return GlobalIDs.make(entity: entity.name, constraint: constraint, values: wire)
    }

    /// Records that the server applied everything through `token`: the cursor and the
    /// retention hold move, the captured clocks of those saves are dropped.
    func acknowledge(through token: UInt64) throws(SyncError) {
        do {
            try store.syncWrite { txn in
                try SyncState.put(token, SyncState.pushedKey, txn)
                try store.setRetentionHold(token, txn)
                var doomed: [[UInt8]] = []
                var cursor = try txn.cursor(in: SyncState.tree)
                var entry = try cursor.seek(to: SyncState.txPrefix)
                while let (k, _) = entry, k.starts(with: SyncState.txPrefix), k.count == SyncState.txPrefix.count + 8 {
                    let t = k.suffix(8).reduce(0) { $0 << 8 | UInt64($1) }
                    if t > token { break }
                    doomed.append(k)
                    entry = try cursor.next()
                }
                var applied = try cursor.seek(to: SyncState.appliedPrefix)
                while let (k, _) = applied, k.starts(with: SyncState.appliedPrefix), k.count == SyncState.appliedPrefix.count + 8 {
                    if k.suffix(8).reduce(0, { $0 << 8 | UInt64($1) }) > token { break }
                    doomed.append(k)
                    applied = try cursor.next()
                }
                for k in doomed { _ = try txn.delete(k, in: SyncState.tree) }
            }
        } catch {
            throw SyncError.store(error, "acknowledging pushed changes")
        }
    }

    /// Whether a push would send anything: an app's save, or what applying a page did beyond
    /// the page (CP4, CP5) — which `pendingCount()` does not count, being sync's own saves.
    func hasChangesToPush() throws(SyncError) -> Bool {
        !(try capture(limit: Int.max).transactions.isEmpty)
    }

    /// The app's saves not yet acknowledged (merges and resolver edits included; the saves
    /// that applied pages are not counted — what they push, `hasChangesToPush` tells).
    func pendingCount() -> Int {
        let pushed = ((try? store.syncRead { try SyncState.u64(SyncState.pushedKey, $0) }) ?? nil) ?? 0
        return (try? store.capturedHistory(after: pushed, limit: Int.max).filter { $0.author != Self.author }.count) ?? 0
    }
}
