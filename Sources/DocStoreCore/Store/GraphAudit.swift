// GraphAudit: the object layer's integrity check over one snapshot — what `Store.verify()` adds
// to the engine's page-level check. It reads every record, link and index entry and reports,
// in words naming the object, property and tree:
//
//   GA1 a record that does not decode, or whose entity is not the one its key says;
//   GA2 a missing index entry, an entry that names another object, or an entry no object
//       explains (each index tree's entry count must equal what the records give);
//   GA3 a relationship whose other side disagrees: a to-one whose target's inverse does not
//       list it back, a link whose inverse link or to-one is missing, a link from or to an
//       object that does not exist. A reference to a deleted object is allowed only where the
//       other side's delete rule is noAction (which leaves it on purpose).
//   GA4 the audit's time grows with the graph, not with the square of a list: an ordered
//       to-many's members are read once per list.
//   GA5 persistent history (Format/history.md rules 1–3): 10-byte keys, each transaction's
//       chunks from 0 without gaps, each decoding whole, its objects listed once each in
//       primary-key order with their changed fields ascending, and no transaction after the
//       snapshot's last commit.
//
// It changes nothing and reads within one snapshot, so it can run while the store is in use.

import Foundation
internal import DocStoreEngine

extension Store {
    /// The object graph's problems (GA1–GA3), in words; empty when records, links and indexes
    /// agree.
    func auditGraph(progress: ((_ objects: Int, _ total: Int) -> Void)? = nil) throws(DocStoreError) -> [String] {
        try read { txn in
            var audit = GraphAudit(model: model, txn: txn)
            audit.progress = progress
            return try audit.run()
        }
    }
}

struct GraphAudit {
    let model: StoreModel
    let txn: Transaction
    private var problems: [String] = []
    private var expectedEntries: [String: Int] = [:]
    /// Ordered lists' members by tree and owner, and how many are held (GA4).
    private var memberCache: [String: [UInt64: Set<UInt64>]] = [:]
    private var cachedMembers = 0
    /// Called every 1 024 records with the records checked and the records there are.
    var progress: ((Int, Int) -> Void)?

    init(model: StoreModel, txn: Transaction) {
        self.model = model
        self.txn = txn
    }

    mutating func run() throws -> [String] {
        var total = 0
        if progress != nil {
            for tree in Set(model.entities.map(\.recordsTree)) where try txn.treeExists(tree) { total += try txn.count(in: tree) }
        }
        var checked = 0
        for entity in model.entities where !entity.description.isAbstract {
            try txn.forEachRecord(of: entity) { key, bytes in
                try checkRecord(key, bytes, entity)
                checked += 1
                if checked % 1024 == 0 { progress?(checked, total) }
            }
        }
        progress?(checked, total)
        // GA2: each index tree holds exactly the entries its records give.
        var trees = Set<String>()
        for entity in model.entities {
            for p in entity.properties { if let tree = p.indexTree { trees.insert(tree) } }
            for index in entity.compoundIndexes { trees.insert(index.tree) }
        }
        for tree in trees.sorted() where try txn.treeExists(tree) {
            let count = try txn.count(in: tree)
            if count != expectedEntries[tree, default: 0] {
                problems.append("index \(tree) holds \(count) entries; its objects give \(expectedEntries[tree, default: 0])")
            }
        }
        var linkTrees: [String: PropertyInfo] = [:]
        for entity in model.entities { for p in entity.properties where p.isToMany { linkTrees[p.linkTree] = p } }
        for (tree, p) in linkTrees.sorted(by: { $0.key < $1.key }) where try txn.treeExists(tree) {
            try checkLinks(tree, p)
        }
        if try txn.treeExists(HistoryCoding.tree) { try checkHistory() }
        return problems
    }

    private func name(_ key: UInt64) -> String { model.name(ofKey: key) }

