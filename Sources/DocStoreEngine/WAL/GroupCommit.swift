// GroupCommit: committers that wait for durability share one WAL sync.
//
// A commit appends its record under the writer lock, then (in `.full` mode) waits here outside
// that lock. The first waiter to find no sync in flight becomes the leader: it syncs the WAL,
// which makes every record appended before the sync started durable, and wakes the others; those
// whose LSN the sync covered return, the rest elect the next leader. I4: `waitDurable` returns
// only once a sync that began after the record was appended has succeeded. I8: a failed sync
// fails every waiter and every later call — the engine then refuses writes until reopened.

import Foundation

/// `@unchecked Sendable`: all mutable state is read and written only while holding `condition`
/// (an NSCondition, which is itself a lock), so no two threads touch it at once.
final class GroupCommit: @unchecked Sendable {
    private let condition = NSCondition()
    private var appended = LSN.zero      // highest LSN whose record is written to the WAL file
    private var durable = LSN.zero       // highest LSN known synced
    private var syncing = false
    private var failure: EngineError?

    init(durable: LSN) {
        self.appended = durable
        self.durable = durable
    }

    /// Records that the record for `lsn` is in the file (called under the writer lock).
    func didAppend(_ lsn: LSN) {
        condition.lock()
        if lsn > appended { appended = lsn }
        condition.unlock()
    }

    /// Everything up to `lsn` is durable by other means (a checkpoint).
    func markDurable(_ lsn: LSN) {
        condition.lock()
        if lsn > durable { durable = lsn }
        if lsn > appended { appended = lsn }
        condition.broadcast()
        condition.unlock()
    }

    /// Puts the group into the failed state (I8).
    func fail(_ error: EngineError) {
        condition.lock()
        if failure == nil { failure = error }
        condition.broadcast()
        condition.unlock()
    }

    /// Returns once `lsn` is durable, syncing with `sync` as the leader when needed.
    func waitDurable(_ lsn: LSN, sync: () throws(EngineError) -> Void) throws(EngineError) {
        condition.lock()
        defer { condition.unlock() }
        while true {
            if durable >= lsn { return }     // durable before a later failure: it stands (I11)
            if let failure { throw failure }
            if !syncing {
                syncing = true
                let target = appended
                condition.unlock()
                var syncError: EngineError?
                do { try sync() } catch { syncError = error }
                condition.lock()
                syncing = false
                if let syncError {
                    if failure == nil { failure = syncError }
                } else if target > durable {
                    durable = target
                }
                condition.broadcast()
            } else {
                condition.wait()
            }
        }
    }
}
