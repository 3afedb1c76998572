// The free list's validity rules F1-F5 (Format/page-file.md § Free list): a free list whose
// entries repeat, go down, or name one of the chain's own pages is refused as `.corrupt` naming
// the list page — even with a correct checksum — when the allocator first reads it (the first
// write; opening and reading do not need it), and verify() reports it. A valid one reads back
// whole.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

@Suite struct FreeListRuleTests {
    /// A closed store whose durable free list has at least `minimumFree` entries, and its meta.
    static func storeWithFreePages(minimumFree: Int = 4) throws -> (files: [String: [UInt8]], meta: MetaPage, path: String, options: EngineOptions) {
        let (engine, fs, options, path) = try TestStores.memory("FreeList")
        try engine.write { txn in
            try txn.createTree(named: "t")
            for i in 0..<600 { try txn.put([UInt8](repeating: UInt8(i % 251), count: 90), for: Array("key\(1000 + i)".utf8), in: "t") }
        }
        try engine.checkpoint()
        try engine.write { txn in
            for i in stride(from: 0, to: 600, by: 2) { try txn.delete(Array("key\(1000 + i)".utf8), in: "t") }
        }
        try engine.checkpoint()
        try engine.checkpoint()
        try engine.close()
        let files = fs.snapshot()
        let file = try MemoryFileSystem(files: files).openFile(path, create: false, readOnly: true)
        let meta = try Recovery.chooseMeta(file: file)
        #expect(meta.freeListCount >= UInt64(minimumFree), "the workload should leave free pages")
        return (files, meta, path, options)
    }

    /// Rewrites entry `j` of the first free-list page and fixes the page's checksum.
    static func setEntry(_ files: inout [String: [UInt8]], path: String, meta: MetaPage, _ j: Int, to value: UInt64) {
        let base = Int(meta.freeListHead.rawValue) * meta.pageSize
        var bytes = files[path] ?? []
        let at = base + PageHeader.size + 8 * j
        for k in 0..<8 { bytes[at + k] = UInt8(truncatingIfNeeded: value >> (8 * UInt64(k))) }
        let crc = bytes[(base + 4)..<(base + meta.pageSize)].withUnsafeBytes { CRC32C.checksum($0) }
        for k in 0..<4 { bytes[base + k] = UInt8(truncatingIfNeeded: crc >> (8 * UInt32(k))) }
        files[path] = bytes
    }

    static func entry(_ files: [String: [UInt8]], path: String, meta: MetaPage, _ j: Int) -> UInt64 {
        let at = Int(meta.freeListHead.rawValue) * meta.pageSize + PageHeader.size + 8 * j
        return (0..<8).reduce(UInt64(0)) { $0 | UInt64(files[path]![at + $1]) << (8 * UInt64($1)) }
    }

    /// Opens the damaged store (which reads no free list), checks that reads still work and
    /// that verify() reports the free list, then returns the error of the first write — where the
    /// allocator reads the list.
    static func openError(_ files: [String: [UInt8]], path: String, options: EngineOptions) -> EngineError? {
        var o = options
        o.fileSystem = MemoryFileSystem(files: files)
        do {
            let engine = try Engine.open(at: path, options: o)
            defer { try? engine.close() }
            #expect(try engine.read { try $0.count(in: "t") } == 300, "reads need no free list")
            let report = try engine.verify()
            #expect(report.problems.contains { $0.description.contains("free list") }, "verify reports the damaged free list")
            try engine.write { try $0.put([1], for: [1], in: "t") }
            return nil
        } catch let error as EngineError {
            return error
        } catch {
            Issue.record("an untyped error: \(error)")
            return nil
        }
    }

    @Test func validFreeListReadsBackWholeAndAscending() throws {
        let (files, meta, path, options) = try Self.storeWithFreePages()
        var o = options
        o.fileSystem = MemoryFileSystem(files: files)
        let engine = try Engine.open(at: path, options: o)
        defer { try? engine.close() }
        #expect(engine.statistics().freePages == Int(meta.freeListCount))
        let free = try FreeListPage.read(head: meta.freeListHead, count: meta.freeListCount, pageCount: meta.pageCount, pager: engine.pager).free
        #expect(free == free.sorted() && Set(free).count == free.count)
        #expect(try engine.verify().isClean)
    }

    @Test func aRepeatedEntryIsCorrupt() throws {
        var (files, meta, path, options) = try Self.storeWithFreePages()
        Self.setEntry(&files, path: path, meta: meta, 1, to: Self.entry(files, path: path, meta: meta, 0))
        let error = try #require(Self.openError(files, path: path, options: options))
        #expect(error.code == .corrupt)
        #expect(error.page == meta.freeListHead)
        #expect(error.message.contains("not above the entry before it"))
    }

    @Test func aDescendingEntryIsCorrupt() throws {
        var (files, meta, path, options) = try Self.storeWithFreePages()
        let first = Self.entry(files, path: path, meta: meta, 0)
        let second = Self.entry(files, path: path, meta: meta, 1)
        Self.setEntry(&files, path: path, meta: meta, 0, to: second)
        Self.setEntry(&files, path: path, meta: meta, 1, to: first)
        let error = try #require(Self.openError(files, path: path, options: options))
        #expect(error.code == .corrupt)
        #expect(error.page == meta.freeListHead)
    }

    @Test func anEntryNamingTheChainItselfIsCorrupt() throws {
        var (files, meta, path, options) = try Self.storeWithFreePages()
        // Replace the entry just below the list page's own number (or the last one) with it,
        // keeping the order ascending so that only the chain rule can catch it.
        let head = meta.freeListHead.rawValue
        let count = Int(meta.freeListCount)
        let entries = (0..<min(count, FreeListPage.capacity(pageSize: meta.pageSize))).map { Self.entry(files, path: path, meta: meta, $0) }
        let j = entries.lastIndex(where: { $0 < head }) ?? 0
        let nextOK = j + 1 >= entries.count || entries[j + 1] > head
        let previousOK = j == 0 || entries[j - 1] < head
        try #require(nextOK && previousOK)
        Self.setEntry(&files, path: path, meta: meta, j, to: head)
        let error = try #require(Self.openError(files, path: path, options: options))
        #expect(error.code == .corrupt)
        #expect(error.message.contains("chain itself"))
    }

    @Test func anEntryOutsideTheFileIsCorrupt() throws {
        var (files, meta, path, options) = try Self.storeWithFreePages()
        Self.setEntry(&files, path: path, meta: meta, Int(min(meta.freeListCount, 2)) - 1, to: meta.pageCount + 5)
        let error = try #require(Self.openError(files, path: path, options: options))
        #expect(error.code == .corrupt)
        #expect(error.page == meta.freeListHead)
    }
}
