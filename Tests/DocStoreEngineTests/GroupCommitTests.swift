// Group commit: concurrent committers in `.full` durability share WAL syncs, every commit is
// durable when its write returns (I4), and all of them land.

import DocStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import DocStoreEngine

/// A file system whose syncs take 10 ms (far longer than a commit, even in a debug build) and are
/// counted, so that committers overlap.
final class SlowSyncFileSystem: FileSystem {
    let base = MemoryFileSystem()
    let walSyncs = Atomic<Int>(0)

    final class File: StorageFile {
        let base: any StorageFile
        let owner: SlowSyncFileSystem
        init(_ base: any StorageFile, _ owner: SlowSyncFileSystem) { self.base = base; self.owner = owner }
        var path: String { base.path }
        func read(into b: UnsafeMutableRawBufferPointer, at o: UInt64) throws(EngineError) -> Int { try base.read(into: b, at: o) }
        func write(_ b: UnsafeRawBufferPointer, at o: UInt64) throws(EngineError) { try base.write(b, at: o) }
        func sync() throws(EngineError) {
            usleep(10_000)
            if path.hasSuffix("-wal") { owner.walSyncs.add(1, ordering: .relaxed) }
            try base.sync()
        }
        func truncate(to s: UInt64) throws(EngineError) { try base.truncate(to: s) }
        func size() throws(EngineError) -> UInt64 { try base.size() }
        func lockExclusive(waitingUpTo timeout: Duration) throws(EngineError) { try base.lockExclusive(waitingUpTo: timeout) }
        func close() { base.close() }
    }

    func openFile(_ path: String, create: Bool, readOnly: Bool) throws(EngineError) -> any StorageFile {
        File(try base.openFile(path, create: create, readOnly: readOnly), self)
    }
    func fileExists(_ path: String) -> Bool { base.fileExists(path) }
    func removeFile(_ path: String) throws(EngineError) { try base.removeFile(path) }
    func renameFile(from: String, to: String) throws(EngineError) { try base.renameFile(from: from, to: to) }
    func createDirectory(_ path: String) throws(EngineError) { try base.createDirectory(path) }
    func listDirectory(_ path: String) throws(EngineError) -> [String] { try base.listDirectory(path) }
    func syncDirectory(_ path: String) throws(EngineError) {}
}

@Suite struct GroupCommitTests {
    @Test func concurrentCommittersShareSyncsAndAllLand() throws {
        let fs = SlowSyncFileSystem()
        try fs.createDirectory("/db")
        var options = EngineOptions()
        options.fileSystem = fs
        options.durability = .full
        let engine = try Engine.open(at: "/db/Group.docstore", options: options)
        try engine.write { try $0.createTree(named: "t") }
        let before = fs.walSyncs.load(ordering: .relaxed)
        let threads = 8, perThread = 20
        // Real threads: concurrentPerform would use only as many threads as there are cores.
        let group = DispatchGroup()
        for t in 0..<threads {
            group.enter()
            let thread = Thread {
                for i in 0..<perThread {
                    do {
                        try engine.write { txn in try txn.put([UInt8(t), UInt8(i)], for: Array("t\(t)-\(i)".utf8), in: "t") }
                    } catch {
                        Issue.record("commit \(t)/\(i) failed: \(error)")
                    }
                }
                group.leave()
            }
            thread.start()
        }
        group.wait()
        let syncs = fs.walSyncs.load(ordering: .relaxed) - before
        let commits = threads * perThread
        print("group commit: \(commits) commits from \(threads) threads took \(syncs) WAL syncs")
        #expect(try engine.read { try $0.count(in: "t") } == commits)
        #expect(syncs < commits / 2, "committers did not share syncs")
        #expect(syncs > 0)
        #expect(try engine.verify().isClean)
    }

    @Test func normalDurabilityDoesNotSyncPerCommit() throws {
        let fs = SlowSyncFileSystem()
        try fs.createDirectory("/db")
        var options = EngineOptions()
        options.fileSystem = fs
        options.durability = .normal
        let engine = try Engine.open(at: "/db/Normal.docstore", options: options)
        let before = fs.walSyncs.load(ordering: .relaxed)
        for i in 0..<50 { try engine.write { txn in try txn.createTreeIfMissing("t"); try txn.put([1], for: [UInt8(i)], in: "t") } }
        #expect(fs.walSyncs.load(ordering: .relaxed) == before)
    }
}
