// Store+Recover: a new, sound store from a damaged one — every object whose record can still be
// read, with its relationships made whole again, and a report of what was lost. What
// `docstore recover FILE --to NEW` runs when `docstore verify` finds damage.
//
//   RC1 the damaged store is only read (Salvage SV1–SV6, without the writer's lock); its files
//       are never changed.
//   RC2 an object store is rebuilt object by object (SalvagedGraph RG1–RG6): records decoded with
//       the catalog the file holds, index entries made anew from the records, both sides of
//       every relationship written; the new store keeps the identity, IDs, object numbers and
//       key sequences, and passes the full integrity check before it is put in place
//       (StoreBuilder SB1–SB4).
//   RC3 a file without a readable object catalog (an engine-only store, or a lost catalog) is
//       rebuilt tree by tree: every readable entry is copied as it was.
//   RC4 persistent history is not carried over: the new store's history starts empty, its
//       commits after the damaged store's last LSN.
//   RC5 when the engine's catalog of trees lost a page, the leaves no tree names are sorted
//       into records and links by their shape (UnassignedLeaves UL1–UL3).

import Foundation
internal import DocStoreEngine

/// What ``Store/recover(from:to:)`` rebuilt, and what it could not.
public struct RecoveryReport: Sendable {
    /// The new store.
    public let url: URL
    /// Objects recovered, by entity, in the schema's order (empty for an engine-only store).
    public let objects: [(entity: String, count: Int)]
    /// Entries copied, for a store rebuilt tree by tree (RC3).
    public let entries: Int
    /// The damage found, in the engine's words: pages and values that did not read, the WAL.
    public let damage: [String]
    /// What the new store lacks or has changed because of it, naming objects: lost objects and
    /// ranges, references emptied, required relationships left empty.
    public let lost: [String]
    /// Relationships restored from their other side.
    public let repaired: [String]
    /// History entries the damaged store had; the new store's history starts empty (RC4).
    public let historyEntries: Int

    /// Whether the store was rebuilt without losing anything.
    public var isComplete: Bool { damage.isEmpty && lost.isEmpty }
}

