// Salvage: every entry that can still be read from a damaged store — what `docstore recover`
// rebuilds a new store from. It never opens the store as the engine does (which refuses damage);
// it reads the files directly, read-only, and keeps going past what it cannot read, saying what
// was lost and where.
//
//   SV1 the newer of the two meta pages that validates is the checkpoint read (M1–M6); when
//       neither does, nothing can be found and salvage fails (`.corrupt`).
//   SV2 each tree the catalog names is walked from its root; a page that does not read (I/O,
//       checksum, structure) is skipped with its whole subtree, and its place (tree, page, the
//       key range its parent gave it) is recorded. A value that does not read (a broken
//       overflow chain, a missing blob file) loses that entry only.
//   SV3 pages the walk did not reach and the free list does not list are read as leaves; one
//       whose keys all fall in exactly one lost subtree's range is taken as part of it (a lost
//       branch page leaves its leaves whole). Others are left alone: they are stale copies.
//   SV4 the WAL's intact records after the checkpoint are applied in order, as opening would
//       replay them (puts, deletes, trees created and dropped); a torn tail is cut as usual.
//   SV5 engine-internal trees ("$…") are not returned: a new store rebuilds them.
//   SV6 the result is held in memory (every entry of every tree): salvage is for rescuing a
//       store, once, not a streaming operation.
//   SV7 the catalog of trees is itself a tree: when a page of it is lost, unreferenced leaves
//       shaped like catalog entries (tree names → 16-byte root and count) are adopted first,
//       then the trees they name walked; unreferenced leaves that fit no lost range are then
//       returned unassigned (with the free list read, they are live leaves of trees whose
//       names were lost, not stale copies).

import Foundation

/// What ``Salvage/read(at:fileSystem:)`` could read from a store.
public struct SalvagedStore: Sendable {
    /// The store's identity and page size, from the meta page read.
    public var storeID: UUID
    public var pageSize: Int
    /// The last commit found (the checkpoint's, or the WAL's last intact record's).
    public var lastLSN: LSN
    /// Every readable entry of every tree, by tree name, in key order (SV5: no "$" trees).
    public var trees: [String: [(key: [UInt8], value: [UInt8])]]
    /// What could not be read, in words naming the tree, page and key range (SV2).
    public var problems: [String]
    /// The subtrees skipped (SV2): their tree, top page and key range; entries found for them
    /// in unreferenced leaves (SV3) are among `trees` all the same.
    public var lostSubtrees: [LostSubtree]
    /// The entries whose value did not read (their keys are known), by tree.
    public var lostEntries: [(tree: String, key: [UInt8])]
    /// SV7: when part of the catalog of trees was lost, the leaves nothing references that fit
    /// no known tree — each leaf's entries, for a layer that can tell its entries by their shape.
    public var unassigned: [[(key: [UInt8], value: [UInt8])]]
}

/// A subtree salvage could not read: everything in `tree` from `low` (inclusive, nil: the
/// first key) to `high` (exclusive, nil: the last key) that was under `page`.
public struct LostSubtree: Sendable {
    public var tree: String
    public var page: PageNumber
    public var low: [UInt8]?
    public var high: [UInt8]?
    /// Entries of that range found in unreferenced leaves (SV3).
    public var adopted: Int
}

