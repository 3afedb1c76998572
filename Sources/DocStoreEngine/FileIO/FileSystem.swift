// FileSystem: the one seam through which the engine touches storage (leveldb's Env, SQLite's VFS).
//
// Everything the engine reads or writes — the page file, the WAL, blob files, the directory that
// holds them — goes through these two protocols, so tests can swap in MemoryFileSystem or the
// fault-injecting twin in DocStoreTestSupport. Contract:
// - `write` is positioned and may extend the file; bytes written are visible to later reads at once
//   but durable only after `sync` (and, for a newly created or removed file, after `syncDirectory`
//   of its parent).
// - `read` returns the number of bytes read; fewer than asked means end of file.
// - Errors are EngineError with code .io / .noSpace and the errno; nothing here retries.

/// The file system operations the engine needs.
public protocol FileSystem: Sendable {
    /// Opens a file for reading and writing, creating it (empty) when `create` is true and it is
    /// missing. A created file is durable only after `syncDirectory` of its parent.
    func openFile(_ path: String, create: Bool, readOnly: Bool) throws(EngineError) -> any StorageFile
    /// Whether a file or directory exists at `path`.
    func fileExists(_ path: String) -> Bool
    /// Removes a file or an empty directory; durable after `syncDirectory` of its parent.
    /// Removing what does not exist is not an error.
    func removeFile(_ path: String) throws(EngineError)
    /// Renames a file, replacing any file at `to`; durable after `syncDirectory` of the parent.
    func renameFile(from: String, to: String) throws(EngineError)
    /// Creates a directory (and its missing parents) if it does not exist.
    func createDirectory(_ path: String) throws(EngineError)
    /// The names (not paths) of the entries of a directory.
    func listDirectory(_ path: String) throws(EngineError) -> [String]
    /// Makes the creation and removal of entries in a directory durable (fsync of the directory).
    func syncDirectory(_ path: String) throws(EngineError)
}

/// An open file: positioned reads and writes, sync, truncate, size and an advisory lock.
public protocol StorageFile: AnyObject, Sendable {
    /// The path the file was opened at.
    var path: String { get }
    /// Reads up to `buffer.count` bytes at `offset`; returns how many were read (short at EOF).
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(EngineError) -> Int
    /// Writes all of `bytes` at `offset`, extending the file if needed.
    func write(_ bytes: UnsafeRawBufferPointer, at offset: UInt64) throws(EngineError)
    /// Makes every earlier write to this file durable (fdatasync).
    func sync() throws(EngineError)
    /// Cuts or extends the file to `size` bytes.
    func truncate(to size: UInt64) throws(EngineError)
    /// The file's current size in bytes.
    func size() throws(EngineError) -> UInt64
    /// Takes an exclusive advisory lock, waiting up to `timeout` for another open file
    /// description to release it; throws `.storeLocked` if it still holds it then. Released by
    /// `close` or when the process dies.
    func lockExclusive(waitingUpTo timeout: Duration) throws(EngineError)
    /// Closes the file; later calls fail. Closing twice is harmless.
    func close()
}

extension StorageFile {
    /// Reads exactly `buffer.count` bytes at `offset`, or throws `.corrupt` naming the short read.
    func readExactly(into buffer: UnsafeMutableRawBufferPointer, at offset: UInt64) throws(EngineError) {
        let n = try read(into: buffer, at: offset)
        if n != buffer.count {
            throw EngineError.corrupt(
                "file ends after \(n) of \(buffer.count) bytes expected", file: path, offset: offset)
        }
    }

    /// Writes an array of bytes at `offset`.
    func write(_ bytes: [UInt8], at offset: UInt64) throws(EngineError) {
        do {
            try withRawBytes(bytes) { (raw) throws(EngineError) in try write(raw, at: offset) }
        }
    }
}
