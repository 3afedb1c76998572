// FaultInjectingFileSystem: an in-memory FileSystem that remembers what is durable and what is not,
// crashes at any chosen call, fails calls with EIO or ENOSPC, and builds the disk image a power cut
// could leave behind (SQLite's test6.c crash VFS, leveldb's fault_injection_test.cc).
//
// Model. Each file is an inode with the bytes a reader sees now (`current`), the bytes last made
// durable by a sync (`durable`), and the writes and truncates since then (`pending`, in order).
// Directory entries have the same split: `names` is what exists now, `durableNames` what a crash
// keeps for sure — updated for one directory by syncDirectory of that directory. A crash image
// starts from the durable state and then, per the chosen mode, applies each pending write,
// drops it, or tears it at a byte (independently, so a later write can land while an earlier one
// is lost: reordering), and keeps or loses each unsynced directory change.
//
// Every mutating call (create, write, truncate, sync, directory sync, remove, rename) has an index
// starting at 1. `crash(at:)` makes that call the last: a crashing write is recorded as pending (it
// may be torn in the image), and every later call throws. `fail(at:…)` makes a call throw
// `.io`/`.noSpace` instead; a failed sync also forgets the pending writes it should have made
// durable (Linux reports a writeback error once and drops the dirty pages: "fsyncgate").

import DocStoreEngine
import Foundation
import Synchronization

/// What a crash image does with each write that was not yet synced.
public enum CrashMode: Sendable, CustomStringConvertible {
    /// Only what was synced survives.
    case dropUnsynced
    /// Every write reached the disk (as if the crash came just after the last call).
    case applyAll
    /// Each unsynced write and directory change independently lands, is lost, or (writes only)
    /// lands torn at a random byte — decided by this seed.
    case random(seed: UInt64)

    public var description: String {
        switch self {
        case .dropUnsynced: "drop-unsynced"
        case .applyAll: "apply-all"
        case .random(let seed): "random(\(seed))"
        }
    }
}

/// The kind of error an injected fault raises.
public enum InjectedFault: Sendable {
    case eio
    case enospc
}

/// A FileSystem for crash and fault tests. Thread-safe: all state is behind one Mutex.
public final class FaultInjectingFileSystem: FileSystem {
    final class Inode: @unchecked Sendable {
        // Only touched while the file system's mutex is held (see State), which is why the
        // unchecked conformance is safe.
        var current: [UInt8] = []
        var durable: [UInt8] = []
        var pending: [Op] = []
    }

    enum Op {
        case write(offset: Int, bytes: [UInt8])
        case truncate(size: Int)
    }

    struct State {
        var names: [String: Inode] = [:]
        var durableNames: [String: Inode] = [:]
        var directories: Set<String> = ["/"]
        var calls = 0
        var crashAt: Int?
        var crashed = false
        var failAt: Int?
        var failKind: InjectedFault = .eio
        var failPersistently = false
        var failing = false
        /// What the first injected failure hit ("remove /db/x.blob").
        var injectedCall: String?
        var lockHolders: [String: ObjectIdentifier] = [:]
        /// A log of the mutating calls, for failure messages ("write /db/x.docstore-wal @32 +94").
        var log: [String] = []
    }

    let state: Locked<State>

    /// An empty file system with the directory `/db`.
    public init() {
        var s = State()
        s.directories.insert("/db")
        state = Locked(s)
    }

    /// A file system whose durable and current contents are these files (a crash image).
    public init(files: [String: [UInt8]]) {
        var s = State()
        s.directories.insert("/db")
        for (path, bytes) in files {
            let inode = Inode()
            inode.current = bytes
            inode.durable = bytes
            s.names[path] = inode
            s.durableNames[path] = inode
            s.directories.insert(FaultInjectingFileSystem.parent(of: path))
        }
        state = Locked(s)
    }

    // MARK: - Controls

    /// Makes mutating call number `n` (1-based) the crash: it and every later call fail.
    public func crash(at n: Int) { state.withLock { $0.crashAt = n } }

    /// Makes mutating call number `n` fail with `kind`; with `persistently`, every later call too.
    public func fail(at n: Int, with kind: InjectedFault, persistently: Bool = false) {
        state.withLock {
            $0.failAt = n
            $0.failKind = kind
            $0.failPersistently = persistently
        }
    }

    /// Stops injecting failures (the fault "clears").
    public func clearFaults() { state.withLock { $0.failAt = nil; $0.failing = false } }

    /// How many mutating calls have been made.
    public var callCount: Int { state.withLock { $0.calls } }

    /// The call the injected failure hit, once it has.
    public var injectedCall: String? { state.withLock { $0.injectedCall } }

    /// Whether the simulated crash has happened.
    public var hasCrashed: Bool { state.withLock { $0.crashed } }

    /// The last `n` mutating calls, for failure messages.
    public func recentCalls(_ n: Int = 8) -> [String] { state.withLock { Array($0.log.suffix(n)) } }

