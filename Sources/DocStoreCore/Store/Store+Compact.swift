// Store+Compact: online compaction of a store (Engine+Compact.swift) — what long-lived apps run
// now and then, with history purging, to keep the file near the size of its live data.
//
//   SC1 compaction changes where pages are, never what they hold: contexts, fetches and saves go
//       on meanwhile (each step holds the writer lock for one transaction), object IDs and
//       history tokens stay valid, and nothing is published to observers.
//   SC2 a crash at any point leaves the store with all its data (each step commits whole).

import Foundation
public import DocStoreEngine

extension Store {
    /// Compacts the store's file while it stays in use (SC1, SC2): live pages move toward the
    /// front, underfull leaves are merged, and the free tail is given back to the file system.
    ///
    /// ```swift
    /// try store.deleteHistory(before: Date().addingTimeInterval(-30 * 86_400))
    /// let report = try store.compact()
    /// print(report.bytesReclaimed)
    /// ```
    ///
    /// - Parameter progress: called after each step with the figures so far.
    /// - Throws: ``DocStoreError/Code/storage`` for an I/O error or a read-only store.
    @discardableResult
    public func compact(progress: ((CompactionReport) -> Void)? = nil) throws(DocStoreError) -> CompactionReport {
        do { return try engine.compact(progress: progress) } catch {
            throw DocStoreError(.storage, "compaction failed: \(error.message)", underlying: error)
        }
    }

    /// The page file's size and the bytes of live data in it (every key and value of every
    /// tree), for judging how much compaction could give back.
    public func storageFigures() throws(DocStoreError) -> (fileBytes: UInt64, liveBytes: UInt64) {
        let stats = engine.statistics()
        let live: UInt64 = try read { txn in
            var total: UInt64 = 0
            for tree in try txn.treeNames() {
                var cursor = try txn.cursor(in: tree)
                var entry = try cursor.seek(to: [])
                while let (k, v) = entry {
                    total += UInt64(k.count + v.count)
                    entry = try cursor.next()
                }
            }
            return total
        }
        return (stats.pageCount * UInt64(stats.pageSize), live)
    }
}
