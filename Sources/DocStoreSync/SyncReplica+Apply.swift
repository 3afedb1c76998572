// SyncReplica+Apply: a page of the server's feed to one save (Format/sync.md § Applying).
//
//   AP1 a page is one save (Store.applyRemote, RA1): the changes, the new ID mappings, the
//       placeholders and the cursor commit together, so a crash re-pulls the page whole.
//   AP2 a field that this device changed in a save the server has not acknowledged yet, with a
//       clock that wins, keeps the local value (it will win on the server too, M1); every
//       other field takes the server's value. A server delete wins over local edits (M2).
//   AP3 a reference to an object this device has not seen yet becomes a placeholder and is set
//       when that object arrives; nothing fails meanwhile.

import DocStoreCore
import DocStoreEngine
import DocStoreSyncWire
import Foundation

extension SyncReplica {
    /// Local edits not yet acknowledged: the clock of the latest per field and per link.
    struct Pending {
        var fields: [UUID: [String: HybridTimestamp]] = [:]
        var links: [UUID: [String: HybridTimestamp]] = [:]

        init(_ transactions: [ClientTransaction]) {
            for t in transactions {
                for c in t.changes {
                    for name in c.fields.keys { fields[c.id, default: [:]][name] = max(fields[c.id]?[name] ?? .zero, t.clock) }
                    for l in c.links {
                        let k = "\(l.relationship)/\(l.target.uuidString)"
                        links[c.id, default: [:]][k] = max(links[c.id]?[k] ?? .zero, t.clock)
                    }
                }
            }
        }
    }

    /// Applies `page` (AP1–AP3); returns how many entries changed the store.
    @discardableResult
    func apply(_ page: PullResponse, pending: Pending) throws(SyncError) -> Int {
        do {
            // Resolve every global ID the page names; reserve keys for objects new here.
            var keys: [UUID: UInt64] = [:]
            var fresh: [UUID: UInt64] = [:]
            var waiting: [UUID: [(key: [UInt8], source: UInt64, name: String)]] = [:]
            try store.syncRead { txn in
                for entry in page.entries {
                    if keys[entry.id] == nil, let k = try SyncState.localKey(of: entry.id, txn) { keys[entry.id] = k }
                    for case .reference(let target) in entry.fields.values.map(\.value) where keys[target] == nil {
                        if let k = try SyncState.localKey(of: target, txn) { keys[target] = k }
                    }
                    for link in entry.links where keys[link.target] == nil {
                        if let k = try SyncState.localKey(of: link.target, txn) { keys[link.target] = k }
                    }
                }
            }
            for entry in page.entries where !entry.deleted && keys[entry.id] == nil && model.entities[entry.entity] != nil {
                let k = try store.reserveKey(entity: entry.entity)
                keys[entry.id] = k
                fresh[entry.id] = k
            }
            try store.syncRead { txn in
                for id in fresh.keys { waiting[id] = try SyncState.waiting(for: id, txn) }
            }

            var operations: [RemoteOperation] = []
            var unmapped: [(UInt64, UUID)] = []
            var placeholders: [[UInt8]] = []
            var clock = HybridClock()
            var created: Set<UUID> = []
            for entry in page.entries {
                guard let entity = model.entities[entry.entity] else { continue }   // local-only, or a newer schema's
                if entry.deleted {
                    guard let key = keys[entry.id] else { continue }
                    operations.append(.delete(key: key))
                    if fresh[entry.id] == nil { unmapped.append((key, entry.id)) }
                    continue
                }
                guard let key = keys[entry.id] else { continue }
                var values: [String: StoredValue] = [:]
                for (name, field) in entry.fields {
                    clock.receive(field.clock)
                    if let mine = pending.fields[entry.id]?[name], mine.wins(over: field.clock, device: device, otherDevice: field.device) { continue }
                    if entity.attributes[name] != nil {
                        if let v = field.value.storedValue { values[name] = v }
                    } else if entity.toOnes[name] != nil {
                        switch field.value {
                        case .null: values[name] = .null
                        case .reference(let target):
                            if let t = keys[target] { values[name] = .reference(t) } else {
                                placeholders.append(SyncState.refKey(target, source: key, name: "o" + name))
                            }
                        default: continue
                        }
                    }
                }
                let isNew = fresh[entry.id] != nil && created.insert(entry.id).inserted
                operations.append(.upsert(entity: entity.name, key: key, isNew: isNew, values: values))
                for link in entry.links where entity.toManys[link.relationship] != nil {
                    clock.receive(link.clock)
                    let k = "\(link.relationship)/\(link.target.uuidString)"
                    if let mine = pending.links[entry.id]?[k], mine.wins(over: link.clock, device: device, otherDevice: link.device) { continue }
                    if let t = keys[link.target] {
                        operations.append(.link(key: key, relationship: link.relationship, target: t, present: link.present))
                    } else if link.present {
                        placeholders.append(SyncState.refKey(link.target, source: key, name: "a" + link.relationship))
                    }
                }
                // AP3: what was waiting for this object.
                for w in waiting[entry.id] ?? [] {
                    let name = String(w.name.dropFirst())
                    if w.name.hasPrefix("o") {
                        operations.append(.upsert(entity: store.entityName(ofKey: w.source) ?? "", key: w.source, isNew: false, values: [name: .reference(key)]))
                    } else {
                        operations.append(.link(key: w.source, relationship: name, target: key, present: true))
                    }
                }
            }
            let resolved = waiting.values.flatMap { $0.map(\.key) }
            let cursor = page.cursor
            let newMappings = fresh
            let received = clock.last
            _ = try store.applyRemote(operations, author: Self.author) { txn in
                for (id, key) in newMappings { try SyncState.map(key, to: id, txn) }
                for (key, id) in unmapped { try SyncState.unmap(key, id: id, txn) }
                for k in resolved { _ = try txn.delete(k, in: SyncState.tree) }
                for k in placeholders { try txn.put([], for: k, in: SyncState.tree) }
                try SyncState.put(UInt64(bitPattern: cursor), SyncState.cursorKey, txn)
                let last = try SyncState.u64(SyncState.clockKey, txn) ?? 0
                if received.rawValue > last { try SyncState.put(received.rawValue, SyncState.clockKey, txn) }
            }
            return page.entries.count
        } catch {
            throw SyncError.store(error, "applying the server's changes")
        }
    }

    /// The feed cursor: the last entry applied.
    func cursor() throws(SyncError) -> Int64 {
        do { return Int64(bitPattern: try store.syncRead { try SyncState.u64(SyncState.cursorKey, $0) } ?? 0) } catch {
            throw SyncError.store(error, "reading the sync cursor")
        }
    }

    /// Remembers the server's clock offset (C2).
    func noteServerTime(_ serverTime: Int64) {
        let offset = serverTime - Int64((Date().timeIntervalSince1970 * 1000).rounded())
        _ = try? store.syncWrite { txn in try SyncState.put(UInt64(bitPattern: offset), SyncState.offsetKey, txn) }
    }
}
