// RowCache: the store's cache of records, below every context (Core Data's row cache). Faults
// that fire read their record here before asking the engine (unless they hold one read ahead,
// Context+Relationships R5), and prefetching and child, pinned or batch contexts load a level's
// or a to-many's records into it in one read transaction, so walking folder → notes costs one
// transaction, not one per note. Its `generation` also decides whether a record read ahead is
// still the latest.
//
// Invariant: the cache never holds a record older than the store's latest committed one. A save
// removes the records it wrote or deleted and bumps `generation`; a reader notes the generation
// before it reads from the engine and caches what it read only if no save came in between.
// When the cache passes its byte budget it is emptied (the engine's page cache still holds the
// pages, so a refill is cheap).

internal import DocStoreEngine

final class RowCache: Sendable {
    private struct State {
        var rows: [UInt64: [UInt8]] = [:]
        var bytes = 0
        var generation: UInt64 = 0
    }

    private let state = Locked(State())
    let budget: Int

    init(budget: Int = 64 << 20) {
        self.budget = budget
    }

    /// The cached record of `key`, if any.
    func row(_ key: UInt64) -> [UInt8]? {
        state.withLock { $0.rows[key] }
    }

    /// The generation to pass to `insert` after reading from the engine.
    var generation: UInt64 { state.withLock { $0.generation } }

    /// Whether each of `keys` is cached (all false at once when the cache is empty).
    func holds(_ keys: [UInt64]) -> [Bool] {
        state.withLock { s in s.rows.isEmpty ? [Bool](repeating: false, count: keys.count) : keys.map { s.rows[$0] != nil } }
    }

    /// Which of `keys` are not cached.
    func missing(_ keys: [UInt64]) -> [UInt64] {
        state.withLock { s in keys.filter { s.rows[$0] == nil } }
    }

    /// Caches records read from the engine while the cache was at `generation`.
    func insert(_ rows: [(UInt64, [UInt8])], readAt generation: UInt64) {
        state.withLock { s in
            guard s.generation == generation else { return }
            for (key, bytes) in rows {
                if s.bytes + bytes.count > budget {
                    s.rows.removeAll(keepingCapacity: true)
                    s.bytes = 0
                }
                if let old = s.rows.updateValue(bytes, forKey: key) { s.bytes -= old.count }
                s.bytes += bytes.count
            }
        }
    }

    /// Forgets the records a save wrote or deleted.
    func invalidate(_ keys: [UInt64]) {
        state.withLock { s in
            s.generation &+= 1
            for key in keys { if let old = s.rows.removeValue(forKey: key) { s.bytes -= old.count } }
        }
    }

    /// Forgets every row (the store was reopened and may have lost a commit it had read).
    func removeAll() {
        state.withLock { s in
            s.generation &+= 1
            s.rows = [:]
            s.bytes = 0
        }
    }
}