    private func values(of key: UInt64) throws -> [StoredValue]? {
        guard let entity = model.entity(ofKey: key), try txn.treeExists(entity.recordsTree),
              let bytes = try txn.get(PrimaryKey.bytes(key), in: entity.recordsTree) else { return nil }
        return try entity.values(ofRecord: bytes, key: key).values
    }

    private mutating func checkRecord(_ key: UInt64, _ bytes: [UInt8], _ entity: EntityInfo) throws {
        var values = entity.defaults
        do {
            let record = try RecordCoding.decode(bytes, key: key)
            guard record.entityID == entity.id else {
                problems.append("\(name(key)): its record says entity \(record.entityID)")
                return
            }
            _ = try RecordCoding.decode(bytes, key: key, into: &values, slotForField: entity.slotForField)
        } catch {
            problems.append("\(name(key)): its record does not decode: \(error)")
            return
        }
        try checkIndexEntries(key, values, entity)
        for slot in entity.recordSlots where entity.properties[slot].isToOne {
            guard case .reference(let target) = values[slot] else { continue }
            try checkInverse(of: entity.properties[slot], source: key, target: target)
        }
    }

    private mutating func checkIndexEntries(_ key: UInt64, _ values: [StoredValue], _ entity: EntityInfo) throws {
        func expect(_ k: [UInt8], in tree: String, value: [UInt8]?, _ what: String) throws {
            expectedEntries[tree, default: 0] += 1
            guard try txn.treeExists(tree), let stored = try txn.get(k, in: tree) else {
                problems.append("\(name(key)): index \(tree) lacks its entry for \(what)")
                return
            }
            if let value, stored != value {
                problems.append("\(name(key)): index \(tree) gives its entry for \(what) to \(PrimaryKey.read(stored).map(name) ?? "a malformed key")")
            }
        }
        for p in entity.properties {
            guard let tree = p.indexTree, let k = Context.indexKey(values[p.slot], unique: p.isUnique, key: key) else { continue }
            try expect(k, in: tree, value: p.isUnique ? PrimaryKey.bytes(key) : [], p.name)
        }
        for index in entity.compoundIndexes {
            for (k, _) in Context.compoundEntries(values, index, key: key) {
                try expect(k, in: index.tree, value: PrimaryKey.bytes(key), index.text)
            }
        }
    }

    /// GA3 for the link `source` → `target` of `p`: the target exists, and its inverse leads back.
    private mutating func checkInverse(of p: PropertyInfo, source: UInt64, target: UInt64) throws {
        let destination = model.entities[p.destination]
        guard destination.kindIDs.contains(PrimaryKey.entity(of: target)), let targetEntity = model.entity(ofKey: target),
              p.inverseSlot >= 0, p.inverseSlot < targetEntity.properties.count else {
            problems.append("\(name(source)).\(p.name) leads to \(name(target)), not a \(destination.name)")
            return
        }
        let q = targetEntity.properties[p.inverseSlot]
        guard let targetValues = try values(of: target) else {
            if q.relationship?.deleteRule != .noAction {
                problems.append("\(name(source)).\(p.name) leads to \(name(target)), which does not exist")
            }
            return
        }
        if q.isToOne {
            if targetValues[q.slot] != .reference(source) {
                problems.append("\(name(source)).\(p.name) leads to \(name(target)), whose \(q.name) is \(targetValues[q.slot]) instead")
            }
        } else if q.isOrdered {
            if !(try orderedMembers(of: target, in: q.linkTree).contains(source)) {
                problems.append("\(name(source)).\(p.name) leads to \(name(target)), whose \(q.name) lacks it")
            }
        } else if try txn.get(linkKey(target, source), in: q.linkTree) == nil {
            problems.append("\(name(source)).\(p.name) leads to \(name(target)), whose \(q.name) lacks it")
        }
    }