/// Reads what can be read from a damaged store (SV1–SV6).
public enum Salvage {
    /// Reads the store at `path`, changing nothing.
    ///
    /// - Throws: `.notFound` when there is no page file; `.corrupt` when neither meta page
    ///   validates (SV1); `.notADocStore`, `.versionTooNew` as opening would; `.io`.
    public static func read(at path: String, fileSystem: any FileSystem = FoundationFileSystem()) throws(EngineError) -> SalvagedStore {
        guard fileSystem.fileExists(path) else { throw EngineError(.notFound, "no store at this path", file: path) }
        let file = try fileSystem.openFile(path, create: false, readOnly: true)
        defer { file.close() }
        let meta = try newestMeta(file, path)
        var reader = SalvageReader(file: file, path: path, pageSize: meta.pageSize, pageCount: meta.pageCount,
                                   blobs: BlobStore(fileSystem: fileSystem, directory: path + "-blobs"))
        // The catalog tree: tree name → root and count (SV7: its lost leaves are looked for first).
        var trees: [String: [[UInt8]: [UInt8]]] = [:]
        var catalog = reader.walk(tree: "$catalog", root: meta.catalogRoot)
        reader.readFreeList(meta)
        if reader.lostCatalog {
            var found = ["$catalog": catalog]
            reader.adoptOrphans(into: &found, only: { $0 == "$catalog" }, shaped: SalvageReader.looksLikeCatalog)
            catalog = found["$catalog"] ?? catalog
        }
        for (nameBytes, info) in catalog.sorted(by: { $0.key.lexicographicallyPrecedes($1.key) }) {
            let name = String(decoding: nameBytes, as: UTF8.self)
            guard let tree = try? TreeInfo.decode(info, name: name, file: path) else {
                reader.problems.append("the catalog entry of tree \(name) does not decode: the tree is lost")
                continue
            }
            trees[name] = reader.walk(tree: name, root: tree.root)
        }
        reader.adoptOrphans(into: &trees, only: { $0 != "$catalog" }, shaped: { _ in true })
        var lastLSN = meta.checkpointLSN
        let walPath = path + "-wal"
        if fileSystem.fileExists(walPath) {
            do {
                let wal = try fileSystem.openFile(walPath, create: false, readOnly: true)
                defer { wal.close() }
                let report = try WALReader.read(file: wal, expectedGeneration: meta.walGeneration, expectedStart: meta.checkpointLSN.next)
                for record in report.records {
                    reader.apply(record.operations, to: &trees, lsn: record.lsn)
                    lastLSN = record.lsn
                }
                if let reason = report.stopReason, report.tailBytes > 0 {
                    reader.problems.append("the WAL stops at offset \(report.validEnd) (\(reason)): \(report.tailBytes) bytes after it are not applied")
                }
            } catch {
                reader.problems.append("the WAL does not read (\(error.message)): commits after the checkpoint (lsn \(meta.checkpointLSN.rawValue)) are lost")
            }
        }
        var result: [String: [(key: [UInt8], value: [UInt8])]] = [:]
        for (name, entries) in trees where !name.hasPrefix("$") {
            result[name] = entries.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { (key: $0.key, value: $0.value) }
        }
        return SalvagedStore(storeID: meta.storeID, pageSize: meta.pageSize, lastLSN: lastLSN, trees: result,
                             problems: reader.problems, lostSubtrees: reader.lost, lostEntries: reader.lostEntries, unassigned: reader.unassigned)
    }

    /// A key for messages: as text when it is printable, else as hex (cut after 24 bytes).
    public static func show(_ key: [UInt8]) -> String {
        if let s = String(validating: key, as: UTF8.self), s.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F }) { return "\"\(s)\"" }
        return "0x" + key.prefix(24).map { String(format: "%02x", $0) }.joined() + (key.count > 24 ? "…" : "")
    }

    /// The newer valid meta page (SV1). Slot 1 sits at the page size, which a damaged slot 0
    /// cannot tell: each valid size is tried.
    private static func newestMeta(_ file: any StorageFile, _ path: String) throws(EngineError) -> MetaPage {
        var found: [MetaPage] = []
        var refusal: EngineError?      // not a DocStore file, another version: said as opening would
        func decode(at offset: UInt64, slot: Int) throws(EngineError) -> MetaPage? {
            var bytes = [UInt8](repeating: 0, count: MetaPage.size)
            let n = try withMutableRawBytes(&bytes) { (raw) throws(EngineError) in try file.read(into: raw, at: offset) }
            guard n == MetaPage.size else { return nil }
            do throws(EngineError) {
                return try withRawBytes(bytes) { (raw) throws(EngineError) in try MetaPage.decode(raw, slot: slot, file: path) }
            } catch {
                // Slot 1 is probed at each page size, so only slot 0 says what the file is.
                if slot == 0 && error.code != .corrupt { refusal = error }
                return nil
            }
        }
        if let meta = try decode(at: 0, slot: 0) { found.append(meta) }
        for size in EngineOptions.validPageSizes.sorted() where found.first.map({ $0.pageSize == size }) ?? true {
            if let meta = try decode(at: UInt64(size), slot: 1), meta.pageSize == size {
                found.append(meta)
                break
            }
        }
        if let newest = found.max(by: { $0.generation.rawValue < $1.generation.rawValue }) { return newest }
        if let refusal { throw refusal }
        throw EngineError(.corrupt, "neither meta page validates: the store's checkpoint cannot be found, so nothing can be salvaged", file: path)
    }
}

