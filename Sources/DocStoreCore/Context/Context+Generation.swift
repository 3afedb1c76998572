// Context+Generation: query generations — a context pinned to one snapshot of the store reads
// a consistent state across any number of fetches and faults while other contexts save (Core
// Data's NSQueryGenerationToken).
//
//   G1  while pinned, every read of the context (fetches, faults, relationships) goes to one
//       engine snapshot, taken when it was pinned; saves of others are not seen, and their
//       merges wait in the inbox.
//   G2  the store's row cache holds the latest rows, so a pinned context reads around it.
//   G3  advancing is explicit: pinning again (to `.current`) moves to the latest state and
//       merges what waited; the context's own save also moves it to the state it saved (its
//       changes are what it expects to see). Unpinning (nil) reads the latest state again.
//   G4  a save is checked against the latest state, not the pinned one (optimistic locking,
//       Context+Conflicts K1): pinning never lets a save overwrite changes it did not see.

internal import DocStoreEngine

/// A generation of the store a context can pin itself to (Core Data's `NSQueryGenerationToken`).
public struct QueryGenerationToken: Sendable, Hashable, CustomStringConvertible {
    /// The commit the generation is; nil for ``current``.
    public let value: UInt64?

    /// Asks for the latest generation when pinning.
    public static let current = QueryGenerationToken(value: nil)

    public var description: String { value.map { "generation \($0)" } ?? "current generation" }
}

extension Context {
    /// The generation the context is pinned to, or nil when it reads the latest state.
    public var queryGenerationToken: QueryGenerationToken? {
        pinnedSnapshot.map { QueryGenerationToken(value: $0.lsn.rawValue) }
    }

    /// Pins the context to the latest generation (`.current`), or unpins it (nil) (G1, G3).
    ///
    /// ```swift
    /// try context.setQueryGenerationFrom(.current)
    /// let notes = try context.fetch(Note.self)       // both reads see one state,
    /// let count = try context.count(for: all)        // whatever others save meanwhile
    /// try context.setQueryGenerationFrom(.current)   // move on, merging what changed
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/invalidQuery`` for a token of a generation other than the
    ///   one the context is pinned to (only the latest can be pinned);
    ///   ``DocStoreError/Code/storage`` if the store is closed.
    public func setQueryGenerationFrom(_ token: QueryGenerationToken?) throws(DocStoreError) {
        guard let token else {
            pinnedSnapshot?.close()
            pinnedSnapshot = nil
            processPendingChanges()
            return
        }
        if let value = token.value, value != pinnedSnapshot?.lsn.rawValue {
            throw DocStoreError(.invalidQuery, "\(token) cannot be pinned: only the current generation can (pass .current)")
        }
        guard token.value == nil else { return }
        try repin()
    }

    /// Moves a pinned context to the latest state, then merges what waited (G3).
    func repin() throws(DocStoreError) {
        let fresh: ReadTransaction
        do { fresh = try store.engine.beginRead() } catch { throw Store.storageError(error) }
        pinnedSnapshot?.close()
        pinnedSnapshot = fresh
        processPendingChanges(merging: true)
    }

    /// Runs `body` on the pinned snapshot, or on a snapshot of the latest state (G1).
    /// A batch operation's context reads its write transaction instead.
    func readStore<R>(_ body: (Transaction) throws -> R) throws(DocStoreError) -> R {
        if let batch = batchTransaction {
            do { return try body(batch) } catch { throw Store.storageError(error) }
        }
        guard let pinned = pinnedSnapshot else { return try store.read(body) }
        do { return try body(pinned) } catch { throw Store.storageError(error) }
    }
}
