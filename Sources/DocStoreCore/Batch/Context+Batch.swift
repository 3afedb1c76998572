// Context+Batch: batch operations from a context, and bringing contexts up to date after one.
//
//   CB1 `execute` runs the request on the context's store with the context's
//       `transactionAuthor` and `name` in history, then merges the batch's transaction into the
//       context (its registered objects take the new values, deleted ones leave it), so the
//       context that ran a batch sees it at once. It does not save or discard the context's
//       own unsaved changes; the batch chooses objects by their saved values.
//   CB2 other contexts with `automaticallyMergesChangesFromParent` merge the batch as they merge
//       any save; `mergeChanges(fromRemoteContextSave:into:)` merges it into others by hand.

import Foundation

extension Context {
    /// Inserts the request's rows in one transaction (``Store/execute(_:transactionAuthor:)``
    /// with this context's author and name), then merges the result into this context.
    @discardableResult
    public func execute(_ request: BatchInsertRequest) throws(DocStoreError) -> BatchResult {
        let result = try store.executeInsert(request, author: transactionAuthor, contextName: name, origin: serial)
        merge(result)
        return result
    }

    /// Updates the matching objects in one transaction, then merges the result into this context.
    @discardableResult
    public func execute(_ request: BatchUpdateRequest) throws(DocStoreError) -> BatchResult {
        let result = try store.executeUpdate(request, author: transactionAuthor, contextName: name, origin: serial)
        merge(result)
        return result
    }

    /// Deletes the request's objects, with their delete rules, in one transaction, then merges
    /// the result into this context.
    @discardableResult
    public func execute(_ request: BatchDeleteRequest) throws(DocStoreError) -> BatchResult {
        let result = try store.executeDelete(request, author: transactionAuthor, contextName: name, origin: serial)
        merge(result)
        return result
    }

    private func merge(_ result: BatchResult) {
        if let transaction = result.transaction { mergeChanges(from: transaction) }
    }

    /// Merges a transaction — a batch's ``BatchResult/transaction``, another context's save
    /// from ``didSave()`` or history — into each of `contexts` (Core Data's
    /// `mergeChanges(fromRemoteContextSave:into:)`).
    ///
    /// ```swift
    /// let result = try store.execute(BatchDeleteRequest(entityName: "Note", predicate: old))
    /// if let transaction = result.transaction {
    ///     Context.mergeChanges(fromRemoteContextSave: transaction, into: [viewContext, editor])
    /// }
    /// ```
    public static func mergeChanges(fromRemoteContextSave transaction: HistoryTransaction, into contexts: [Context]) {
        for context in contexts { context.mergeChanges(from: transaction) }
    }
}
