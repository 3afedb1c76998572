// WriterState and WriterLock: everything only the writer touches — the allocator, the WAL's end,
// the durable meta page, the failed state — behind one lock that a write transaction holds from
// begin to commit (so there is one writer at a time).

import Foundation

struct WriterState {
    var freeSpace: FreeSpace
    var durableMeta: MetaPage
    var walGeneration: UInt64
    var walEnd: UInt64
    /// Bytes of the WAL file allocated so far (zeros past `walEnd` are preallocated space).
    var walAllocated: UInt64 = 0
    var pendingBlobDeletes: [(lsn: LSN, blobs: [BlobID])] = []
    /// Set by the first failed write or sync (I8); writes are refused until reopen.
    var failed: EngineError?
    var closed = false

    func checkWritable() throws(EngineError) {
        if closed { throw EngineError(.closed, "the engine is closed") }
        if let failed {
            throw EngineError(.failed, "an earlier write failed (\(failed)); close and reopen the store to recover")
        }
    }
}

/// `@unchecked Sendable`: `state` is read and written only between `lock.lock()` and
/// `lock.unlock()` in the methods below, so no two threads touch it at once.
final class WriterLock: @unchecked Sendable {
    private let lock = NSLock()
    private var state: WriterState

    init(_ state: WriterState) { self.state = state }

    func withLock<R>(_ body: (inout WriterState) throws -> R) throws -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    func withLock<R>(_ body: (inout WriterState) throws(EngineError) -> R) throws(EngineError) -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&state)
    }

    func withLockUnchecked<R>(_ body: (inout WriterState) -> R) -> R {
        lock.lock()
        defer { lock.unlock() }
        return body(&state)
    }

    /// Puts the store in the failed state (I8) — from a group-commit sync outside the lock.
    func markFailed(_ error: EngineError) {
        lock.lock()
        if state.failed == nil { state.failed = error }
        lock.unlock()
    }
}
