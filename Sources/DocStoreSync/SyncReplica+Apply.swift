// SyncReplica+Apply: a page of the server's feed to one save (Format/sync.md § Applying).
//
//   AP1 a page is one save (Store.applyRemote, RA1): the changes, the new ID mappings, the
//       placeholders and the cursor commit together, so a crash re-pulls the page whole.
//   AP2 a field that this device changed in a save the server has not acknowledged yet, with a
//       clock that wins, keeps the local value (it will win on the server too, M1); every
//       other field takes the server's value. A server delete wins over local edits (M2).
//   AP3 a reference to an object this device has not seen yet becomes a placeholder (the value
//       is nil meanwhile) and is set when that object arrives; nothing fails meanwhile. A
//       placeholder whose object the page deletes is dropped (M5).
//   AP4 a page holds each object's entries collapsed to one (Self.collapse): a delete and a
//       re-insert of the same ID in one page replace the object here with a new one.
//   U1–U3 a unique value (or a compound constraint's values) another object here holds: the
//       two become one (uniqueClashes,
//       Store.mergeObjects) — the loser gives the value up in the page's save and is merged
//       into the winner in a save of its own, which is pushed.
//   OR1–OR3 ordered to-manys the page changes are put in the canonical order
//       (SyncReplica+Order), in the page's save.
//   AP5 a live entry for an object deleted here is the server's word that it lives (brought
//       back by a later insert, M2): the object is inserted again under a new key — unless
//       this device's own delete is still unacknowledged, which will win on the server. The
//       old key keeps its global ID, so that pending delete still pushes under it.

import DocStoreCore
import DocStoreEngine
import DocStoreSyncWire
import Foundation

extension SyncReplica {
    /// Local edits not yet acknowledged: the clock of the latest per field and per link.
    struct Pending {
        var fields: [UUID: [String: HybridTimestamp]] = [:]
        var links: [UUID: [String: HybridTimestamp]] = [:]
        /// The latest unacknowledged insert per object (a re-insert that may revive it, M2).
        var inserts: [UUID: HybridTimestamp] = [:]
        /// Objects deleted here in a save not acknowledged yet: the delete will win on the
        /// server (M2), so the server's older state does not bring them back here (AP5).
        var deletes: Set<UUID> = []