/// Reads pages straight from the file, validating each, and collects what it could not read.
struct SalvageReader: PageSource {
    let file: any StorageFile
    let path: String
    let pageSize: Int
    let pageCount: UInt64
    let blobs: BlobStore
    var problems: [String] = []
    var lostEntries: [(tree: String, key: [UInt8])] = []
    /// Pages the walks reached (SV3).
    private var reached = Set<UInt64>()
    /// Subtrees skipped, with the key range [low, high) their parent gave them.
    private(set) var lost: [LostSubtree] = []

    init(file: any StorageFile, path: String, pageSize: Int, pageCount: UInt64, blobs: BlobStore) {
        self.file = file
        self.path = path
        self.pageSize = pageSize
        self.pageCount = pageCount
        self.blobs = blobs
    }

    /// A page as the file holds it, validated like a page read from disk (I10).
    func page(_ number: PageNumber) throws(EngineError) -> Page {
        guard number.rawValue >= 2, number.rawValue < pageCount else {
            throw .corrupt("a link points at page \(number.rawValue), outside the checkpoint's \(pageCount) pages", file: path, page: number)
        }
        return try Pager.read(number, from: file, path: path, pageSize: pageSize)
    }

    /// Every readable entry of the tree at `root` (SV2).
    mutating func walk(tree: String, root: PageNumber) -> [[UInt8]: [UInt8]] {
        var entries: [[UInt8]: [UInt8]] = [:]
        var stack: [(PageNumber, Int, [UInt8]?, [UInt8]?)] = root == .none ? [] : [(root, 0, nil, nil)]
        while let (n, depth, low, high) = stack.popLast() {
            guard depth <= BTree.maxDepth, reached.insert(n.rawValue).inserted else {
                problems.append("tree \(tree): page \(n.rawValue) is reached twice or too deep; skipped")
                continue
            }
            let page: Page
            do throws(EngineError) {
                page = try self.page(n)
                guard page.type == .leaf || page.type == .branch else {
                    throw .corrupt("a \(page.type.map { "\($0)" } ?? "unknown") page inside a tree", file: path, page: n)
                }
            } catch {
                lost.append(LostSubtree(tree: tree, page: n, low: low, high: high, adopted: 0))
                problems.append("tree \(tree): page \(n.rawValue) does not read (\(error.message)); the entries \(range(low, high)) under it are lost, unless they turn up in pages nothing references")
                continue
            }
            if page.type == .branch {
                for p in 0..<page.childCount {
                    let lo = p == 0 ? low : Array(page.branchKey(p - 1))
                    let hi = p < page.count ? Array(page.branchKey(p)) : high
                    stack.append((page.child(at: p), depth + 1, lo, hi))
                }
                continue
            }
            take(page, tree: tree, into: &entries)
        }
        return entries
    }

    /// A leaf's entries whose values read (SV2).
    private mutating func take(_ page: Page, tree: String, into entries: inout [[UInt8]: [UInt8]]) {
        for i in 0..<page.count {
            let key = Array(page.leafKey(i))
            do throws(EngineError) {
                entries[key] = try BTree.value(of: page, at: i, in: self, blobs: blobs, file: path)
            } catch {
                lostEntries.append((tree, key))
                problems.append("tree \(tree): the value of key \(Salvage.show(key)) on page \(page.number.rawValue) does not read (\(error.message)); that entry is lost")
            }
        }
    }

    /// Pages on the free list (SV3), read once; nil when it does not read.
    private var free: Set<UInt64>?
    /// SV7: leaves of trees whose names were lost.
    private(set) var unassigned: [[(key: [UInt8], value: [UInt8])]] = []

    /// Whether a page of the catalog of trees was lost (SV7).
    var lostCatalog: Bool { lost.contains { $0.tree == "$catalog" } }

