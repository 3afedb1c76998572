// ObjectState and the merge rules: what the server holds for one object and how a device's
// change is folded into it (Format/sync.md § Conflicts). Pure functions on values, so the rules
// are tested without a database; SyncDatabase stores the result.
//
//   M1 per field, the edit with the later hybrid timestamp wins; a tie goes to the greater
//      device ID. Applying the same edit twice, or edits in any order, gives the same state.
//   M2 a delete wins over every update, earlier or later: an update of a deleted object is set
//      aside (conflict `updateOfDeletedObject`). Only an insert whose clock is later than the
//      delete brings the ID back (the same unique value created again), with only that
//      insert's fields.
//   M3 a to-many link is its own register: the later add or remove of the same (source,
//      relationship, target) wins, so adds on two devices both stay.
//   M5 (SyncDatabase) a delete removes the object's links both ways, at the delete's clock: an
//      ID brought back later starts with none.
//   M6 (SyncDatabase) a link added to an object the server holds as deleted is set aside
//      (`linkToDeletedObject`): a device that had not seen the delete linked to it, and drops
//      the link when it applies the delete. An ID brought back later starts with no links.
//   M4 an edit set aside by M2 writes the tombstone to the feed again, so the device that made
//      it — which may never have seen the delete — deletes its copy too.

import DocStoreSyncWire
import Foundation

/// The server's state of one object.
struct ObjectState: Codable, Sendable, Equatable {
    var entity: String
    var deleted = false
    /// The delete's clock and device (M2).
    var deletedClock = HybridTimestamp.zero
    var deletedDevice = ""
    var fields: [String: ClockedValue] = [:]
}

/// The outcome of merging one change.
struct MergeOutcome: Sendable {
    var state: ObjectState
    /// Whether the state changed (then a feed entry is written).
    var changed: Bool
    var conflicts: [SyncConflict]
}

enum ObjectMerge {
    /// Folds `change`, made by `device` at `clock` in its transaction `transaction`, into
    /// `current` (nil: the server has never seen the object).
    static func merge(_ change: ObjectChange, into current: ObjectState?, clock: HybridTimestamp, device: String,
                      transaction: UInt64) -> MergeOutcome {
        func conflict(_ kind: SyncConflict.Kind, _ field: String? = nil) -> SyncConflict {
            SyncConflict(kind: kind, entity: change.entity, id: change.id, field: field, transaction: transaction)
        }
        func clocked(_ fields: [String: WireValue]) -> [String: ClockedValue] {
            fields.mapValues { ClockedValue(value: $0, clock: clock, device: device) }
        }
        switch change.kind {
        case .delete:
            guard var state = current else {
                return MergeOutcome(state: ObjectState(entity: change.entity, deleted: true, deletedClock: clock, deletedDevice: device),
                                    changed: true, conflicts: [])
            }
            if state.deleted { return MergeOutcome(state: state, changed: false, conflicts: []) }
            state.deleted = true
            state.deletedClock = clock
            state.deletedDevice = device
            state.fields = [:]
            return MergeOutcome(state: state, changed: true, conflicts: [])
        case .insert, .update:
            guard var state = current else {
                return MergeOutcome(state: ObjectState(entity: change.entity, fields: clocked(change.fields)), changed: true, conflicts: [])
            }
            if state.deleted {
                // M2: only a later insert brings the ID back.
                if change.kind == .insert, clock.wins(over: state.deletedClock, device: device, otherDevice: state.deletedDevice) {
                    return MergeOutcome(state: ObjectState(entity: change.entity, fields: clocked(change.fields)), changed: true, conflicts: [])
                }
                // The tombstone goes into the feed again: the device that made this edit may
                // never have seen the delete (it created the same unique value meanwhile), and
                // must drop its copy (M4).
                return MergeOutcome(state: state, changed: true, conflicts: [conflict(.updateOfDeletedObject)])
            }
            var changed = false
            var conflicts: [SyncConflict] = []
            for (name, value) in change.fields.sorted(by: { $0.key < $1.key }) {
                if let old = state.fields[name], !clock.wins(over: old.clock, device: device, otherDevice: old.device) {
                    if old.clock != clock || old.device != device { conflicts.append(conflict(.olderEdit, name)) }
                    continue
                }
                if state.fields[name]?.value != value || state.fields[name]?.clock != clock { changed = true }
                state.fields[name] = ClockedValue(value: value, clock: clock, device: device)
            }
            return MergeOutcome(state: state, changed: changed, conflicts: conflicts)
        }
    }

    /// Whether a link edit at `(clock, device)` replaces the stored one (M3).
    static func linkWins(clock: HybridTimestamp, device: String, over stored: (clock: HybridTimestamp, device: String)?) -> Bool {
        guard let stored else { return true }
        return clock.wins(over: stored.clock, device: device, otherDevice: stored.device)
    }
}