        init(_ transactions: [ClientTransaction]) {
            for t in transactions {
                for c in t.changes {
                    if c.kind == .insert { inserts[c.id] = max(inserts[c.id] ?? .zero, t.clock) }
                    if c.kind == .delete { deletes.insert(c.id) } else if c.kind == .insert { deletes.remove(c.id) }
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
        let entries = Self.collapse(page.entries)
        do {
            // Resolve every global ID the page names; reserve keys for objects new here.
            var keys: [UUID: UInt64] = [:]
            var fresh: [UUID: UInt64] = [:]
            var waiting: [UUID: [(key: [UInt8], source: UInt64, name: String)]] = [:]
            var gone: Set<UUID> = []
            var abandoned: [[UInt8]] = []
            try store.syncRead { txn in
                for (entry, entryLinks, _) in entries {
                    if keys[entry.id] == nil, let k = try SyncState.localKey(of: entry.id, txn) {
                        keys[entry.id] = k
                        if !entry.deleted, !pending.deletes.contains(entry.id), try !store.objectExists(key: k, txn) { gone.insert(entry.id) }
                    }
                    for case .reference(let target) in entry.fields.values.map(\.value) where keys[target] == nil {
                        if let k = try SyncState.localKey(of: target, txn) { keys[target] = k }
                    }
                    // The links of every entry the page collapsed into this one, not only the last's.
                    for link in entryLinks where keys[link.target] == nil {
                        if let k = try SyncState.localKey(of: link.target, txn) { keys[link.target] = k }
                    }
                }
            }
            var replaced: [UUID: UInt64] = [:]
            for (entry, _, revived) in entries where !entry.deleted && model.entities[entry.entity] != nil {
                if revived, !gone.contains(entry.id), let old = keys[entry.id] { replaced[entry.id] = old }   // AP4
                guard keys[entry.id] == nil || revived || gone.contains(entry.id) else { continue }   // AP5
                let k = try store.reserveKey(entity: entry.entity)
                keys[entry.id] = k
                fresh[entry.id] = k
            }
            try store.syncRead { txn in
                // Placeholders wait for an ID this device had not seen; it may since have made
                // the object itself (the same unique value), so every live entry resolves them.
                for (entry, _, _) in entries {
                    let found = try SyncState.waiting(for: entry.id, txn)
                    if found.isEmpty { continue }
                    // AP3: what waits for an object the page deletes waits no more: it went with
                    // the delete (M5), and an ID brought back later does not take it back.
                    if entry.deleted { abandoned += found.map(\.key) } else { waiting[entry.id] = found }
                }
            }

            // OR1–OR3: what the page decides about the order of ordered relationships.
            let (orderDecisions, orderChanges) = try store.syncRead { txn in try self.orderDecisions(entries, pending: pending, txn) }

            let (merges, nulled) = try uniqueClashes(entries, keys: keys, dying: Set(replaced.values), pending: pending)

            var operations: [RemoteOperation] = []
            // U2: a loser already here gives its value up before the winner takes it.
            for (key, names) in nulled.sorted(by: { $0.key < $1.key }) where !fresh.values.contains(key) {
                operations.append(.upsert(entity: store.entityName(ofKey: key) ?? "", key: key, isNew: false,
                                          values: Dictionary(uniqueKeysWithValues: names.map { ($0, StoredValue.null) })))
            }
            var unmapped: [(UInt64, UUID)] = []
            var placeholders: [[UInt8]] = []
            var clock = HybridClock()
            var created: Set<UUID> = []
            for (id, old) in replaced {
                operations.append(.delete(key: old))
                unmapped.append((old, id))
            }
            for (entry, entryLinks, _) in entries {
                guard let entity = model.entities[entry.entity] else { continue }   // local-only, or a newer schema's
                if entry.deleted {
                    guard let key = keys[entry.id] else { continue }
                    // AP2 for deletes: a re-insert made here after the delete will bring the
                    // object back on the server (M2), so it stays here too.
                    if let mine = pending.inserts[entry.id], let deleted = entry.deletedClock,
                       mine.wins(over: deleted, device: device, otherDevice: entry.device) { continue }
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
                                // AP3: nil until the target arrives (the server's value is no
                                // longer the one held here).
                                values[name] = .null
                                placeholders.append(SyncState.refKey(target, source: key, name: "o" + name))
                            }
                        default: continue
                        }
                    }
                }
                for name in nulled[key] ?? [] { values[name] = .null }    // U2: this entry is the loser
                let isNew = fresh[entry.id] != nil && created.insert(entry.id).inserted
                operations.append(.upsert(entity: entity.name, key: key, isNew: isNew, values: values))
                for link in entryLinks where entity.toManys[link.relationship] != nil {
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
            // The server's order applies even where the members stay (OR4).
            for (id, byRelationship) in orderDecisions.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                guard let key = keys[id] else { continue }
                for (relationship, decision) in byRelationship.sorted(by: { $0.key < $1.key }) {
                    if case .follow = decision { operations.append(.arrange(key: key, relationship: relationship)) }
                }
            }
            let resolved = waiting.values.flatMap { $0.map(\.key) } + abandoned
            let cursor = page.cursor
            let newMappings = fresh
            let received = clock.last
            var intended: [UInt8] = []
            for case .link(let key, let relationship, let target, let present) in operations {
                intended += SyncState.linkRecord(source: key, relationship: relationship, target: target, present: present)
            }
            let intendedLinks = intended
            _ = try store.applyRemote(operations, author: Self.author,
                                      arrange: arrangement(decisions: orderDecisions, pending: pending, pageKeys: keys)) { txn in
                for (id, relationship, order) in orderChanges { try SyncState.setOrder(order, id, relationship, txn) }
                if !intendedLinks.isEmpty { try txn.put(intendedLinks, for: SyncState.appliedKey(txn.commitLSN.rawValue), in: SyncState.tree) }
                for (key, id) in unmapped { try SyncState.unmap(key, id: id, txn) }
                for (id, key) in newMappings { try SyncState.map(key, to: id, txn) }
                for k in resolved { _ = try txn.delete(k, in: SyncState.tree) }
                for k in placeholders { try txn.put([], for: k, in: SyncState.tree) }
                try SyncState.put(UInt64(bitPattern: cursor), SyncState.cursorKey, txn)
                let last = try SyncState.u64(SyncState.clockKey, txn) ?? 0
                if received.rawValue > last { try SyncState.put(received.rawValue, SyncState.clockKey, txn) }
            }
            // U3: each loser is merged into its winner in a save of its own, pushed like a local one.
            if !merges.isEmpty { try store.mergeObjects(merges, author: Self.mergeAuthor) }
            return page.entries.count
        } catch {
            throw SyncError.store(error, "applying the server's changes")
        }
    }

