// SyncReplica+Order: the order of ordered to-many relationships across replicas (Format/sync.md
// § Ordered relationships). Membership syncs as links or to-ones (SM1); the order is one more
// last-writer-wins field of the owning object, "<relationship>#order", holding the members'
// global IDs as the last device to change the order had them (CP6).
//
//   OR1 every replica puts an ordered to-many's members in one canonical order: first the
//       members the winning order lists, in its order; then the members it does not list
//       (added on devices that had not seen that order), by global ID. Two replicas with the
//       same members and the same winning order therefore agree, whatever order their pages
//       came in.
//   OR2 a device keeps the order the server last sent for each relationship, with the clock
//       of the edit that set it (SyncState `order/`), so a member that arrives in a later page
//       (a note moved into the folder elsewhere) takes its place by OR1 without the owner's
//       entry coming again.
//   OR3 while this device has an unacknowledged edit of an order that wins (its clock is
//       later than the page's, or than the recorded order's when the page has no entry for
//       the owner), the relationship keeps the order it has here, members the page adds going
//       last: that edit is pushed as the order is then (CP6) and wins on the server, so every
//       other replica ends in the same order.
//   OR4 every live entry of an object with an ordered to-many puts it in the canonical order
//       again, even when the server's order is the one recorded: an edit of this device that
//       lost (olderEdit) changes nothing on the server, so no later entry would bring the
//       relationship back to the order that won. (The entry that won comes after that edit —
//       its clock is later, C1 — so it finds the edit there to undo.)

import DocStoreCore
import DocStoreEngine
import DocStoreSyncWire
import Foundation

extension SyncReplica {
    /// What a page decided about one object's ordered relationship.
    enum OrderDecision {
        /// OR3: a local edit wins; the order here stays.
        case keepLocal
        /// OR1 with this order (nil: the server holds none; every member by global ID).
        case follow([UUID]?)
    }

    /// The page's decisions per object and relationship, and the orders to record (OR2): a
    /// live entry's order field that wins (or its absence: the server holds none), and none
    /// for a deleted object.
    func orderDecisions(_ entries: [(entry: FeedEntry, links: [ClockedLink], revived: Bool)], pending: Pending,
                        _ txn: Transaction) throws -> (decisions: [UUID: [String: OrderDecision]], changed: [(UUID, String, SyncState.RecordedOrder?)]) {
        var decisions: [UUID: [String: OrderDecision]] = [:]
        var changed: [(UUID, String, SyncState.RecordedOrder?)] = []
        for (entry, _, _) in entries {
            guard let entity = model.entities[entry.entity] else { continue }
            for relationship in entity.orders {
                let stored = try SyncState.order(entry.id, relationship, txn)
                if entry.deleted {
                    if stored != nil { changed.append((entry.id, relationship, nil)) }
                    continue
                }
                let name = SyncModel.orderField(relationship)
                let field = entry.fields[name]
                if let mine = pending.fields[entry.id]?[name],
                   field.map({ mine.wins(over: $0.clock, device: device, otherDevice: $0.device) }) ?? true {
                    decisions[entry.id, default: [:]][relationship] = .keepLocal
                    continue
                }
                var order: SyncState.RecordedOrder? = nil
                if let field, case .order(let ids) = field.value {
                    order = SyncState.RecordedOrder(ids: ids, clock: field.clock, device: field.device)
                }
                decisions[entry.id, default: [:]][relationship] = .follow(order?.ids)
                if order != stored { changed.append((entry.id, relationship, order)) }
            }
        }
        return (decisions, changed)
    }

    /// The arrangement `Store.applyRemote` asks for each ordered to-many a page changed (RA7):
    /// OR1 with the page's order, the recorded one (OR2), or the order here (OR3).
    /// `pageKeys` maps the page's global IDs to keys, objects new here included.
    func arrangement(decisions: [UUID: [String: OrderDecision]], pending: Pending, pageKeys: [UUID: UInt64]) -> RemoteArrangement {
        let pageIDs = Dictionary(pageKeys.map { ($0.value, $0.key) }, uniquingKeysWith: { a, _ in a })
        let store = self.store
        let model = self.model
        let device = self.device
        return { (key: UInt64, relationship: String, members: [UInt64]) throws(DocStoreError) -> [UInt64] in
            guard let name = store.entityName(ofKey: key), model.entities[name]?.orders.contains(relationship) == true else { return members }
            return try store.syncRead { txn -> [UInt64] in
                func id(_ key: UInt64) throws -> UUID? { try pageIDs[key] ?? SyncState.globalID(ofKey: key, txn) }
                // An object not captured yet has no global ID: a save made meanwhile, pushed next.
                guard let owner = try id(key) else { return members }
                let order: [UUID]?
                switch decisions[owner]?[relationship] {
                case .keepLocal?: return members
                case .follow(let o)?: order = o
                case nil:
                    let recorded = try SyncState.order(owner, relationship, txn)
                    // OR3: a local edit of the order that beats the recorded one keeps the order here.
                    if let mine = pending.fields[owner]?[SyncModel.orderField(relationship)],
                       recorded.map({ mine.wins(over: $0.clock, device: device, otherDevice: $0.device) }) ?? true { return members }
                    order = recorded?.ids
                }
                var ids: [UInt64: UUID] = [:]
                for m in members { ids[m] = try id(m) }
                return Self.canonicalOrder(members, following: order ?? [], ids: ids)
            }
        }
    }

    /// OR1: the members `order` lists, in its order, then the others by global ID (members
    /// without one — not captured yet — last, as they were).
    static func canonicalOrder(_ members: [UInt64], following order: [UUID], ids: [UInt64: UUID]) -> [UInt64] {
        var byID: [UUID: UInt64] = [:]
        for m in members { if let id = ids[m] { byID[id] = m } }
        var out: [UInt64] = []
        var placed: Set<UInt64> = []
        for id in order { if let m = byID[id], placed.insert(m).inserted { out.append(m) } }
        let rest = members.filter { !placed.contains($0) }
        let mapped = rest.filter { ids[$0] != nil }.sorted { (ids[$0]?.uuidString ?? "") < (ids[$1]?.uuidString ?? "") }
        return out + mapped + rest.filter { ids[$0] == nil }
    }
}
