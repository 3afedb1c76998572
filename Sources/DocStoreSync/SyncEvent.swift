// SyncEvent: what the sync engine tells an app, as NSPersistentCloudKitContainer's events do —
// enough for a "syncing…" indicator, an error banner and a pending-changes badge. Every
// failure is an event: the engine never stops quietly.

import DocStoreSyncWire
import Foundation

/// One thing the sync engine did or failed to do.
public struct SyncEvent: Sendable, CustomStringConvertible {
    /// Which part of sync.
    public enum Kind: String, Sendable, Hashable {
        /// Preparing the store for sync (the first start).
        case setup
        /// Pushing local saves to the server.
        case export
        /// Pulling and applying the server's changes.
        case `import`
    }

    /// How far it got.
    public enum Phase: Sendable {
        case started
        /// Finished; `changes` counts the saves pushed (export) or feed entries applied (import).
        case finished(changes: Int)
        case failed(SyncError)
    }

    public var kind: Kind
    public var phase: Phase
    /// Local saves not yet acknowledged by the server, after this step.
    public var pendingCount: Int
    /// What the server's conflict rules set aside of this device's edits (export only).
    public var conflicts: [SyncConflict]
    public var date: Date

    public var description: String {
        let what = switch phase {
        case .started: "started"
        case .finished(let n): "finished (\(n))"
        case .failed(let e): "failed: \(e)"
        }
        return "\(kind.rawValue) \(what), \(pendingCount) pending\(conflicts.isEmpty ? "" : ", \(conflicts.count) conflicts")"
    }
}
