// ChangeHub: where a store announces its commits — to the inboxes of contexts that merge changes
// automatically and to the store-wide change stream (`Store.transactions`).
//
//   CH1  `publish` runs under the engine's writer lock, right after a commit became visible
//        (Engine.write's onCommit), so every listener hears of commits in commit order and
//        none is missed: a transaction committed after a listener registered reaches it.
//   CH2  the reader's form of a transaction (object IDs, property names) is built only when
//        someone listens: a store nobody watches pays nothing but a lock per save.
//   CH3  the hub holds inboxes weakly: a context that goes away stops receiving.

import Foundation
internal import DocStoreEngine

final class ChangeHub: Sendable {
    private struct WeakInbox { weak var inbox: ContextInbox? }

    /// By their context's serial (`origin`, unique in the process; not by `ObjectIdentifier`,
    /// whose first dictionary costs a new process a scan of every conformance record).
    private let inboxes = Locked<[UInt64: WeakInbox]>([:])
    /// The store-wide change stream.
    let transactions = EventChannel<HistoryTransaction>()

    func register(_ inbox: ContextInbox) {
        inboxes.withLock { $0[inbox.origin] = WeakInbox(inbox: inbox) }
    }

    func unregister(_ inbox: ContextInbox) {
        _ = inboxes.withLock { $0.removeValue(forKey: inbox.origin) }
    }

    /// Announces the transaction committed at `lsn` (CH1, CH2).
    func publish(_ recorded: RecordedTransaction, lsn: UInt64, origin: UInt64, model: StoreModel, storeID: UUID) {
        let live: [ContextInbox] = inboxes.withLock { all in
            var live: [ContextInbox] = []
            for (id, weak) in all {
                if let inbox = weak.inbox { live.append(inbox) } else { all.removeValue(forKey: id) }
            }
            return live
        }
        guard !live.isEmpty || transactions.hasSubscribers else { return }
        let transaction = HistoryTransaction(recorded, lsn: lsn, origin: origin, model: model, storeID: storeID)
        for inbox in live { inbox.deliver(transaction) }
        transactions.send(transaction)
    }
}

/// The transactions other contexts committed that a context has not merged yet. Sendable: the
/// hub appends from whichever thread saved; the context drains it in its own domain.
final class ContextInbox: Sendable {
    private struct State {
        var pending: [HistoryTransaction] = []
        var wakeScheduled = false
    }

    private let state = Locked(State())
    /// The owning context's serial: its own saves are not delivered back.
    let origin: UInt64
    /// Asks the owning context's domain to process pending changes soon (the main actor, a
    /// background context's actor); nil for a context that processes them on its next use.
    let wake: (@Sendable () -> Void)?

    init(origin: UInt64, wake: (@Sendable () -> Void)?) {
        self.origin = origin
        self.wake = wake
    }

    func deliver(_ transaction: HistoryTransaction) {
        guard transaction.origin != origin else { return }
        let shouldWake = state.withLock { s -> Bool in
            s.pending.append(transaction)
            guard wake != nil, !s.wakeScheduled else { return false }
            s.wakeScheduled = true
            return true
        }
        if shouldWake { wake?() }
    }

    /// Everything delivered so far, oldest first; the inbox is empty after.
    func drain() -> [HistoryTransaction] {
        state.withLock { s in
            defer {
                s.pending = []
                s.wakeScheduled = false
            }
            return s.pending
        }
    }

    var isEmpty: Bool { state.withLock { $0.pending.isEmpty } }
}
