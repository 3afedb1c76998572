// MemoryFileSystem: a FileSystem held entirely in memory (leveldb's memenv).
//
// Used for in-memory stores (tests, previews) and as the base of the fault-injecting twin. Every
// file is a byte array behind the file system's one Mutex; sync is a no-op because nothing here
// outlives the process. Locks are per open file: a second lockExclusive on the same path fails with
// `.storeLocked` until the holder closes, as flock would between two processes.

import Synchronization

/// A file system in memory. Copies share nothing: `snapshot()` gives an independent copy.
public final class MemoryFileSystem: FileSystem {
    struct State {
        var files: [String: [UInt8]] = [:]
        var directories: Set<String> = ["/"]
        var lockHolders: [String: ObjectIdentifier] = [:]
    }
    let state: Locked<State>

    /// Creates an empty file system (only the root directory exists).
    public init() { state = Locked(State()) }

    /// Creates a file system holding these files (path → bytes); their directories are implied.
    public init(files: [String: [UInt8]]) {
        var s = State()
        s.files = files
        for path in files.keys {
            var dir = MemoryFileSystem.parent(of: path)
            while dir != "/" && !dir.isEmpty { s.directories.insert(dir); dir = MemoryFileSystem.parent(of: dir) }
        }
        state = Locked(s)
    }

    /// The bytes of every file, by path.
    public func snapshot() -> [String: [UInt8]] { state.withLock { $0.files } }

    /// The bytes of one file, or nil.
    public func contents(of path: String) -> [UInt8]? { state.withLock { $0.files[path] } }

    /// Replaces the bytes of one file (tests use this to corrupt files).
    public func setContents(of path: String, to bytes: [UInt8]) { state.withLock { $0.files[path] = bytes } }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "" }
        let p = String(path[..<slash])
        return p.isEmpty ? "/" : p
    }

    public func openFile(_ path: String, create: Bool, readOnly: Bool) throws(EngineError) -> any StorageFile {
        try state.withLock { (s) throws(EngineError) in
            if s.files[path] == nil {
                guard create, !readOnly else { throw EngineError(.notFound, "no such file", file: path) }
                let dir = MemoryFileSystem.parent(of: path)
                guard dir.isEmpty || s.directories.contains(dir) else {
                    throw EngineError(.io, "cannot create the file: its directory does not exist", file: path)
                }
                s.files[path] = []
            }
        }
        return MemoryFile(fileSystem: self, path: path, readOnly: readOnly)
    }

    public func fileExists(_ path: String) -> Bool {
        state.withLock { $0.files[path] != nil || $0.directories.contains(path) }
    }

    public func removeFile(_ path: String) throws(EngineError) {
        state.withLock { s in
            s.files.removeValue(forKey: path)
            s.directories.remove(path)
        }
    }

    public func renameFile(from: String, to: String) throws(EngineError) {
        try state.withLock { (s) throws(EngineError) in
            guard let bytes = s.files.removeValue(forKey: from) else {
                throw EngineError(.io, "no such file to rename", file: from)
            }
            s.files[to] = bytes
        }
    }

    public func createDirectory(_ path: String) throws(EngineError) {
        state.withLock { s in
            var dir = path
            while dir != "/" && !dir.isEmpty { s.directories.insert(dir); dir = MemoryFileSystem.parent(of: dir) }
        }
    }

    public func listDirectory(_ path: String) throws(EngineError) -> [String] {
        try state.withLock { (s) throws(EngineError) in
            guard s.directories.contains(path) else { throw EngineError(.io, "no such directory", file: path) }
            let prefix = path.hasSuffix("/") ? path : path + "/"
            var names: [String] = []
            for key in s.files.keys where key.hasPrefix(prefix) {
                let rest = key.dropFirst(prefix.count)
                if !rest.contains("/") { names.append(String(rest)) }
            }
            for key in s.directories where key.hasPrefix(prefix) {
                let rest = key.dropFirst(prefix.count)
                if !rest.isEmpty && !rest.contains("/") { names.append(String(rest)) }
            }
            return names.sorted()
        }
    }

    public func syncDirectory(_ path: String) throws(EngineError) {}
}

