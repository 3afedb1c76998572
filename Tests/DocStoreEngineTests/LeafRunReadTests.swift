// Reading leaves a run at a time (Cursor R1, Pager.readAhead): past `Cursor.passingAfter` leaves,
// a forward scan of a tree whose leaves lie in consecutive pages reads them with a few calls
// instead of one per leaf, returns exactly what reading them one by one returns, checks each page
// when it reaches it (a damaged page fails only a walk that reaches it, with the page named),
// takes pages committed since the last checkpoint from the cache, never from older bytes in the
// file, and keeps reading its own snapshot while commits, checkpoints and a small cache's
// evictions go on.

import DocStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import DocStoreEngine

/// A MemoryFileSystem that counts the reads of files ending in ".docstore" (the page file).
final class CountingFileSystem: FileSystem {
    let base: MemoryFileSystem
    let pageReads = Atomic<Int>(0)

    init(_ base: MemoryFileSystem) { self.base = base }

    func openFile(_ path: String, create: Bool, readOnly: Bool) throws(EngineError) -> any StorageFile {
        let file = try base.openFile(path, create: create, readOnly: readOnly)
        return path.hasSuffix(".docstore") ? CountingFile(file, self) : file
    }
    func fileExists(_ path: String) -> Bool { base.fileExists(path) }
    func removeFile(_ path: String) throws(EngineError) { try base.removeFile(path) }
    func renameFile(from: String, to: String) throws(EngineError) { try base.renameFile(from: from, to: to) }
    func createDirectory(_ path: String) throws(EngineError) { try base.createDirectory(path) }
    func listDirectory(_ path: String) throws(EngineError) -> [String] { try base.listDirectory(path) }
    func syncDirectory(_ path: String) throws(EngineError) { try base.syncDirectory(path) }

    final class CountingFile: StorageFile {
        let file: any StorageFile
        let owner: CountingFileSystem
        init(_ file: any StorageFile, _ owner: CountingFileSystem) {
            self.file = file
            self.owner = owner
        }
        var path: String { file.path }
        func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(EngineError) -> Int {
            owner.pageReads.add(1, ordering: .relaxed)
            return try file.read(into: buffer, at: offset)
        }
        func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(EngineError) { try file.write(bytes, at: offset) }
        func sync() throws(EngineError) { try file.sync() }
        func truncate(to size: UInt64) throws(EngineError) { try file.truncate(to: size) }
        func size() throws(EngineError) -> UInt64 { try file.size() }
        func lockExclusive(waitingUpTo timeout: Duration) throws(EngineError) { try file.lockExclusive(waitingUpTo: timeout) }
        func close() { file.close() }
    }
}

@Suite struct LeafRunReadTests {
    static let path = "/db/Runs.docstore"

    /// 60 000 entries of ~120 bytes in tree "t" (about 2 000 leaves), put in key order in one
    /// transaction (its leaves in consecutive pages), the engine closed (checkpointed); the files
    /// and the entries.
    static func closedStore() throws -> (files: [String: [UInt8]], entries: [(key: [UInt8], value: [UInt8])]) {
        let fs = MemoryFileSystem()
        try fs.createDirectory("/db")
        var options = EngineOptions()
        options.fileSystem = fs
        let engine = try Engine.open(at: path, options: options)
        var rng = SplitMix64(seed: 22)
        let entries = (0..<60_000).map { i in (key: Array(String(format: "key %06d", i).utf8), value: rng.bytes(120)) }
        try engine.write { txn in
            try txn.createTreeIfMissing("t")
            try txn.put(entries: entries, in: "t")
        }
        try engine.close()
        return (fs.snapshot(), entries)
    }

    static func open(_ files: [String: [UInt8]], cacheBytes: Int? = nil) throws -> (Engine, CountingFileSystem) {
        let fs = CountingFileSystem(MemoryFileSystem(files: files))
        var options = EngineOptions()
        options.fileSystem = fs
        if let cacheBytes { options.cacheBytes = cacheBytes }
        return (try Engine.open(at: path, options: options), fs)
    }

    static func scan(_ engine: Engine) throws(EngineError) -> [(key: [UInt8], value: [UInt8])] {
        let txn = try engine.beginRead()
        defer { txn.close() }
        return try scan(txn)
    }

    static func scan(_ txn: ReadTransaction) throws(EngineError) -> [(key: [UInt8], value: [UInt8])] {
        var out: [(key: [UInt8], value: [UInt8])] = []
        var cursor = try txn.cursor(in: "t")
        var entry = try cursor.first()
        while let e = entry {
            out.append(e)
            entry = try cursor.next()
        }
        return out
    }