    /// Reads the free list (SV3; rules F1–F5, as opening reads it).
    mutating func readFreeList(_ meta: MetaPage) {
        do {
            let (pages, chain) = try FreeListPage.read(head: meta.freeListHead, count: meta.freeListCount, pageCount: pageCount,
                                                       pageSize: pageSize, path: path) { [file, path, pageSize] (n) throws(EngineError) in
                try Pager.read(n, from: file, path: path, pageSize: pageSize, expecting: .freeList)
            }
            free = Set(pages)
            reached.formUnion(chain)
        } catch {
            problems.append("the free list does not read (\(error.message)): unreferenced pages are not adopted")
        }
    }

    /// Catalog entries: printable tree names, 16-byte values (SV7).
    static func looksLikeCatalog(_ page: Page) -> Bool {
        (0..<page.count).allSatisfy { i in
            page.leafValueInfo(i).valueLength == TreeInfo.encodedSize && page.leafValueInfo(i).storage == .inline
                && Array(page.leafKey(i)).allSatisfy { $0 >= 0x20 && $0 < 0x7F }
        }
    }

    /// SV3: unreferenced, unlisted leaves whose keys fit exactly one lost subtree of a tree
    /// `only` accepts, and whose page `shaped` accepts. With the catalog lost (SV7), the others
    /// go to `unassigned`.
    mutating func adoptOrphans(into trees: inout [String: [[UInt8]: [UInt8]]], only: (String) -> Bool, shaped: (Page) -> Bool) {
        let keepUnassigned = lostCatalog && only("records")
        guard let free, lost.contains(where: { only($0.tree) }) || keepUnassigned else { return }
        for n in UInt64(2)..<pageCount where !reached.contains(n) && !free.contains(n) {
            guard let page = try? self.page(PageNumber(n)), page.type == .leaf, page.count > 0, shaped(page) else { continue }
            let first = Array(page.leafKey(0)), last = Array(page.leafKey(page.count - 1))
            let fits = lost.indices.filter { i in
                only(lost[i].tree)
                    && (lost[i].low.map { !first.lexicographicallyPrecedes($0) } ?? true) && (lost[i].high.map { last.lexicographicallyPrecedes($0) } ?? true)
            }
            guard fits.count == 1, let i = fits.first else {
                if keepUnassigned {
                    reached.insert(n)
                    var entries: [[UInt8]: [UInt8]] = [:]
                    take(page, tree: "(unknown)", into: &entries)
                    unassigned.append(entries.sorted { $0.key.lexicographicallyPrecedes($1.key) }.map { (key: $0.key, value: $0.value) })
                }
                continue
            }
            reached.insert(n)
            let tree = lost[i].tree
            var entries = trees[tree] ?? [:]
            let before = entries.count
            take(page, tree: tree, into: &entries)
            lost[i].adopted += entries.count - before
            trees[tree] = entries
            problems.append("tree \(tree): page \(n), which nothing references, holds \(page.count) entries of the lost range; they are recovered")
        }
        if !unassigned.isEmpty {
            problems.append("\(unassigned.count) leaf page\(unassigned.count == 1 ? "" : "s") that nothing references belong to trees whose names were lost with the catalog of trees")
        }
    }

    /// SV4: one WAL record's operations, in order.
    mutating func apply(_ operations: [WALOperation], to trees: inout [String: [[UInt8]: [UInt8]]], lsn: LSN) {
        for op in operations {
            switch op {
            case let .put(tree, key, value): trees[tree, default: [:]][key] = value
            case let .putBlob(tree, key, blob, length):
                do throws(EngineError) { trees[tree, default: [:]][key] = try blobs.read(blob, expectedLength: length) } catch {
                    lostEntries.append((tree, key))
                    trees[tree]?[key] = nil
                    problems.append("tree \(tree): the value of key \(Salvage.show(key)) written at lsn \(lsn.rawValue) is in blob \(blob), which does not read (\(error.message)); that entry is lost")
                }
            case let .delete(tree, key): trees[tree]?[key] = nil
            case let .createTree(tree): if trees[tree] == nil { trees[tree] = [:] }
            case let .dropTree(tree): trees[tree] = nil
            }
        }
    }

    private func range(_ low: [UInt8]?, _ high: [UInt8]?) -> String {
        "from \(low.map(Salvage.show) ?? "the first key") to \(high.map(Salvage.show) ?? "the last key")"
    }
}
