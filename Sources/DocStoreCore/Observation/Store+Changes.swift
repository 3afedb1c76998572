// Store+Changes: the store-wide change stream — every transaction any context of this process
// commits, as it commits (ChangeHub CH1), whichever context or actor saved it.
//
// Another process's commits do not appear here; read them with `history(after:)` (README §
// Persistent history).

extension Store {
    /// Every transaction committed to the store from now on, in commit order, optionally only
    /// the changes of some entities (and their sub-entities); transactions without any are
    /// skipped.
    ///
    /// ```swift
    /// for await transaction in try store.transactions(entities: ["Note"]) {
    ///     print(transaction.token, transaction.changes)
    /// }
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/invalidQuery`` for an unknown entity name.
    public func transactions(entities: [String]? = nil) throws(DocStoreError) -> AsyncStream<HistoryTransaction> {
        guard let kinds = try entityKinds(entities) else { return changeHub.transactions.stream() }
        return changeHub.transactions.stream { t in
            let changes = t.changes.filter { kinds.contains(PrimaryKey.entity(of: $0.changedObjectID.primaryKey)) }
            guard !changes.isEmpty else { return nil }
            return HistoryTransaction(token: t.token, timestamp: t.timestamp, author: t.author, contextName: t.contextName,
                                      changes: changes, origin: t.origin)
        }
    }
}
