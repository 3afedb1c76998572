// StoreFileSwap: replacing a store's files with a complete copy (a migration that rewrote the
// objects) so that a crash at any moment leaves either the old store or the new one.
//
//   SW1 the copy is built beside the store (`X.docstore.migrating`, with its `-wal` and
//       `-blobs/`), complete, checkpointed and closed, before anything of the store changes.
//   SW2 the commit point is the marker file `X.docstore.migration-commit`, written and synced
//       (with its directory) before the first rename. Without a marker, a leftover copy is
//       deleted when the store next opens (the old store stands); with one, the renames are
//       finished when it next opens (the new store stands) — each rename is idempotent.
//   SW3 renames: blob files first (into the store's blob directory; the old store's blob
//       files become orphans, which the engine's sweep removes when it opens), then the WAL,
//       then the page file; then the marker is removed. Every step syncs the directory.

import Foundation
internal import DocStoreEngine

enum StoreFileSwap {
    static func staging(_ path: String) -> String { path + ".migrating" }
    static func marker(_ path: String) -> String { path + ".migration-commit" }

    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    /// Removes a copy left by an interrupted migration (no marker: SW2).
    static func removeStaging(_ path: String, _ fs: any FileSystem) throws(EngineError) {
        let copy = staging(path)
        let blobs = copy + "-blobs"
        if fs.fileExists(blobs) {
            for name in try fs.listDirectory(blobs) { try fs.removeFile(blobs + "/" + name) }
            try fs.removeFile(blobs)
        }
        for file in [copy + "-wal", copy + "-new", copy] where fs.fileExists(file) { try fs.removeFile(file) }
        try fs.syncDirectory(directory(of: path))
    }

    /// Makes the complete copy the store (SW2, SW3).
    static func commit(_ path: String, _ fs: any FileSystem) throws(EngineError) {
        let file = try fs.openFile(marker(path), create: true, readOnly: false)
        defer { file.close() }
        try writeMarker(file)
        try fs.syncDirectory(directory(of: path))
        try rollForward(path, fs)
    }

    private static func writeMarker(_ file: any StorageFile) throws(EngineError) {
        var bytes = Array("commit\n".utf8)
        var failure: EngineError?
        bytes.withUnsafeMutableBytes { raw in
            do throws(EngineError) { try file.write(UnsafeRawBufferPointer(raw), at: 0) } catch { failure = error }
        }
        if let failure { throw failure }
        try file.sync()
    }

    /// Finishes (or repeats) the renames of a committed swap, then removes the marker.
    static func rollForward(_ path: String, _ fs: any FileSystem) throws(EngineError) {
        let copy = staging(path)
        let dir = directory(of: path)
        if fs.fileExists(copy + "-blobs") {
            try fs.createDirectory(path + "-blobs")
            for name in try fs.listDirectory(copy + "-blobs") {
                try fs.renameFile(from: copy + "-blobs/" + name, to: path + "-blobs/" + name)
            }
            try fs.syncDirectory(path + "-blobs")
        }
        if fs.fileExists(copy + "-wal") {
            try fs.renameFile(from: copy + "-wal", to: path + "-wal")
        } else if fs.fileExists(copy), fs.fileExists(path + "-wal") {
            // The copy has no log: the old store's must not be replayed onto it.
            try fs.removeFile(path + "-wal")
        }
        try fs.syncDirectory(dir)
        if fs.fileExists(copy) { try fs.renameFile(from: copy, to: path) }
        try fs.syncDirectory(dir)
        if fs.fileExists(marker(path)) { try fs.removeFile(marker(path)) }
        try fs.syncDirectory(dir)
    }

    /// What opening a store does first: finish a committed swap, or drop an unfinished copy.
    static func recover(_ path: String, _ fs: any FileSystem) throws(EngineError) {
        if fs.fileExists(marker(path)) {
            try rollForward(path, fs)
        } else if fs.fileExists(staging(path)) || fs.fileExists(staging(path) + "-wal") || fs.fileExists(staging(path) + "-new") {
            try removeStaging(path, fs)
        }
    }

    /// A copy written without syncs (durability off, for speed: a backup, a loaded dump) has
    /// its files synced once, whole, before it is renamed into place.
    static func syncStaging(_ path: String, _ fs: any FileSystem) throws(EngineError) {
        for file in [path, path + "-wal"] where fs.fileExists(file) {
            let handle = try fs.openFile(file, create: false, readOnly: false)
            defer { handle.close() }
            try handle.sync()
        }
        if fs.fileExists(path + "-blobs") {
            for name in try fs.listDirectory(path + "-blobs") {
                let handle = try fs.openFile(path + "-blobs/" + name, create: false, readOnly: false)
                defer { handle.close() }
                try handle.sync()
            }
            try fs.syncDirectory(path + "-blobs")
        }
        try fs.syncDirectory(directory(of: path))
    }

    /// Builds a new store at `path` (nothing may be there): `fill` writes into an engine open on
    /// the staging files, without syncs; the copy is then checkpointed, closed, synced whole and
    /// renamed into place. On any error the staging files are removed and nothing is at `path`.
    static func build<R>(_ path: String, _ fs: any FileSystem, pageSize: Int, continuing: (storeID: UUID, lastLSN: LSN),
                         _ fill: (Engine) throws -> R) throws -> R {
        try removeStaging(path, fs)
        var options = EngineOptions()
        options.fileSystem = fs
        options.durability = .off
        options.pageSize = pageSize
        options.continuing = continuing
        let copy = try Engine.open(at: staging(path), options: options)
        let result: R
        do {
            result = try fill(copy)
            try copy.checkpoint()
            try copy.close()
        } catch {
            try? copy.close()
            try? removeStaging(path, fs)
            throw error
        }
        try syncStaging(staging(path), fs)
        try commit(path, fs)
        return result
    }
}
