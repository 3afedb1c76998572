// SyncEngine: a store kept in sync with docstore-server — what NSPersistentCloudKitContainer
// does for Core Data, with a server of your own (README § Sync, Format/sync.md).
//
//   SE1 a round is: capture and push every unacknowledged save (oldest first, acknowledged
//       only once the server answered), then pull and apply pages until the feed is quiet.
//   SE2 every step reports its start and its end or failure as a SyncEvent; a failed round is
//       retried by the next (start()'s loop), with the error shown in between — a queue that
//       cannot move says why, it never stops quietly.
//   SE3 the engine is an actor: one round at a time per store.
//   SE4 a round ends with nothing left to push that its pull made: what the device's delete
//       rules did to the server's changes goes out in the same round, so when every device's
//       round pushes nothing, every replica has everything.

import DocStoreCore
import DocStoreSyncWire
import Foundation

/// Keeps a store in sync with a docstore-server.
///
/// ```swift
/// let store = try Store(url: url, models: [Folder.self, Note.self, Tag.self])
/// let sync = try SyncEngine(store: store, server: URL(string: "http://127.0.0.1:8080")!, device: deviceID)
/// await sync.start()                        // pushes local saves, pulls remote ones, until stop()
/// for await event in sync.events { print(event) }
/// ```
///
/// ## Topics
/// - ``init(store:server:device:localOnlyEntities:pollInterval:resolver:)``
/// - ``syncNow()``
/// - ``start()``
/// - ``stop()``
/// - ``events``
public actor SyncEngine {
    /// The engine's events (SE2), for a "syncing…" indicator and an error banner.
    public nonisolated let events: AsyncStream<SyncEvent>
    private let continuation: AsyncStream<SyncEvent>.Continuation
    private let replica: SyncReplica
    var replicaForTests: SyncReplica { replica }
    private let transport: HTTPTransport
    private let secret: String
    private let schemaVersion: Int
    private let pollInterval: Duration
    private let resolver: SyncConflictResolver?
    private var loop: Task<Void, Never>?

    /// Prepares `store` for sync with the server at `server` as the device `device` (a stable
    /// ID of this installation, e.g. a UUID kept in the app's settings).
    ///
    /// - Parameters:
    ///   - localOnlyEntities: entities that never sync (caches, UI state), like a Core Data
    ///     configuration that is not mirrored.
    ///   - pollInterval: how often ``start()``'s loop asks the server for changes.
    ///   - resolver: called for each attribute edit of this device that lost to a later edit
    ///     elsewhere; its answer becomes a new edit (``SyncConflictResolver``). Without one, the
    ///     later edit wins.
    /// - Throws: ``SyncError/Code/store`` when the store cannot record sync state.
    public init(store: Store, server: URL, device: String, localOnlyEntities: Set<String> = [],
                pollInterval: Duration = .seconds(2), resolver: SyncConflictResolver? = nil) throws(SyncError) {
        try self.init(store: store, server: server, device: device, localOnlyEntities: localOnlyEntities,
                      pollInterval: pollInterval, resolver: resolver, clockSkew: 0)
    }

    /// As the public initializer, for a device whose clock is `clockSkew` milliseconds off
    /// (tests of C2).
    package init(store: Store, server: URL, device: String, localOnlyEntities: Set<String> = [],
                 pollInterval: Duration = .seconds(2), resolver: SyncConflictResolver? = nil, clockSkew: Int64) throws(SyncError) {
        self.resolver = resolver
        let model = SyncModel(schema: store.schema, localOnly: localOnlyEntities)
        var replica = SyncReplica(store: store, model: model, device: device)
        replica.clockSkew = clockSkew
        self.replica = replica
        transport = HTTPTransport(server: server, timeout: 30)
        schemaVersion = store.schemaVersionNumber
        self.pollInterval = pollInterval
        (events, continuation) = AsyncStream.makeStream(of: SyncEvent.self, bufferingPolicy: .bufferingNewest(1_000))
        do {
            try store.enableSyncCapture()
            let replica = self.replica
            secret = try store.syncWrite { txn -> String in
                if let s = try txn.get(SyncState.deviceSecretKey, in: SyncState.tree) { return String(decoding: s, as: UTF8.self) }
                let fresh = UUID().uuidString
                try txn.put(Array(fresh.utf8), for: SyncState.deviceSecretKey, in: SyncState.tree)
                try replica.beginSetup(txn)       // the first time: export what is there (SU1)
                return fresh
            }
        } catch {
            throw SyncError.store(error, "preparing the store for sync")
        }
    }

    /// What one round did.
    public struct Summary: Sendable {
        /// Local saves the server accepted.
        public var pushed = 0
        /// Feed entries applied.
        public var pulled = 0
        /// Edits of this device the server's rules set aside.
        public var conflicts: [SyncConflict] = []
    }

    /// One round now (SE1): push every pending save, then pull until quiet.
    ///
    /// - Throws: ``SyncError``; what was acknowledged or applied before the error stays.
    @discardableResult
    public func syncNow() async throws(SyncError) -> Summary {
        var summary = Summary()
        if offsetSample == nil {
            // C2: the server's clock before the first save is stamped (stamps are given when a
            // save is first pushed), so a device whose clock is off never stamps with it.
            _ = try await exchange(SyncProtocol.pullPath, PullRequest(device: replica.device, after: try replica.cursor(), limit: 1),
                                   as: PullResponse.self) { $0.serverTime }
        }
        if try replica.setupPending() {
            try await step(.setup, conflicts: { summary.conflicts }) { () async throws(SyncError) -> Int in
                var objects = 0
                while let chunk = try replica.nextSetupChunk(clock: Self.now() + replica.clockSkew) {
                    let request = PushRequest(device: replica.device, deviceSecret: secret,
                                              schema: replica.model.manifest(version: schemaVersion), transactions: [chunk])
                    let response = try await exchange(SyncProtocol.pushPath, request, as: PushResponse.self) { $0.serverTime }
                    guard response.accepted.contains(chunk.id) else {
                        throw SyncError(.badResponse, "the server did not accept export chunk \(chunk.id - SyncReplica.setupIDBase)")
                    }
                    try replica.setupChunkAccepted(chunk.id)
                    objects += chunk.changes.count
                    summary.conflicts += response.conflicts
                }
                return objects
            }
        }
        var lost: [SyncReplica.LostEdit] = []
        try await step(.export, conflicts: { summary.conflicts }) { () async throws(SyncError) -> Int in
            try await push(&summary, lost: &lost)
        }
        try await step(.import) { () async throws(SyncError) -> Int in
            while true {
                let pending = SyncReplica.Pending(try replica.capture(limit: Int.max).transactions)
                let page = try await exchange(SyncProtocol.pullPath, PullRequest(device: replica.device, after: try replica.cursor()),
                                              as: PullResponse.self) { $0.serverTime }
                if !page.entries.isEmpty { summary.pulled += try replica.apply(page, pending: pending) }
                if !page.hasMore { return summary.pulled }
            }
        }
        if let resolver, !lost.isEmpty { try replica.resolve(lost, with: resolver) }
        if try replica.hasChangesToPush() {
            // What the pull made here goes out in this round: deletes and link removals the
            // device's delete rules made of the server's changes (CP4, CP5), merges of unique
            // values (U3), the resolver's edits (RS3), saves the app made meanwhile (SE4).
            try await step(.export, conflicts: { summary.conflicts }) { () async throws(SyncError) -> Int in
                try await push(&summary, lost: &lost)
            }
        }
        return summary
    }

    /// Pushes every unacknowledged save (SE1), adding to `summary`; collects the attribute
    /// edits the server set aside as older (M1) into `lost`, for the resolver.
    private func push(_ summary: inout Summary, lost: inout [SyncReplica.LostEdit]) async throws(SyncError) -> Int {
        while true {
            let (transactions, through) = try replica.capture()
            guard let through else { return summary.pushed }
            if !transactions.isEmpty {
                let request = PushRequest(device: replica.device, deviceSecret: secret,
                                          schema: replica.model.manifest(version: schemaVersion), transactions: transactions)
                let response = try await exchange(SyncProtocol.pushPath, request, as: PushResponse.self) { $0.serverTime }
                guard Set(response.accepted).isSuperset(of: transactions.map(\.id)) else {
                    throw SyncError(.badResponse, "the server accepted \(response.accepted.count) of \(transactions.count) transactions")
                }
                summary.pushed += transactions.count
                summary.conflicts += response.conflicts
                if resolver != nil { lost = replica.lostEdits(response.conflicts, of: transactions, adding: lost) }
            }
            try replica.acknowledge(through: through)
        }
    }

    static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded()) }

    /// The round trip of the answer the clock offset was last taken from, and when (C2).
    private var offsetSample: (roundTrip: Int64, at: ContinuousClock.Instant)?

    /// POSTs `message` and takes the server's clock from the answer (C2): the offset is the
    /// server's time minus the middle of the round trip, from the answer with the shortest
    /// round trip of the last 5 minutes — a slow answer (a loaded machine, a slow network)
    /// would skew it by up to its round trip — and counts as 0 while it is within that
    /// uncertainty or a second: clocks that agree that well are taken as they are.
    private func exchange<Request: Encodable & Sendable, Response: Decodable & Sendable>(_ path: String, _ message: Request, as type: Response.Type,
                                                                 serverTime: (Response) -> Int64) async throws(SyncError) -> Response {
        let sent = Self.now() + replica.clockSkew
        let response = try await transport.post(path, message, as: type)
        let received = Self.now() + replica.clockSkew
        let roundTrip = max(0, received - sent)
        let clock = ContinuousClock.now
        if let best = offsetSample, roundTrip > best.roundTrip, clock - best.at < .seconds(300) { return response }
        offsetSample = (roundTrip, clock)
        let offset = serverTime(response) - (sent + roundTrip / 2)
        replica.noteServerOffset(abs(offset) <= max(roundTrip, 1_000) ? 0 : offset)
        return response
    }

    /// Starts syncing in the background: a round now, then one every poll interval, until
    /// ``stop()``. Failures are events (SE2); the loop goes on.
    public func start() {
        guard loop == nil else { return }
        loop = Task { [pollInterval] in
            while !Task.isCancelled {
                _ = try? await self.syncNow()
                try? await Task.sleep(for: pollInterval)
            }
        }
    }

    /// Stops the background loop (a round in flight finishes its current request).
    public func stop() {
        loop?.cancel()
        loop = nil
    }

    /// Local saves the server has not acknowledged yet.
    public var pendingCount: Int { replica.pendingCount() }

    private func step(_ kind: SyncEvent.Kind, conflicts: () -> [SyncConflict] = { [] },
                      _ body: () async throws(SyncError) -> Int) async throws(SyncError) {
        continuation.yield(SyncEvent(kind: kind, phase: .started, pendingCount: replica.pendingCount(), conflicts: [], date: Date()))
        do {
            let n = try await body()
            continuation.yield(SyncEvent(kind: kind, phase: .finished(changes: n), pendingCount: replica.pendingCount(), conflicts: conflicts(), date: Date()))
        } catch {
            continuation.yield(SyncEvent(kind: kind, phase: .failed(error), pendingCount: replica.pendingCount(), conflicts: conflicts(), date: Date()))
            throw error
        }
    }
}
