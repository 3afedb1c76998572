// Locked: a value behind a lock, for state shared between threads — what
// `Synchronization.Mutex` offers, on a pthread mutex (NSLock) instead. The thread sanitizer
// understands pthread mutexes; Mutex's futex-based lock lives in the uninstrumented standard
// library, so on Linux every access behind a Mutex reads to it as a race, and the sanitizer run
// of CI (scripts/test.sh) could not tell real races from those. The engine's writer lock is one
// (WriterState.swift).

import Foundation

/// A value only ever read or written while its lock is held.
///
/// `@unchecked Sendable`: `value` is touched only inside `withLock`, between `lock.lock()` and
/// `lock.unlock()`, so no two threads access it at once; callers keep what they take out of it
/// Sendable (the values stored are Sendable, or copied out under the lock).
package final class Locked<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) { self.value = value }

    /// Runs `body` with the value, the lock held.
    package func withLock<R, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }
}
