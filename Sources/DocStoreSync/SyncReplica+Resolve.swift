// SyncReplica+Resolve: the app's resolver over the attribute edits this device lost
// (SyncConflictResolver.swift, RS1–RS3; Format/sync.md § Resolving).

import DocStoreCore
import DocStoreSyncWire
import Foundation

extension SyncReplica {
    /// An attribute edit of this device the server set aside as older (M1).
    struct LostEdit: Sendable {
        var id: UUID
        var entity: String
        var field: String
        var value: StoredValue
        var transaction: UInt64
    }

    /// `earlier` with the attribute edits among `conflicts` added, one per object and
    /// attribute: the latest transaction's (RS1, RS2).
    func lostEdits(_ conflicts: [SyncConflict], of transactions: [ClientTransaction], adding earlier: [LostEdit]) -> [LostEdit] {
        var byField: [String: LostEdit] = [:]
        for edit in earlier { byField["\(edit.id)/\(edit.field)"] = edit }
        for conflict in conflicts where conflict.kind == .olderEdit {
            guard let field = conflict.field, model.entities[conflict.entity]?.attributes[field] != nil,
                  let transaction = transactions.first(where: { $0.id == conflict.transaction }),
                  let value = transaction.changes.first(where: { $0.id == conflict.id })?.fields[field]?.storedValue else { continue }
            let key = "\(conflict.id)/\(field)"
            if let seen = byField[key], seen.transaction > conflict.transaction { continue }
            byField[key] = LostEdit(id: conflict.id, entity: conflict.entity, field: field, value: value, transaction: conflict.transaction)
        }
        return byField.values.sorted { ($0.transaction, $0.id.uuidString, $0.field) < ($1.transaction, $1.id.uuidString, $1.field) }
    }

    /// Asks `resolver` about each lost edit and saves its answers as one save authored
    /// `docstore.sync.resolver` (RS3); how many attributes it set.
    @discardableResult
    func resolve(_ lost: [LostEdit], with resolver: SyncConflictResolver) throws(SyncError) -> Int {
        let context = Context(store: store, name: "sync resolver")
        context.transactionAuthor = "docstore.sync.resolver"
        var set = 0
        do {
            for edit in lost {
                guard let key = try store.syncRead({ try SyncState.localKey(of: edit.id, $0) }),
                      let objectID = store.objectID(ofKey: key),
                      let current = try store.currentValues(ofKey: key) else { continue }   // deleted meanwhile
                let server = current[edit.field] ?? .null
                let conflict = SyncFieldConflict(entity: edit.entity, objectID: objectID, property: edit.field, local: edit.value, server: server)
                let value: Any?
                switch resolver(conflict) {
                case .keepServer: continue
                case .keepLocal:
                    guard edit.value != server else { continue }
                    value = edit.value.anyValue
                case .use(let chosen): value = chosen
                }
                try context.existingObject(with: objectID).setValue(value, forKey: edit.field)
                set += 1
            }
            if context.hasChanges { try context.save() }
        } catch {
            throw SyncError.store(error, "saving the conflict resolver's edits")
        }
        return set
    }
}