    /// The files a power cut at this moment could leave, per `mode`.
    public func crashImage(_ mode: CrashMode) -> [String: [UInt8]] {
        state.withLock { s in
            var rng = SplitMix64(seed: { if case .random(let seed) = mode { return seed } else { return 0 } }())
            func coin() -> Bool { rng.next() & 1 == 0 }
            // Which directory entries survive.
            var entries: [String: Inode] = [:]
            let allPaths = Set(s.names.keys).union(s.durableNames.keys)
            for path in allPaths {
                let now = s.names[path], then = s.durableNames[path]
                let chosen: Inode?
                switch mode {
                case .dropUnsynced: chosen = then
                case .applyAll: chosen = now
                case .random: chosen = (now === then) ? now : (coin() ? now : then)
                }
                if let chosen { entries[path] = chosen }
            }
            var image: [String: [UInt8]] = [:]
            var built: [ObjectIdentifier: [UInt8]] = [:]
            for (path, inode) in entries {
                if let done = built[ObjectIdentifier(inode)] { image[path] = done; continue }
                var bytes = inode.durable
                for op in inode.pending {
                    switch mode {
                    case .dropUnsynced: continue
                    case .applyAll: FaultInjectingFileSystem.apply(op, to: &bytes)
                    case .random:
                        switch rng.next() % 3 {
                        case 0: continue
                        case 1: FaultInjectingFileSystem.apply(op, to: &bytes)
                        default:
                            if case .write(let offset, let data) = op, data.count > 1 {
                                let cut = Int(rng.next() % UInt64(data.count))
                                FaultInjectingFileSystem.apply(.write(offset: offset, bytes: Array(data[..<cut])), to: &bytes)
                            } else {
                                FaultInjectingFileSystem.apply(op, to: &bytes)
                            }
                        }
                    }
                }
                built[ObjectIdentifier(inode)] = bytes
                image[path] = bytes
            }
            return image
        }
    }

    static func apply(_ op: Op, to bytes: inout [UInt8]) {
        switch op {
        case let .write(offset, data):
            let end = offset + data.count
            if bytes.count < end { bytes.append(contentsOf: [UInt8](repeating: 0, count: end - bytes.count)) }
            bytes.replaceSubrange(offset..<end, with: data)
        case let .truncate(size):
            if bytes.count > size { bytes.removeSubrange(size...) } else { bytes.append(contentsOf: [UInt8](repeating: 0, count: size - bytes.count)) }
        }
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        let p = String(path[..<slash])
        return p.isEmpty ? "/" : p
    }

    // MARK: - Call accounting

    /// Counts a mutating call; returns what to do: proceed, or throw (crash / injected failure).
    /// `inFlight` is applied as pending when this call is the crash (a write the disk may have
    /// started).
    func enter(_ s: inout State, _ what: String) -> EngineError? {
        if s.crashed { return EngineError(.io, "simulated crash: the machine is down") }
        s.calls += 1
        s.log.append("#\(s.calls) \(what)")
        if s.log.count > 64 { s.log.removeFirst(s.log.count - 64) }
        if let c = s.crashAt, s.calls >= c {
            s.crashed = true
            return EngineError(.io, "simulated crash at call \(s.calls)")
        }
        if let f = s.failAt, s.calls == f || (s.failPersistently && s.calls > f) {
            s.failing = true
            if s.calls == f { s.injectedCall = what }
            switch s.failKind {
            case .eio: return EngineError(.io, "injected EIO at call \(s.calls)", errno: 5)
            case .enospc: return EngineError(.noSpace, "injected ENOSPC at call \(s.calls)", errno: 28)
            }
        }
        return nil
    }

    func readable(_ s: State) throws(EngineError) {
        if s.crashed { throw EngineError(.io, "simulated crash: the machine is down") }
    }

    // MARK: - FileSystem

    public func openFile(_ path: String, create: Bool, readOnly: Bool) throws(EngineError) -> any StorageFile {
        try state.withLock { (s) throws(EngineError) in
            try readable(s)
            if s.names[path] == nil {
                guard create, !readOnly else { throw EngineError(.notFound, "no such file", file: path) }
                guard s.directories.contains(FaultInjectingFileSystem.parent(of: path)) else {
                    throw EngineError(.io, "no such directory", file: path)
                }
                if let e = enter(&s, "create \(path)") { throw e }
                s.names[path] = Inode()
            }
        }
        return FaultyFile(fs: self, path: path, readOnly: readOnly)
    }

    public func fileExists(_ path: String) -> Bool {
        state.withLock { $0.names[path] != nil || $0.directories.contains(path) }
    }

    public func removeFile(_ path: String) throws(EngineError) {
        try state.withLock { (s) throws(EngineError) in
            if let e = enter(&s, "remove \(path)") { throw e }
            s.names.removeValue(forKey: path)
            s.directories.remove(path)
        }
    }

