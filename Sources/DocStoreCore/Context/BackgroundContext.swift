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

    /// A background context on `store`.
    public init(store: Store, name: String? = nil) {
        self.store = store
        self.context = Context(store: store, name: name)
    }

    /// Runs `body` with the actor's context. The result must be Sendable: objects stay inside.
    public func perform<R: Sendable>(_ body: (Context) throws -> R) rethrows -> R {
        try body(context)
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
        mainContexts[ObjectIdentifier(self)] = context
        return context
    }
}
