// FoundationFileSystem: the real FileSystem, on Foundation's FileHandle and FileManager.
//
// FileHandle has no positioned I/O or fdatasync, so reads and writes use pread/pwrite on its file
// descriptor (measured ~4x faster than seek + write; see shared/TOOLCHAIN.md) and sync uses
// fdatasync. Locks are flock(LOCK_EX|LOCK_NB): released when the holder dies, and unlike fcntl
// locks not dropped by an unrelated close() of the same file in this process; a refusal is
// retried for `EngineOptions.lockTimeout` (a child being spawned holds copies of our descriptors until it
// execs), and descriptors are opened close-on-exec.

import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The file system of the machine, through Foundation.
public struct FoundationFileSystem: FileSystem {
    public init() {}

    public func openFile(_ path: String, create: Bool, readOnly: Bool) throws(EngineError) -> any StorageFile {
        if !fileExists(path) {
            guard create, !readOnly else {
                throw EngineError(.notFound, "no such file", file: path, errno: ENOENT)
            }
        }
        // O_CLOEXEC in the open itself: a descriptor marked only afterwards could be inherited
        // for good by a program another thread starts in between (it would then hold the
        // writer's lock for as long as it runs).
        // New files get 0666 less the process's umask, as FileManager's did.
        let creates = create && !readOnly
        let flags = (readOnly ? O_RDONLY : O_RDWR | (creates ? O_CREAT : 0)) | O_CLOEXEC
        let fd = Glibc.open(path, flags, 0o666)
        guard fd >= 0 else {
            let code = Glibc.errno
            // Creating, ENOENT means the directory is missing: an I/O error, not "no store here".
            if code == ENOENT && !creates { throw EngineError(.notFound, "no such file", file: path, errno: code) }
            let what = readOnly ? "cannot open the file for reading"
                : creates ? "cannot create or open the file for reading and writing (check the directory exists and is writable)"
                : "cannot open the file for reading and writing"
            throw EngineError(.io, "\(what): \(String(cString: strerror(code)))", file: path, errno: code)
        }
        return FoundationFile(path: path, handle: FileHandle(fileDescriptor: fd, closeOnDealloc: true))
    }

    /// Whether something exists at `path` (following symbolic links, as FileManager's
    /// `fileExists`). Asked with access(2): the first use of `FileManager.default` costs a
    /// process as much as the rest of opening the engine.
    public func fileExists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    public func removeFile(_ path: String) throws(EngineError) {
        if unlink(path) != 0 && Glibc.errno != ENOENT {
            // A directory: unlink refuses it (EISDIR on Linux); rmdir removes it when empty.
            if Glibc.errno == EISDIR || Glibc.errno == EPERM, rmdir(path) == 0 { return }
            throw EngineError(.io, "cannot remove the file", file: path, errno: Glibc.errno)
        }
    }

    public func renameFile(from: String, to: String) throws(EngineError) {
        if rename(from, to) != 0 {
            throw EngineError(.io, "cannot rename the file to \(to)", file: from, errno: Glibc.errno)
        }
    }

    public func createDirectory(_ path: String) throws(EngineError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw EngineError(.io, "cannot create the directory: \(error.localizedDescription)", file: path)
        }
    }

    public func listDirectory(_ path: String) throws(EngineError) -> [String] {
        do {
            return try FileManager.default.contentsOfDirectory(atPath: path)
        } catch {
            throw EngineError(.io, "cannot list the directory: \(error.localizedDescription)", file: path)
        }
    }

    public func syncDirectory(_ path: String) throws(EngineError) {
        let fd = Glibc.open(path, O_RDONLY | O_DIRECTORY)
        if fd < 0 { throw EngineError(.io, "cannot open the directory to sync it", file: path, errno: Glibc.errno) }
        defer { _ = Glibc.close(fd) }
        if fsync(fd) != 0 { throw FoundationFile.ioError("cannot sync the directory", path: path) }
    }
}

/// A file opened through FoundationFileSystem.
///
/// `FileHandle` is Sendable; the only other state is the immutable path, so this class is too.
final class FoundationFile: StorageFile {
    let path: String
    private let handle: FileHandle
    /// The file's descriptor (internal: tests check its flags).
    var fd: Int32 { handle.fileDescriptor }

    init(path: String, handle: FileHandle) {
        self.path = path
        self.handle = handle
    }

    static func ioError(_ what: String, path: String, offset: UInt64? = nil) -> EngineError {
        let code = Glibc.errno
        let kind: EngineError.Code = (code == ENOSPC || code == EDQUOT) ? .noSpace : .io
        return EngineError(kind, "\(what): \(String(cString: strerror(code)))", file: path, offset: offset, errno: code)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(EngineError) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var done = 0
        while done < buffer.count {
            let n = pread(fd, base + done, buffer.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw Self.ioError("read failed", path: path, offset: offset)
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(EngineError) {
        guard let base = bytes.baseAddress else { return }
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, base + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if Glibc.errno == EINTR { continue }
                throw Self.ioError("write failed", path: path, offset: offset)
            }
            done += n
        }
    }

    func sync() throws(EngineError) {
        if fdatasync(fd) != 0 { throw Self.ioError("sync failed", path: path) }
    }

    func truncate(to size: UInt64) throws(EngineError) {
        if ftruncate(fd, off_t(size)) != 0 { throw Self.ioError("truncate failed", path: path, offset: size) }
    }

    func size() throws(EngineError) -> UInt64 {
        var st = stat()
        if fstat(fd, &st) != 0 { throw Self.ioError("stat failed", path: path) }
        return UInt64(st.st_size)
    }

    /// Takes the writer's lock. A child this process is spawning holds a copy of every
    /// descriptor until it execs (posix_spawn copies the table; close-on-exec and Process's own
    /// closing act only then), so a lock this process released a moment ago can look held by
    /// "another process" for that moment: a refusal is retried every 10 ms until `timeout` has
    /// passed (`EngineOptions.lockTimeout`; a CI run found 100 ms too short while other tests
    /// were starting servers).
    func lockExclusive(waitingUpTo timeout: Duration) throws(EngineError) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: timeout)
        while true {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return }
            let code = Glibc.errno
            guard code == EWOULDBLOCK else { throw Self.ioError("cannot lock the file", path: path) }
            if clock.now >= deadline {
                throw EngineError(.storeLocked, "another process has this store open for writing; open it read-only or close the other process", file: path, errno: code)
            }
            usleep(10_000)
        }
    }

    func close() {
        try? handle.close()
    }
}
