// BackgroundContext and Store.mainContext: contexts in Swift concurrency, as SwiftData's
// ModelActor and mainContext. A Context is not Sendable, so the compiler keeps it and its
// objects in the isolation domain that made it:
//   - Store.mainContext is made on the main actor and stays there;
//   - a BackgroundContext is an actor that owns its context: work runs in `perform`, and only
//     Sendable results (object IDs, values) come out. Handing an object to another isolation
//     domain does not compile.

import Foundation

/// A context owned by an actor, for work off the main actor (SwiftData's `ModelActor`).
///
/// ```swift
/// let background = BackgroundContext(store: store)
/// let id = try await background.perform { context in
///     let note = Note(title: "From the background")
///     try context.insert(note)
///     try context.save()
///     return note.objectID
/// }
/// let note = try store.mainContext.existingObject(with: id!)   // on the main actor
/// ```
public actor BackgroundContext {
    /// The store this context saves to.
    public nonisolated let store: Store
    private let context: Context

    /// A background context on `store`. It merges other contexts' saves automatically (at
    /// each `perform`, and on its own soon after they commit, so its observers hear of them).
    public init(store: Store, name: String? = nil) {
        self.store = store
        let context = Context(store: store, name: name)
        self.context = context
        context.scheduler = { [weak self] in
            Task { await self?.processPendingChanges() }
        }
        context.automaticallyMergesChangesFromParent = true
    }

    /// Runs `body` with the actor's context. The result must be Sendable: objects stay inside.
    /// Pending changes are processed before and after: `body` starts from the latest merged
    /// state, and observers hear of what it changed.
    public func perform<R: Sendable>(_ body: (Context) throws -> R) rethrows -> R {
        context.processPendingChanges()
        defer { context.processPendingChanges() }
        return try body(context)
    }

    /// Merges pending saves of other contexts and tells observers (``Context/processPendingChanges()``).
    public func processPendingChanges() {
        context.processPendingChanges()
    }
}

extension Store {
    /// A new background context (Core Data's `newBackgroundContext()`).
    public func newBackgroundContext(name: String? = nil) -> BackgroundContext {
        BackgroundContext(store: self, name: name)
    }

    /// Runs `body` on a new background context and returns its Sendable result (Core Data's
    /// `performBackgroundTask`). Save inside `body`: unsaved changes are dropped with the context.
    ///
    /// ```swift
    /// try await store.performBackgroundTask { context in
    ///     for item in feed { try context.insert(Note(title: item.title)) }
    ///     try context.save()
    /// }
    /// ```
    public func performBackgroundTask<R: Sendable>(name: String? = nil, _ body: @Sendable (Context) throws -> R) async throws -> R {
        try await BackgroundContext(store: self, name: name).perform(body)
    }
}

/// The main-actor contexts, one per store.
@MainActor private var mainContexts: [ObjectIdentifier: Context] = [:]

extension Store {
    /// The store's context for the main actor (SwiftData's `mainContext`): made on first use,
    /// then the same one. It keeps the store open for as long as the process runs.
    @MainActor public var mainContext: Context {
        if let context = mainContexts[ObjectIdentifier(self)] { return context }
        let context = Context(store: self, name: "main")
        // EV3: changes and merged saves are processed on the main actor's next turn.
        context.scheduler = { [weak self] in
            Task { @MainActor in self?.mainContext.processPendingChanges() }
        }
        context.automaticallyMergesChangesFromParent = true
        mainContexts[ObjectIdentifier(self)] = context
        return context
    }
}