    /// The author of the saves that merge two objects holding one unique value (U3).
    static let mergeAuthor = "docstore.sync.merge"

    /// U1: the entries of `entries` whose unique value another object here holds (or an
    /// earlier entry of the page takes) — a unique attribute's value, or a compound uniqueness
    /// constraint's values as the object will hold them after the page — each with the object
    /// that keeps it: the one whose global ID is the values' deterministic ID, else the smaller
    /// ID, so every replica picks the same. Per losing key, the properties it gives up (U2).
    func uniqueClashes(_ entries: [(entry: FeedEntry, links: [ClockedLink], revived: Bool)], keys: [UUID: UInt64], dying: Set<UInt64>,
                       pending: Pending) throws(DocStoreError) -> (merges: [(loser: UInt64, winner: UInt64)], nulled: [UInt64: Set<String>]) {
        var merges: [(loser: UInt64, winner: UInt64)] = []
        var nulled: [UInt64: Set<String>] = [:]
        var pageIDs: [UInt64: UUID] = [:]
        for (entry, _, _) in entries { if let k = keys[entry.id] { pageIDs[k] = entry.id } }
        let byID = Dictionary(entries.map { ($0.entry.id, $0.entry) }, uniquingKeysWith: { _, last in last })
        var dying = dying
        for (entry, _, _) in entries where entry.deleted { if let k = keys[entry.id] { dying.insert(k) } }
        var claimed: [String: UInt64] = [:]
        try store.syncRead { txn in
            for (entry, _, _) in entries where !entry.deleted {
                guard let entity = model.entities[entry.entity], let key = keys[entry.id] else { continue }
                var own: [String: StoredValue]?
                for constraint in entity.uniqueAttributes.map({ [$0] }) + entity.compoundUniques {
                    let single = constraint.count == 1 && entity.uniqueAttributes.contains(constraint[0])
                    guard let (values, wire) = try constraintValues(constraint, single: single, entry, key: key, keys: keys, pending: pending,
                                                                     own: &own, txn) else { continue }
                    let claim = "\(entity.name)/\(constraint)/\(values)"
                    var holder = claimed[claim]
                    if holder == nil, let stored = single
                        ? try store.uniqueHolder(entity: entity.name, attribute: constraint[0], value: values[0], txn)
                        : try store.uniqueHolder(entity: entity.name, constraint: constraint, values: values, txn) {
                        // Not a clash when the holder dies in this page or gives a value up in it.
                        let leaving = dying.contains(stored) || pageIDs[stored].flatMap { byID[$0] }.map { other in
                            other.deleted || zip(constraint, wire).contains { name, mine in other.fields[name]?.value != mine }
                        } == true
                        if !leaving { holder = stored }
                    }
                    guard let holder, holder != key, nulled[holder].map({ $0.isDisjoint(with: constraint) }) ?? true else {
                        claimed[claim] = key
                        continue
                    }
                    let holderID = try SyncState.globalID(ofKey: holder, txn)
                    let deterministic: UUID? = if single, constraint[0] == entity.identityAttribute {
                        GlobalIDs.make(entity: entity.name, identityAttribute: constraint[0], values: [constraint[0]: values[0]])
                    } else if !single, constraint == entity.identityConstraint {
                        GlobalIDs.make(entity: entity.name, constraint: constraint, values: wire)
                    } else {
                        nil
                    }
                    let entryWins: Bool
                    if entry.id == deterministic { entryWins = true } else if holderID == deterministic || holderID == nil {
                        entryWins = false       // an unmapped holder is pushed with the deterministic ID (G1)
                    } else if let holderID {
                        entryWins = entry.id.uuidString < holderID.uuidString
                    } else {
                        entryWins = false
                    }
                    // U2: the loser gives up its to-one elements where the constraint has some (a
                    // record holds a nil to-one as it is), else the values themselves.
                    let givenUp = constraint.filter { entity.toOnes[$0] != nil }.nonEmpty ?? constraint
                    if entryWins {
                        merges.append((loser: holder, winner: key))
                        nulled[holder, default: []].formUnion(givenUp)
                        claimed[claim] = key
                    } else {
                        merges.append((loser: key, winner: holder))
                        nulled[key, default: []].formUnion(givenUp)
                    }
                }
            }
        }
        return (merges, nulled)
    }

