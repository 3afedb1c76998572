// SalvagedGraph: the objects and links a salvage found (Salvage SV1–SV6), made into a graph
// whose two sides agree again, so that it can be written as a sound store. What cannot be
// made whole is dropped, and said.
//
//   RG1 a record is read whole or not at all, so an object's record is the authority on its own
//       to-ones; links trees only on to-manys whose inverse is also to-many.
//   RG2 a reference to an object that was not recovered is dropped (emptied or taken out of its
//       list) — unless the other side's delete rule is noAction, which leaves such references
//       on purpose (GraphAudit GA3).
//   RG3 a to-many link whose target's to-one says otherwise is dropped (RG1); a to-one whose
//       target's to-many lacks it gets the link back (appended to an ordered list).
//   RG4 a one-to-one kept only on one side is completed when the other side is empty, and
//       dropped when the other side names another object.
//   RG5 a many-to-many link found on one side only is restored on the other (appended).
//   RG6 a required to-one left empty is kept empty and said: the object is kept, and its
//       owner must set it before saving the object again.

import Foundation
internal import DocStoreEngine

struct SalvagedGraph {
    let model: StoreModel
    /// Every recovered object's values by slot, by key.
    private(set) var objects: [UInt64: [StoredValue]] = [:]
    /// To-many targets, in order, by source key and slot.
    private(set) var lists: [UInt64: [Int: [UInt64]]] = [:]
    /// What was lost or dropped, and what was restored, in words naming objects.
    private(set) var lost: [String] = []
    /// Links restored, per relationship: how many, and the first.
    private var restored: [String: (count: Int, first: String)] = [:]

    /// Relationships restored from their other side, one line per relationship.
    var repaired: [String] {
        restored.sorted { $0.key < $1.key }.map { key, r in
            "\(key): \(r.count) link\(r.count == 1 ? "" : "s") restored from the other side (the first: \(r.first))"
        }
    }

    private mutating func restore(_ target: UInt64, _ q: PropertyInfo, gets key: UInt64, from p: PropertyInfo) {
        let relationship = "\(model.entities[p.destination].name).\(q.name)"
        let line = "\(name(target)) gets \(name(key)) back from \(name(key)).\(p.name)"
        restored[relationship] = (count: (restored[relationship]?.count ?? 0) + 1, first: restored[relationship]?.first ?? line)
    }

    init(model: StoreModel, trees: [String: [(key: [UInt8], value: [UInt8])]]) {
        self.model = model
        var recordTrees = Set<String>()
        for entity in model.entities { recordTrees.insert(entity.recordsTree) }
        for tree in recordTrees.sorted() {
            for (k, v) in trees[tree] ?? [] {
                guard k.count == 8, let key = PrimaryKey.read(k), let entity = model.entity(ofKey: key), !entity.description.isAbstract else {
                    lost.append("\(tree): an entry with key \(Salvage.show(k)) belongs to no entity of the schema; dropped")
                    continue
                }
                do {
                    objects[key] = try entity.values(ofRecord: v, key: key).values
                } catch {
                    lost.append("\(model.name(ofKey: key)): its record does not decode (\(error.message)); the object is lost")
                }
            }
        }
        var linkTrees: [String: PropertyInfo] = [:]
        for entity in model.entities { for p in entity.properties where p.isToMany { linkTrees[p.linkTree] = p } }
        for (tree, p) in linkTrees.sorted(by: { $0.key < $1.key }) {
            for (k, v) in trees[tree] ?? [] {
                guard k.count == 16, let source = PrimaryKey.read(k), let target = p.isOrdered ? PrimaryKey.read(v) : PrimaryKey.read(k, at: 8) else {
                    lost.append("\(tree) (\(p.name)): a malformed link; dropped")
                    continue
                }
                lists[source, default: [:]][p.slot, default: []].append(target)
            }
        }
    }

    /// The other side of `p` for objects of its destination; nil without an inverse.
    private func inverse(of p: PropertyInfo) -> PropertyInfo? {
        guard p.destination >= 0, p.inverseSlot >= 0 else { return nil }
        let destination = model.entities[p.destination]
        return p.inverseSlot < destination.properties.count ? destination.properties[p.inverseSlot] : nil
    }