extension Store {
    /// Rebuilds the store at `source` — damaged or not — into a new store at `destination`:
    /// every object that can still be read, its relationships made whole, its indexes made
    /// anew. Returns what was recovered and what was lost (RC1–RC4).
    ///
    /// ```swift
    /// let report = try Store.recover(from: damagedURL, to: URL(fileURLWithPath: "Rescued.docstore"))
    /// for line in report.lost { print(line) }
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/storage`` when nothing can be read (no meta page
    ///   validates, not a DocStore file, a newer format: its ``DocStoreError/underlying`` says
    ///   which) or something exists at `destination`; ``DocStoreError/Code/corrupt`` when the
    ///   rebuilt graph still does not check. Nothing is left at `destination` when it throws.
    public static func recover(from source: URL, to destination: URL) throws(DocStoreError) -> RecoveryReport {
        let fs = FoundationFileSystem()
        guard !fs.fileExists(destination.path) else {
            throw DocStoreError(.storage, "a file exists at \(destination.path) already; recover into a new path")
        }
        let salvaged: SalvagedStore
        do { salvaged = try Salvage.read(at: source.path, fileSystem: fs) } catch {
            throw DocStoreError(.storage, "nothing can be recovered from \(source.path): \(error.message)", underlying: error)
        }
        var trees = salvaged.trees
        var sortedLines: [String] = []
        if !salvaged.unassigned.isEmpty {
            // SV7: the catalog of trees lost a page; the object catalog may be among the leaves.
            trees[Catalog.tree, default: []] += UnassignedLeaves.catalogEntries(salvaged.unassigned)
        }
        let catalogEntries = trees[Catalog.tree] ?? []
        guard let catalogBytes = catalogEntries.first(where: { $0.key == Catalog.catalogKey })?.value,
              let catalog = try? Catalog.decode(catalogBytes) else {
            var lost: [String] = []
            if trees.isEmpty && !salvaged.lostSubtrees.isEmpty {
                lost.append("no tree could be read: the catalog of trees is damaged, and without the free list its trees' pages cannot be told from stale copies; nothing was recovered")
            }
            if trees.keys.contains(where: { $0 == Catalog.tree || $0.hasPrefix("records.") }) {
                lost.append("the object catalog does not read: the trees are copied as they were. Open the copy with the app's schema: for a store never migrated, the IDs it gives are the ones the records use; `docstore verify` then checks every object")
                trees[Catalog.tree] = sequencesKept(trees)
            }
            var copy = salvaged
            copy.trees = trees
            let entries = try copyTrees(copy, to: destination.path, fs)
            return RecoveryReport(url: destination, objects: [], entries: entries, damage: salvaged.problems, lost: lost, repaired: [],
                                  historyEntries: 0)
        }
        let model = StoreModel(catalog: catalog, classes: [:])
        if !salvaged.unassigned.isEmpty {
            let (found, unplaced) = UnassignedLeaves.sort(salvaged.unassigned, model)
            for (tree, entries) in found {
                // A tree the catalog of trees still named keeps what it has; the leaves add to it.
                var merged: [[UInt8]: [UInt8]] = [:]
                for (k, v) in trees[tree] ?? [] { merged[k] = v }
                for (k, v) in entries where merged[k] == nil { merged[k] = v }
                trees[tree] = merged.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { (key: $0.key, value: $0.value) }
            }
            let count = found.values.reduce(0) { $0 + $1.count }
            sortedLines.append("the catalog of trees lost a page: \(count) records and links were found in leaves no tree names, by their shape\(unplaced > 0 ? "; \(unplaced) link-shaped entries fit no relationship and are left out" : "")")
        }
        var graph = SalvagedGraph(model: model, trees: trees)
        graph.reconcile()
        let lost = sortedLines + lostRanges(salvaged, model) + graph.lost
        var sequences: [UInt32: UInt64] = [:]
        for (k, v) in catalogEntries where k.starts(with: Array("seq.".utf8)) && k.count == 8 {
            sequences[k[4..<8].reduce(UInt32(0)) { $0 << 8 | UInt32($1) }] = Catalog.sequence(from: v)
        }
        let counts: [UInt32: Int]
        do {
            counts = try StoreFileSwap.build(destination.path, fs, pageSize: salvaged.pageSize, continuing: (salvaged.storeID, salvaged.lastLSN)) { engine in
                let builder = try StoreBuilder(engine: engine, catalog: catalog)
                var counts: [UInt32: Int] = [:]
                try graph.forEachObject { (key, entity, values, toMany) throws(DocStoreError) in
                    try builder.add(key, entity, values: values, toMany: toMany)
                    counts[entity.id, default: 0] += 1
                }
                let problems = try builder.finish(sequences: sequences)
                guard problems.isEmpty else {
                    throw DocStoreError(.corrupt, "the recovered objects' relationships still disagree (\(problems.count) problem\(problems.count == 1 ? "" : "s")): \(problems[0])",
                                        problems: problems.prefix(100).map { DocStoreError.Problem(entity: "graph", $0) })
                }
                return counts
            }
        } catch {
            throw storageError(error)
        }
        let objects = model.entities.filter { !$0.description.isAbstract }.map { (entity: $0.name, count: counts[$0.id] ?? 0) }
        return RecoveryReport(url: destination, objects: objects, entries: 0, damage: salvaged.problems, lost: lost, repaired: graph.repaired,
                              historyEntries: salvaged.trees["docstore.history"]?.count ?? 0)
    }

    /// The lost subtrees of records trees, as object ranges (RC2).
    private static func lostRanges(_ salvaged: SalvagedStore, _ model: StoreModel) -> [String] {
        var out: [String] = []
        let recordTrees = Set(model.entities.map(\.recordsTree))
        for subtree in salvaged.lostSubtrees where recordTrees.contains(subtree.tree) {
            let from = subtree.low.flatMap { PrimaryKey.read($0) }.map { model.name(ofKey: $0) } ?? "the first"
            let to = subtree.high.flatMap { PrimaryKey.read($0) }.map { model.name(ofKey: $0) } ?? "the last"
            let found = subtree.adopted > 0 ? "; \(subtree.adopted) of them were found in unreferenced pages and are recovered" : ""
            out.append("page \(subtree.page.rawValue) of \(subtree.tree) did not read: objects from \(from) up to \(to) that were on it are lost\(found)")
        }
        for (tree, k) in salvaged.lostEntries where recordTrees.contains(tree) {
            guard let key = PrimaryKey.read(k), k.count == 8 else { continue }
            out.append("\(model.name(ofKey: key)): its record (a large value, in an overflow chain or a blob file) does not read; the object is lost")
        }
        return out
    }

    /// RC3 for an object store that lost its catalog: the catalog tree's entries with each
    /// entity's key sequence at least its highest record, so that objects created after the
    /// catalog is made anew never take a recovered object's key.
    private static func sequencesKept(_ trees: [String: [(key: [UInt8], value: [UInt8])]]) -> [(key: [UInt8], value: [UInt8])] {
        var highest: [UInt32: UInt64] = [:]
        for (name, entries) in trees where name.hasPrefix("records.") {
            for (k, _) in entries {
                guard k.count == 8, let key = PrimaryKey.read(k) else { continue }
                let id = PrimaryKey.entity(of: key)
                highest[id] = max(highest[id] ?? 0, key & PrimaryKey.sequenceMask)
            }
        }
        var entries: [[UInt8]: [UInt8]] = [:]
        for (k, v) in trees[Catalog.tree] ?? [] { entries[k] = v }
        for (id, n) in highest {
            let key = Catalog.sequenceKey(id)
            entries[key] = Catalog.sequenceValue(max(n, Catalog.sequence(from: entries[key])))
        }
        return entries.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { (key: $0.key, value: $0.value) }
    }

    /// RC3: every salvaged tree copied into a new store, built beside `path` and renamed into place.
    private static func copyTrees(_ salvaged: SalvagedStore, to path: String, _ fs: any FileSystem) throws(DocStoreError) -> Int {
        do {
            return try StoreFileSwap.build(path, fs, pageSize: salvaged.pageSize, continuing: (salvaged.storeID, salvaged.lastLSN)) { copy in
                var entries = 0
                for (tree, pairs) in salvaged.trees.sorted(by: { $0.key < $1.key }) {
                    try copy.write { txn in try txn.createTree(named: tree) }
                    var start = 0
                    while start < pairs.count {
                        let chunk = pairs[start..<min(start + 20_000, pairs.count)]
                        try copy.write { txn in for (k, v) in chunk { try txn.put(v, for: k, in: tree) } }
                        start += chunk.count
                    }
                    entries += pairs.count
                }
                return entries
            }
        } catch {
            throw storageError(error)
        }
    }
}
