// UnassignedLeaves: the entries of leaves whose tree's name was lost with the engine's catalog
// of trees (Salvage SV7), put back in the object layer's trees by what they look like — the
// object catalog and key sequences by their keys, records and links by the shape of their keys
// and values against the schema (Format/record.md).
//
//   UL1 a record: an 8-byte key of an entity of the schema whose value decodes as a record of
//       that entity; it goes to the entity's records tree.
//   UL2 a link: a 16-byte key whose first 8 bytes are an object's key; an empty value makes it
//       an unordered link (the target in the key's last 8 bytes), an 8-byte value an ordered one
//       (the target in the value). It goes to the one to-many of the source's entity whose
//       destination takes the target; with none or several, it is dropped and counted.
//   UL3 index entries and history are left out: indexes are rebuilt from the records, and
//       history is not carried over (Store+Recover RC2, RC4).

import Foundation
internal import DocStoreEngine

enum UnassignedLeaves {
    /// The object catalog's entries (the catalog and the `seq.` keys) among the leaves.
    static func catalogEntries(_ leaves: [[(key: [UInt8], value: [UInt8])]]) -> [(key: [UInt8], value: [UInt8])] {
        leaves.flatMap { $0 }.filter { $0.key == Catalog.catalogKey || ($0.key.count == 8 && $0.key.starts(with: Array("seq.".utf8))) }
    }

    /// The records and links among the leaves, by tree (UL1, UL2); and how many entries looked
    /// like links but fit no relationship, or several.
    static func sort(_ leaves: [[(key: [UInt8], value: [UInt8])]], _ model: StoreModel) -> (trees: [String: [(key: [UInt8], value: [UInt8])]], unplaced: Int) {
        var trees: [String: [(key: [UInt8], value: [UInt8])]] = [:]
        var unplaced = 0
        for (k, v) in leaves.flatMap({ $0 }) {
            guard let source = PrimaryKey.read(k), let entity = model.entity(ofKey: source) else { continue }
            if k.count == 8 {
                if let record = try? RecordCoding.decode(v, key: source), record.entityID == entity.id {
                    trees[entity.recordsTree, default: []].append((k, v))
                }
            } else if k.count == 16 {
                let target = v.isEmpty ? PrimaryKey.read(k, at: 8) : v.count == 8 ? PrimaryKey.read(v) : nil
                guard let target, model.entity(ofKey: target) != nil else { continue }
                let candidates = entity.properties.filter { p in
                    p.isToMany && p.isOrdered == !v.isEmpty && model.entities[p.destination].kindIDs.contains(PrimaryKey.entity(of: target))
                }
                if candidates.count == 1, let p = candidates.first {
                    trees[p.linkTree, default: []].append((k, v))
                } else {
                    unplaced += 1
                }
            }
        }
        return (trees, unplaced)
    }
}