    private func name(_ key: UInt64) -> String { model.name(ofKey: key) }

    /// Whether `target` may stay referenced by `p` (RG2).
    private func keeps(_ target: UInt64, _ p: PropertyInfo) -> Bool {
        let destination = model.entities[p.destination]
        guard destination.kindIDs.contains(PrimaryKey.entity(of: target)) else { return false }
        return objects[target] != nil || inverse(of: p)?.relationship?.deleteRule == .noAction
    }

    /// RG1–RG6, in that order.
    mutating func reconcile() {
        let keys = objects.keys.sorted()
        // RG2, and duplicates out of every list.
        for key in keys {
            guard let entity = model.entity(ofKey: key) else { continue }
            for p in entity.properties {
                if p.isToOne, case .reference(let target) = objects[key]?[p.slot], !keeps(target, p) {
                    objects[key]?[p.slot] = .null
                    lost.append("\(name(key)).\(p.name) led to \(name(target)), which was not recovered; emptied")
                } else if p.isToMany, let targets = lists[key]?[p.slot] {
                    var seen = Set<UInt64>()
                    let kept = targets.filter { seen.insert($0).inserted && keeps($0, p) }
                    for target in Set(targets).subtracting(kept).sorted() {
                        lost.append("\(name(key)).\(p.name) listed \(name(target)), which was not recovered; taken out")
                    }
                    lists[key]?[p.slot] = kept
                }
            }
        }
        for key in keys {
            guard let entity = model.entity(ofKey: key) else { continue }
            for p in entity.properties {
                guard let q = inverse(of: p) else { continue }
                if p.isToMany, q.isToOne {
                    // RG3: the target's record decides.
                    let targets = lists[key]?[p.slot] ?? []
                    let kept = targets.filter { t in objects[t].map { $0[q.slot] == .reference(key) } ?? true }
                    for target in targets where !kept.contains(target) {
                        lost.append("\(name(key)).\(p.name) listed \(name(target)), whose \(q.name) says otherwise; taken out")
                    }
                    if kept.count != targets.count { lists[key]?[p.slot] = kept }
                } else if p.isToOne, case .reference(let target) = objects[key]?[p.slot], objects[target] != nil {
                    if q.isToMany {
                        // RG3: the link comes back from the record.
                        if !(lists[target]?[q.slot] ?? []).contains(key) {
                            lists[target, default: [:]][q.slot, default: []].append(key)
                            restore(target, q, gets: key, from: p)
                        }
                    } else if objects[target]?[q.slot] != .reference(key) {
                        // RG4
                        if objects[target]?[q.slot].isNull == true {
                            objects[target]?[q.slot] = .reference(key)
                            restore(target, q, gets: key, from: p)
                        } else {
                            objects[key]?[p.slot] = .null
                            lost.append("\(name(key)).\(p.name) led to \(name(target)), whose \(q.name) names another object; emptied")
                        }
                    }
                } else if p.isToMany, q.isToMany {
                    // RG5
                    for target in lists[key]?[p.slot] ?? [] where objects[target] != nil && !(lists[target]?[q.slot] ?? []).contains(key) {
                        lists[target, default: [:]][q.slot, default: []].append(key)
                        restore(target, q, gets: key, from: p)
                    }
                }
            }
        }
        // RG6
        for key in keys {
            guard let entity = model.entity(ofKey: key) else { continue }
            for p in entity.properties {
                if case .toOne(let r) = p.kind, !r.isOptional, objects[key]?[p.slot].isNull == true {
                    lost.append("\(name(key)).\(p.name) is required and is now empty: set it before saving \(name(key)) again")
                }
            }
        }
    }

    /// Each object with its to-many targets by slot, in key order, for StoreBuilder.
    func forEachObject(_ body: (UInt64, EntityInfo, [StoredValue], [(slot: Int, targets: [UInt64])]) throws(DocStoreError) -> Void) throws(DocStoreError) {
        for key in objects.keys.sorted() {
            guard let entity = model.entity(ofKey: key), let values = objects[key] else { continue }
            let toMany = (lists[key] ?? [:]).filter { !$0.value.isEmpty }.sorted { $0.key < $1.key }.map { (slot: $0.key, targets: $0.value) }
            try body(key, entity, values, toMany)
        }
    }
}
