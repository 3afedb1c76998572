// Store+Backup: an online copy of the store to another URL — a consistent snapshot taken while the
// store stays open and in use (Core Data's migratePersistentStore(_:to:) for a copy, SQLite's
// backup API).
//
//   BK1 the copy reads one engine snapshot: it holds exactly the commits up to that snapshot's
//       LSN, whatever other contexts save meanwhile (they are never blocked).
//   BK2 it is written in transactions of bounded size (entries and bytes), so memory does not
//       grow with the store; large values go to the copy's blob files as they did here.
//   BK3 it is built beside its destination and renamed into place only when complete
//       (StoreFileSwap), so a crash or an error never leaves a partial store at `url`.
//   BK4 the copy keeps the store's identity and LSN: object IDs, URIs and history tokens are
//       valid in it. Open it with `Store(url:…)` like any store.

import Foundation
internal import DocStoreEngine

/// What ``Store/backup(to:)`` wrote.
public struct BackupReport: Sendable {
    /// Where the copy is.
    public let url: URL
    /// The last commit the copy holds (history after this token is not in it).
    public let token: HistoryToken
    /// Entries copied (records, links, index entries, history and catalog entries).
    public let entries: Int
    /// The copy's page file size in bytes.
    public let bytes: UInt64
}

extension Store {
    /// Copies the store, as of now, to a new store file at `url` while it stays in use (BK1–BK4).
    ///
    /// ```swift
    /// let report = try store.backup(to: URL(fileURLWithPath: "Notes-backup.docstore"))
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/storage`` when something exists at `url` already, or for
    ///   an I/O error (nothing is left at `url` then).
    @discardableResult
    public func backup(to url: URL) throws(DocStoreError) -> BackupReport {
        let path = url.filePath
        let fs = engine.options.fileSystem
        guard !fs.fileExists(path) else {
            throw DocStoreError(.storage, "a file exists at \(path) already; back up to a new path")
        }
        do {
            let snapshot = try engine.beginRead()
            defer { snapshot.close() }
            let entries = try StoreFileSwap.build(path, fs, pageSize: engine.options.pageSize, continuing: (engine.storeID, snapshot.lsn)) { copy in
                try Self.copyTrees(from: snapshot, into: copy)
            }
            let file = try fs.openFile(path, create: false, readOnly: true)
            defer { file.close() }
            return BackupReport(url: url, token: HistoryToken(snapshot.lsn.rawValue), entries: entries, bytes: try file.size())
        } catch {
            throw Store.storageError(error)
        }
    }

    /// Copies every tree of `snapshot` into the empty store `copy`, in transactions of bounded
    /// size (BK2); returns the entries copied.
    static func copyTrees(from snapshot: ReadTransaction, into copy: Engine) throws -> Int {
        var entries = 0
        for tree in try snapshot.treeNames() {
            try copy.write { txn in try txn.createTree(named: tree) }
            var cursor = try snapshot.cursor(in: tree)
            var entry = try cursor.seek(to: [])
            var pending: [(key: [UInt8], value: [UInt8])] = []
            var pendingBytes = 0
            while let (k, v) = entry {
                pending.append((k, v))
                pendingBytes += k.count + v.count
                entry = try cursor.next()
                if pending.count >= 20_000 || pendingBytes >= 8 << 20 || entry == nil {
                    let batch = pending
                    pending = []
                    pendingBytes = 0
                    try copy.write { txn in for (k, v) in batch { try txn.put(v, for: k, in: tree) } }
                    entries += batch.count
                }
            }
        }
        return entries
    }
}