/// A file of a MemoryFileSystem. It holds no bytes itself: every call goes to the file system's
/// locked state, so the class has only immutable stored properties and is Sendable.
final class MemoryFile: StorageFile {
    let fileSystem: MemoryFileSystem
    let path: String
    let readOnly: Bool
    private let closed = Atomic<Bool>(false)

    init(fileSystem: MemoryFileSystem, path: String, readOnly: Bool) {
        self.fileSystem = fileSystem
        self.path = path
        self.readOnly = readOnly
    }

    private func checkOpen() throws(EngineError) {
        if closed.load(ordering: .relaxed) { throw EngineError(.io, "file is closed", file: path) }
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(EngineError) -> Int {
        try checkOpen()
        return fileSystem.state.withLock { s in
            guard let bytes = s.files[path], offset < UInt64(bytes.count) else { return 0 }
            let start = Int(offset)
            let n = min(buffer.count, bytes.count - start)
            bytes.withUnsafeBytes { raw in
                if let dst = buffer.baseAddress, let src = raw.baseAddress {
                    dst.copyMemory(from: src + start, byteCount: n)
                }
            }
            return n
        }
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(EngineError) {
        try checkOpen()
        if readOnly { throw EngineError(.readOnly, "file is open read-only", file: path) }
        fileSystem.state.withLock { s in
            var file = s.files[path] ?? []
            s.files[path] = nil
            MemoryFile.apply(bytes, at: Int(offset), to: &file)
            s.files[path] = file
        }
    }

    /// Writes `bytes` into `file` at `offset`, zero-filling any gap.
    static func apply(_ bytes: UnsafeRawBufferPointer, at offset: Int, to file: inout [UInt8]) {
        let end = offset + bytes.count
        // An array of zeros (a memset, then one copy) rather than a lazy repetition: unoptimized
        // test builds would step through a lazy sequence byte by byte.
        if file.count < end { file.append(contentsOf: [UInt8](repeating: 0, count: end - file.count)) }
        file.withUnsafeMutableBytes { dst in
            if let src = bytes.baseAddress, let base = dst.baseAddress {
                (base + offset).copyMemory(from: src, byteCount: bytes.count)
            }
        }
    }

    func sync() throws(EngineError) { try checkOpen() }

    func truncate(to size: UInt64) throws(EngineError) {
        try checkOpen()
        fileSystem.state.withLock { s in
            var file = s.files[path] ?? []
            s.files[path] = nil
            let n = Int(size)
            if file.count > n { file.removeSubrange(n...) } else { file.append(contentsOf: [UInt8](repeating: 0, count: n - file.count)) }
            s.files[path] = file
        }
    }

    func size() throws(EngineError) -> UInt64 {
        try checkOpen()
        return fileSystem.state.withLock { UInt64($0.files[path]?.count ?? 0) }
    }

    /// Does not wait: the holder is in this process, and nothing here releases it meanwhile.
    func lockExclusive(waitingUpTo timeout: Duration) throws(EngineError) {
        try checkOpen()
        let me = ObjectIdentifier(self)
        try fileSystem.state.withLock { (s) throws(EngineError) in
            if let holder = s.lockHolders[path], holder != me {
                throw EngineError(.storeLocked, "another process has this store open for writing; open it read-only or close the other process", file: path)
            }
            s.lockHolders[path] = me
        }
    }

    func close() {
        if closed.exchange(true, ordering: .relaxed) { return }
        let me = ObjectIdentifier(self)
        fileSystem.state.withLock { s in
            if s.lockHolders[path] == me { s.lockHolders[path] = nil }
        }
    }
}
