// Context+Events: a context's observers — ObjectsDidChange and did-save as AsyncSequences, and
// handlers inside the context's own domain (how a results controller listens).
//
//   EV1  while nobody observes, a change costs one relaxed atomic read; while someone does, its
//        key is noted in `unprocessed`, and `processPendingChanges` turns the noted keys (and any
//        merged saves) into one ObjectsDidChange.
//   EV2  handlers run in registration order, before the streams hear of the event, inside the
//        context's domain; changes they make are processed by the next call, not re-entrantly.
//   EV3  a context whose domain can be asked to run later (the main context, a background
//        context) asks once per batch of changes, so observers hear of edits without anyone
//        calling processPendingChanges.

extension Context {
    /// The context's object changes as they are processed (Core Data's
    /// `NSManagedObjectContextObjectsDidChange`), optionally only those of some entities (and
    /// their sub-entities) — a save of `Tag` does not wake a list of `Note`s.
    ///
    /// ```swift
    /// for await change in context.objectsDidChange(entities: ["Note"]) {
    ///     print(change.insertedObjectIDs, change.refreshedObjectIDs)
    /// }
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/invalidQuery`` for an unknown entity name.
    public func objectsDidChange(entities: [String]? = nil) throws(DocStoreError) -> AsyncStream<ObjectsDidChange> {
        let kinds = try store.entityKinds(entities)
        return changeChannel.stream { $0.narrowed(to: kinds) }
    }

    /// The context's saves, each as the history transaction it committed (Core Data's
    /// `NSManagedObjectContextDidSave`): hand one to another context's
    /// ``mergeChanges(from:)`` to bring it up to date by hand.
    public func didSave() -> AsyncStream<HistoryTransaction> {
        didSaveChannel.stream()
    }

    /// Whether anyone observes the context (EV1).
    var observesChanges: Bool { !changeHandlers.isEmpty || changeChannel.hasSubscribers }

    /// Notes that the object `key` changed (EV1, EV3).
    func noteChange(_ key: UInt64) {
        if unprocessed.isEmpty { requestProcessing() }
        unprocessed.insert(key)
    }

    /// Asks the context's domain to process pending changes soon, once (EV3).
    func requestProcessing() {
        guard let scheduler, !scheduled else { return }
        scheduled = true
        scheduler()
    }

    /// Registers a handler run for every ObjectsDidChange, in the context's domain (EV2).
    func addChangeHandler(_ handler: @escaping (ObjectsDidChange) -> Void) -> Int {
        nextHandlerID += 1
        changeHandlers.append((nextHandlerID, handler))
        return nextHandlerID
    }

    func removeChangeHandler(_ id: Int) {
        changeHandlers.removeAll { $0.id == id }
    }

    /// Merges the saves other contexts committed since the last call (when
    /// ``automaticallyMergesChangesFromParent`` is on and the context is not pinned to a query
    /// generation), then tells observers what changed, edits of its own included, in one
    /// ObjectsDidChange. Save and fetch call it first; the main context and background contexts
    /// also call it on their own soon after a change.
    public func processPendingChanges() {
        processPendingChanges(merging: pinnedSnapshot == nil)
    }

    /// `merging`: whether saves waiting in the inbox are merged (not while pinned to an older
    /// generation, Context+Generation G1).
    func processPendingChanges(merging: Bool) {
        scheduled = false
        guard !isProcessingChanges else { return }
        isProcessingChanges = true
        defer { isProcessingChanges = false }
        var event = ObjectsDidChange()
        if let inbox, merging {
            for transaction in inbox.drain() { merge(transaction, into: &event) }
        }
        if !unprocessed.isEmpty {
            let keys = unprocessed
            unprocessed = []
            for key in keys { describeLocalChange(key, into: &event) }
        }
        post(event)
    }

    /// The state of the object `key` now, as an event entry (its own edits).
    private func describeLocalChange(_ key: UInt64, into event: inout ObjectsDidChange) {
        guard let object = changed[key] ?? registry[key]?.takeUnretainedValue(), let id = object.objectID else { return }
        if object.isInserted {
            // An insert deleted before the save: once reported, its deletion is reported too
            // (a list that showed it must drop it); never reported, it is not mentioned at all.
            if !object.isDeleted {
                event.insertedObjectIDs.insert(id)
                reportedInserts.insert(key)
            } else if reportedInserts.remove(key) != nil {
                event.deletedObjectIDs.insert(id)
            }
        } else if object.isDeleted {
            event.deletedObjectIDs.insert(id)
        } else if object.hasChanges {
            event.updatedObjectIDs.insert(id)
            event.changedKeys[id, default: []].formUnion(changedValues(of: object).keys)
        }
    }

    /// Hands a non-empty event to the handlers, then the streams (EV2).
    func post(_ event: ObjectsDidChange) {
        guard !event.isEmpty else { return }
        for (_, handler) in changeHandlers { handler(event) }
        changeChannel.send(event)
    }
}