    /// The values of `constraint` the object `key` holds once `entry` applies (U1), each as
    /// stored here (to-ones as local keys) and on the wire (to-ones as global IDs); nil when
    /// one is nil or not known here, or the entry sets none of them (nothing changes). A
    /// single unique attribute counts only when the entry sets it; a compound constraint takes
    /// the object's own values (`own`, read once) for what the entry does not set or a local
    /// edit still wins.
    private func constraintValues(_ constraint: [String], single: Bool, _ entry: FeedEntry, key: UInt64, keys: [UUID: UInt64],
                                  pending: Pending, own: inout [String: StoredValue]?,
                                  _ txn: Transaction) throws -> (values: [StoredValue], wire: [WireValue])? {
        var values: [StoredValue] = []
        var wire: [WireValue] = []
        var touched = false
        for name in constraint {
            if let field = entry.fields[name],
               !(pending.fields[entry.id]?[name]?.wins(over: field.clock, device: device, otherDevice: field.device) ?? false) {
                touched = true
                if case .reference(let target) = field.value {
                    guard let k = keys[target] else { return nil }
                    values.append(.reference(k))
                } else {
                    guard let v = field.value.storedValue, !v.isNull else { return nil }
                    values.append(v)
                }
                wire.append(field.value)
            } else {
                if single { return nil }
                if own == nil { own = try store.currentValues(ofKey: key) ?? [:] }
                guard let v = own?[name], !v.isNull else { return nil }
                if case .reference(let target) = v {
                    guard let id = try SyncState.globalID(ofKey: target, txn) else { return nil }
                    wire.append(.reference(id))
                } else {
                    guard let w = WireValue(v) else { return nil }
                    wire.append(w)
                }
                values.append(v)
            }
        }
        return touched ? (values, wire) : nil
    }

    /// AP4: a page's entries, one per object, in the order of each object's last entry: that
    /// entry's state (entries carry every field), the links of every entry after the object's
    /// last tombstone (and after their target's), and whether a tombstone came before a live
    /// last entry (the ID was deleted and inserted again: the object here is replaced by a new
    /// one with only the new fields).
    static func collapse(_ entries: [FeedEntry]) -> [(entry: FeedEntry, links: [ClockedLink], revived: Bool)] {
        var last: [UUID: Int] = [:]
        var links: [UUID: [ClockedLink]] = [:]
        var revived: Set<UUID> = []
        var lastDelete: [UUID: Int] = [:]
        for (i, e) in entries.enumerated() where e.deleted { lastDelete[e.id] = i }
        for (i, e) in entries.enumerated() {
            last[e.id] = i
            if e.deleted {
                links[e.id] = []
                revived.insert(e.id)
            } else {
                // A link to an object the page deletes later went with it (M5): if the page
                // brings that ID back, the new object starts without it.
                links[e.id, default: []] += e.links.filter { (lastDelete[$0.target] ?? -1) < i }
            }
        }
        return entries.enumerated().compactMap { i, e in
            guard last[e.id] == i else { return nil }
            return (e, links[e.id] ?? [], !e.deleted && revived.contains(e.id))
        }
    }

    /// The feed cursor: the last entry applied.
    func cursor() throws(SyncError) -> Int64 {
        do { return Int64(bitPattern: try store.syncRead { try SyncState.u64(SyncState.cursorKey, $0) } ?? 0) } catch {
            throw SyncError.store(error, "reading the sync cursor")
        }
    }

    /// Remembers the server's clock offset (C2).
    func noteServerOffset(_ offset: Int64) {
        _ = try? store.syncWrite { txn in try SyncState.put(UInt64(bitPattern: offset), SyncState.offsetKey, txn) }
    }
}

private extension Array {
    /// The array, or nil when it is empty.
    var nonEmpty: Self? { isEmpty ? nil : self }
}