    /// The leaves of the page file, in page order, with their first keys.
    static func leaves(_ files: [String: [UInt8]]) -> [(number: UInt64, firstKey: [UInt8])] {
        guard let bytes = files[path] else { return [] }
        var out: [(number: UInt64, firstKey: [UInt8])] = []
        for n in 2..<(bytes.count / 4096) {
            let page = Page(number: PageNumber(UInt64(n)), size: 4096)
            bytes.withUnsafeBytes { page.bytes.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[(n * 4096)..<((n + 1) * 4096)])) }
            if page.type == .leaf, (try? page.validate(file: path, expecting: .leaf)) != nil, page.count > 0 {
                out.append((UInt64(n), Array(page.leafKey(0))))
            }
        }
        return out
    }

    @Test func aScanReadsConsecutiveLeavesARunAtATime() throws {
        let (files, entries) = try Self.closedStore()
        let leafCount = Self.leaves(files).count
        let (engine, fs) = try Self.open(files)
        defer { try? engine.close() }
        let before = fs.pageReads.load(ordering: .relaxed)
        let scanned = try Self.scan(engine)
        let reads = fs.pageReads.load(ordering: .relaxed) - before
        #expect(scanned.count == entries.count)
        #expect(scanned.elementsEqual(entries) { $0.key == $1.key && $0.value == $1.value })
        // One call per leaf would be `leafCount` reads (and a few for branches); the first
        // `passingAfter` leaves are read one by one (and cached), the rest in runs of up to 16.
        print("scan of \(leafCount) leaves: \(reads) page-file reads")
        let passing = leafCount - Cursor.passingAfter
        #expect(passing > 1_000)
        #expect(reads < Cursor.passingAfter + passing / 8, "\(reads) reads for \(leafCount) leaves")
        // The second scan reads the same, through the cache or the file.
        #expect(try Self.scan(engine).elementsEqual(entries) { $0.key == $1.key && $0.value == $1.value })
    }

    @Test func aDamagedLeafInARunFailsOnlyAWalkThatReachesIt() throws {
        var (files, entries) = try Self.closedStore()
        let leaves = Self.leaves(files)
        let victim = leaves[leaves.count * 3 / 4]   // past `passingAfter`: read in a run
        files[Self.path]?[Int(victim.number) * 4096 + 2000] ^= 0xFF   // a byte inside the page: its checksum fails
        let (engine, _) = try Self.open(files)
        defer { try? engine.close() }
        // A walk that stops before the damaged leaf reads fine, though its run read the leaf too.
        let stop = entries.firstIndex { $0.key == victim.firstKey } ?? 0
        #expect(stop > 100 && leaves.count * 3 / 4 > Cursor.passingAfter + 16)
        let txn = try engine.beginRead()
        var cursor = try txn.cursor(in: "t")
        var entry = try cursor.first()
        var seen = 0
        while let e = entry, e.key != victim.firstKey, seen < stop - 1 {
            #expect(e.key == entries[seen].key && e.value == entries[seen].value)
            seen += 1
            entry = try cursor.next()
        }
        #expect(seen == stop - 1)
        txn.close()
        // A scan through it fails, naming the page.
        do {
            _ = try Self.scan(engine)
            Issue.record("a scan over a damaged leaf succeeded")
        } catch {
            #expect(error.code == .corrupt && error.page == PageNumber(victim.number), "\(error)")
        }
    }

    @Test func pagesCommittedSinceTheCheckpointComeFromTheCache() throws {
        let (files, entries) = try Self.closedStore()
        let (engine, _) = try Self.open(files)
        defer { try? engine.close() }
        var model = Dictionary(uniqueKeysWithValues: entries.map { ($0.key, $0.value) })
        var rng = SplitMix64(seed: 7)
        // Rounds of rewrites and deletes with no checkpoint between: new pages stay in the cache
        // while freed ones are reused; each scan must see exactly the model.
        for round in 0..<4 {
            try engine.write { txn in
                for i in stride(from: round, to: entries.count, by: 37) {
                    let key = entries[i].key
                    if rng.next() % 4 == 0 {
                        _ = try txn.delete(key, in: "t")
                        model[key] = nil
                    } else {
                        let value = rng.bytes(100 + Int(rng.next() % 60))
                        try txn.put(value, for: key, in: "t")
                        model[key] = value
                    }
                }
            }
            let scanned = try Self.scan(engine)
            let expected = model.sorted { $0.key.lexicographicallyPrecedes($1.key) }
            #expect(scanned.count == expected.count, "round \(round)")
            #expect(scanned.elementsEqual(expected) { $0.key == $1.key && $0.value == $1.value }, "round \(round)")
        }
    }

    @Test func aSnapshotReadsItsOwnPagesWhileCommitsCheckpointsAndEvictionsGoOn() throws {
        let (files, entries) = try Self.closedStore()
        // A cache of 64 pages: the scan's pages and the commits' come and go.
        let (engine, _) = try Self.open(files, cacheBytes: 64 * 4096)
        defer { try? engine.close() }
        let old = try engine.beginRead()
        defer { old.close() }
        // Read half of the tree in the old snapshot, then let commits free and rewrite pages
        // (checkpointed, so their new contents reach the file) before reading on.
        var cursor = try old.cursor(in: "t")
        var entry = try cursor.first()
        var seen = 0
        while let e = entry, seen < entries.count / 2 {
            #expect(e.key == entries[seen].key && e.value == entries[seen].value, "entry \(seen)")
            seen += 1
            entry = try cursor.next()
        }
        var rng = SplitMix64(seed: 9)
        for round in 0..<3 {
            try engine.write { txn in
                for i in stride(from: round, to: entries.count, by: 5) {
                    if rng.next() % 3 == 0 {
                        _ = try txn.delete(entries[i].key, in: "t")
                    } else {
                        try txn.put(rng.bytes(90 + Int(rng.next() % 80)), for: entries[i].key, in: "t")
                    }
                }
            }
            try engine.checkpoint()
        }
        while let e = entry {
            #expect(seen < entries.count && e.key == entries[seen].key && e.value == entries[seen].value, "entry \(seen)")
            seen += 1
            entry = try cursor.next()
        }
        #expect(seen == entries.count)
        // And the old snapshot scanned again from the start.
        #expect(try Self.scan(old).elementsEqual(entries) { $0.key == $1.key && $0.value == $1.value })
    }
}