    public func renameFile(from: String, to: String) throws(EngineError) {
        try state.withLock { (s) throws(EngineError) in
            if let e = enter(&s, "rename \(from) -> \(to)") { throw e }
            guard let inode = s.names.removeValue(forKey: from) else { throw EngineError(.io, "no such file", file: from) }
            s.names[to] = inode
        }
    }

    public func createDirectory(_ path: String) throws(EngineError) {
        try state.withLock { (s) throws(EngineError) in
            try readable(s)
            // Directories themselves are modelled as always durable; their entries are not.
            s.directories.insert(path)
        }
    }

    public func listDirectory(_ path: String) throws(EngineError) -> [String] {
        try state.withLock { (s) throws(EngineError) in
            try readable(s)
            let prefix = path + "/"
            return s.names.keys.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }
                .map { String($0.dropFirst(prefix.count)) }.sorted()
        }
    }

    public func syncDirectory(_ path: String) throws(EngineError) {
        try state.withLock { (s) throws(EngineError) in
            if let e = enter(&s, "syncdir \(path)") { throw e }
            for key in Array(s.durableNames.keys) where FaultInjectingFileSystem.parent(of: key) == path {
                s.durableNames.removeValue(forKey: key)
            }
            for (key, inode) in s.names where FaultInjectingFileSystem.parent(of: key) == path {
                s.durableNames[key] = inode
            }
        }
    }
}

/// A file of a FaultInjectingFileSystem; all state lives in the file system's mutex.
final class FaultyFile: StorageFile {
    let fs: FaultInjectingFileSystem
    let path: String
    let readOnly: Bool
    private let closed = Atomic<Bool>(false)

    init(fs: FaultInjectingFileSystem, path: String, readOnly: Bool) {
        self.fs = fs
        self.path = path
        self.readOnly = readOnly
    }

    private func inode(_ s: FaultInjectingFileSystem.State) throws(EngineError) -> FaultInjectingFileSystem.Inode {
        if closed.load(ordering: .relaxed) { throw EngineError(.io, "file is closed", file: path) }
        guard let inode = s.names[path] else { throw EngineError(.io, "the file was removed", file: path) }
        return inode
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(EngineError) -> Int {
        try fs.state.withLock { (s) throws(EngineError) -> Int in
            try fs.readable(s)
            let node = try inode(s)
            guard offset < UInt64(node.current.count) else { return 0 }
            let start = Int(offset)
            let n = min(buffer.count, node.current.count - start)
            node.current.withUnsafeBytes { raw in
                if let dst = buffer.baseAddress, let src = raw.baseAddress { dst.copyMemory(from: src + start, byteCount: n) }
            }
            return n
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(EngineError) {
        if readOnly { throw EngineError(.readOnly, "file is open read-only", file: path) }
        try fs.state.withLock { (s) throws(EngineError) in
            let node = try inode(s)
            let op = FaultInjectingFileSystem.Op.write(offset: Int(offset), bytes: Array(bytes))
            if let e = fs.enter(&s, "write \(path) @\(offset) +\(bytes.count)") {
                if s.crashed { node.pending.append(op) }  // the write in flight may land, torn or whole
                throw e
            }
            node.pending.append(op)
            FaultInjectingFileSystem.apply(op, to: &node.current)
        }
    }

    func sync() throws(EngineError) {
        try fs.state.withLock { (s) throws(EngineError) in
            let node = try inode(s)
            if let e = fs.enter(&s, "sync \(path)") {
                if !s.crashed {
                    // fsyncgate: the dirty pages are dropped; what was pending never becomes durable,
                    // though reads still see it until the file is reopened.
                    node.pending.removeAll()
                }
                throw e
            }
            node.durable = node.current
            node.pending.removeAll()
        }
    }

    func truncate(to size: UInt64) throws(EngineError) {
        try fs.state.withLock { (s) throws(EngineError) in
            let node = try inode(s)
            let op = FaultInjectingFileSystem.Op.truncate(size: Int(size))
            if let e = fs.enter(&s, "truncate \(path) to \(size)") {
                if s.crashed { node.pending.append(op) }
                throw e
            }
            node.pending.append(op)
            FaultInjectingFileSystem.apply(op, to: &node.current)
        }
    }

    func size() throws(EngineError) -> UInt64 {
        try fs.state.withLock { (s) throws(EngineError) in
            try fs.readable(s)
            return UInt64(try inode(s).current.count)
        }
    }

    func lockExclusive(waitingUpTo timeout: Duration) throws(EngineError) {
        let me = ObjectIdentifier(self)
        try fs.state.withLock { (s) throws(EngineError) in
            if let holder = s.lockHolders[path], holder != me {
                throw EngineError(.storeLocked, "another process has this store open for writing", file: path)
            }
            s.lockHolders[path] = me
        }
    }

    func close() {
        if closed.exchange(true, ordering: .relaxed) { return }
        let me = ObjectIdentifier(self)
        fs.state.withLock { s in if s.lockHolders[path] == me { s.lockHolders[path] = nil } }
    }
}