    /// The members of `owner`'s ordered to-many in `tree` (GA4: an ordered list is keyed by
    /// position, so finding a member means reading the list; each list is read once and kept,
    /// up to `memberCacheLimit` members in all, not once per member).
    private mutating func orderedMembers(of owner: UInt64, in tree: String) throws -> Set<UInt64> {
        if let known = memberCache[tree]?[owner] { return known }
        var members = Set<UInt64>()
        let prefix = PrimaryKey.bytes(owner)
        var cursor = try txn.cursor(in: tree)
        var entry = try cursor.seek(to: prefix)
        while let (k, v) = entry, k.starts(with: prefix) {
            if let member = PrimaryKey.read(v) { members.insert(member) }
            entry = try cursor.next()
        }
        if cachedMembers + members.count > Self.memberCacheLimit {
            memberCache = [:]
            cachedMembers = 0
        }
        memberCache[tree, default: [:]][owner] = members
        cachedMembers += members.count
        return members
    }

    private static let memberCacheLimit = 4_000_000

    private mutating func checkLinks(_ tree: String, _ p: PropertyInfo) throws {
        var cursor = try txn.cursor(in: tree)
        var entry = try cursor.seek(to: [])
        var lastSource: UInt64?
        var sourceExists = false
        while let (k, v) = entry {
            guard k.count == 16, let source = PrimaryKey.read(k),
                  let target = p.isOrdered ? PrimaryKey.read(v) : PrimaryKey.read(k, at: 8) else {
                problems.append("links \(tree) (\(p.name)) holds a malformed entry")
                entry = try cursor.next()
                continue
            }
            if source != lastSource {
                lastSource = source
                sourceExists = try values(of: source) != nil
                if !sourceExists { problems.append("links \(tree) (\(p.name)) holds links of \(name(source)), which does not exist") }
            }
            if sourceExists { try checkInverse(of: p, source: source, target: target) }
            entry = try cursor.next()
        }
    }

    /// GA5: every history transaction, one at a time.
    private mutating func checkHistory() throws {
        struct Pending {
            let lsn: UInt64
            var chunks: [[UInt8]] = []
            var broken = false
        }
        var cursor = try txn.cursor(in: HistoryCoding.tree)
        var entry = try cursor.seek(to: [])
        var pending: Pending?
        while let (k, v) = entry {
            entry = try cursor.next()
            guard let (lsn, chunk) = HistoryCoding.parseKey(k) else {
                problems.append("history: a key of \(k.count) bytes, not 10")
                continue
            }
            var current = pending ?? Pending(lsn: lsn)
            if current.lsn != lsn {
                if !current.broken { checkTransaction(current.chunks, lsn: current.lsn) }
                current = Pending(lsn: lsn)
            }
            if current.chunks.isEmpty {
                if chunk != 0 {
                    problems.append("history transaction \(lsn) lacks its first chunk")
                    current.broken = true
                }
                if lsn > txn.lsn.rawValue {
                    problems.append("history transaction \(lsn) is after the store's last commit (\(txn.lsn.rawValue))")
                }
            } else if !current.broken && Int(chunk) != current.chunks.count {
                problems.append("history transaction \(lsn) skips from chunk \(current.chunks.count - 1) to \(chunk)")
                current.broken = true
            }
            current.chunks.append(v)
            pending = current
        }
        if let last = pending, !last.broken { checkTransaction(last.chunks, lsn: last.lsn) }
    }

    private mutating func checkTransaction(_ chunks: [[UInt8]], lsn: UInt64) {
        let t: RecordedTransaction
        do { t = try HistoryCoding.decode(chunks, lsn: lsn) } catch {
            problems.append("history transaction \(lsn) does not decode: \(error.message)")
            return
        }
        for (a, b) in zip(t.changes, t.changes.dropFirst()) where a.key >= b.key {
            problems.append("history transaction \(lsn) lists \(name(b.key)) after \(name(a.key)): objects must be listed once each, in key order")
            break
        }
        for change in t.changes where change.kind == .update {
            if zip(change.fields, change.fields.dropFirst()).contains(where: { $0 >= $1 }) {
                problems.append("history transaction \(lsn): the update of \(name(change.key)) lists its fields out of order")
            }
        }
    }
}
