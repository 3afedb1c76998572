// SyncDatabase: the server's only state, in PostgreSQL (Format/sync.md § Server tables). Every
// server process is stateless: any number of them can serve one database.
//
//   F1  the feed never lets a reader skip a row: every push takes the transaction-scoped
//       advisory lock `feedLock` before it draws a `seq`, and holds it until it commits, so
//       feed rows become visible in `seq` order. A reader that sees `seq` s sees every row
//       below s; `WHERE seq > cursor` is then exact. (A plain sequence is not: a transaction
//       that drew s-1 may commit after one that drew s — Format/sync.md § Pull.)
//   F2  a push is applied at most once per (device, transaction): the pushes table's primary
//       key is the guard, in the same PostgreSQL transaction as the changes.
//   F3  a push is atomic: its changes, feed rows and push records commit together or not at
//       all; a refused push (a device mismatch, an incompatible schema) writes nothing.

import Crypto
import DocStoreSyncWire
import Foundation
import Logging
import PostgresNIO

/// The server's tables and the push and pull transactions over them.
public struct SyncDatabase: Sendable {
    let client: PostgresClient
    let logger: Logger
    /// The advisory lock every push holds while it writes (F1).
    static let feedLock: Int64 = 0x646f_6373_746f_7265   // "docstore"

    public init(client: PostgresClient, logger: Logger) {
        self.client = client
        self.logger = logger
    }

    /// Creates the tables when missing (under the feed lock, so two servers starting together
    /// do not race).
    public func prepare() async throws {
        try await client.withTransaction(logger: logger) { conn in
            try await conn.query("SELECT pg_advisory_xact_lock(\(Self.feedLock))", logger: logger)
            try await conn.query("""
                CREATE TABLE IF NOT EXISTS docstore_devices (device text PRIMARY KEY, secret_sha256 text NOT NULL)
                """, logger: logger)
            try await conn.query("""
                CREATE TABLE IF NOT EXISTS docstore_pushes (device text NOT NULL, tx bigint NOT NULL, PRIMARY KEY (device, tx))
                """, logger: logger)
            try await conn.query("""
                CREATE TABLE IF NOT EXISTS docstore_objects (id uuid PRIMARY KEY, state text NOT NULL)
                """, logger: logger)
            try await conn.query("""
                CREATE TABLE IF NOT EXISTS docstore_links (source uuid NOT NULL, relationship text NOT NULL, target uuid NOT NULL,
                    present boolean NOT NULL, clock bigint NOT NULL, device text NOT NULL, PRIMARY KEY (source, relationship, target))
                """, logger: logger)
            try await conn.query("""
                CREATE TABLE IF NOT EXISTS docstore_feed (seq bigserial PRIMARY KEY, entry text NOT NULL)
                """, logger: logger)
            var hadReferences = false
            for try await (name,) in try await conn.query("SELECT to_regclass('docstore_refs')::text", logger: logger).decode((String?,).self) {
                hadReferences = name != nil
            }
            try await conn.query("""
                CREATE TABLE IF NOT EXISTS docstore_refs (source uuid NOT NULL, field text NOT NULL, target uuid NOT NULL,
                    PRIMARY KEY (source, field))
                """, logger: logger)
            if !hadReferences {
                // A database from before the table: the references its objects hold (M5).
                try await conn.query("""
                    INSERT INTO docstore_refs (source, field, target)
                    SELECT o.id, f.key, (f.value -> 'value' ->> 'v')::uuid
                    FROM docstore_objects o, jsonb_each(o.state::jsonb -> 'fields') f
                    WHERE NOT coalesce((o.state::jsonb ->> 'deleted')::boolean, false) AND f.value -> 'value' ->> 't' = 'reference'
                    ON CONFLICT DO NOTHING
                    """, logger: logger)
            }
            try await conn.query("CREATE INDEX IF NOT EXISTS docstore_refs_target ON docstore_refs (target)", logger: logger)
            try await conn.query("""
                CREATE TABLE IF NOT EXISTS docstore_fields (entity text NOT NULL, field text NOT NULL, kind text NOT NULL,
                    PRIMARY KEY (entity, field))
                """, logger: logger)
        }
    }

    /// Applies a push (F1–F3) and says what was accepted and set aside.
    func push(_ request: PushRequest, now: Int64) async throws -> PushResponse {
        try await client.withTransaction(logger: logger) { conn in
            try await conn.query("SELECT pg_advisory_xact_lock(\(Self.feedLock))", logger: logger)
            try await checkDevice(request, conn)
            try await checkSchema(request.schema, conn)
            var accepted: [UInt64] = []
            var conflicts: [SyncConflict] = []
            let bound = HybridTimestamp(milliseconds: now + SyncProtocol.maximumClockDriftMilliseconds, counter: UInt16.max)
            for transaction in request.transactions {
                let fresh = try await conn.query("""
                    INSERT INTO docstore_pushes (device, tx) VALUES (\(request.device), \(Int64(bitPattern: transaction.id)))
                    ON CONFLICT DO NOTHING RETURNING tx
                    """, logger: logger)
                var inserted = false
                for try await _ in fresh { inserted = true }
                accepted.append(transaction.id)
                guard inserted else { continue }     // F2: applied by an earlier, unanswered push
                var clock = transaction.clock
                if clock > bound {                   // C3
                    clock = bound
                    for change in transaction.changes {
                        conflicts.append(SyncConflict(kind: .clockHeldBack, entity: change.entity, id: change.id, transaction: transaction.id))
                    }
                }
                // Inserts first: a link in this transaction to an object it brings back (M2)
                // finds the object alive (M6), whatever order the save listed them in. Deletes
                // last: a save that moves objects off one it deletes (a unique merge, U3) keeps
                // the moves, rather than have the delete clear them first (M5) — and the feed
                // shows the moves before the delete, so no device's cascade takes the objects.
                let ordered = transaction.changes.filter { $0.kind == .insert } + transaction.changes.filter { $0.kind == .update }
                    + transaction.changes.filter { $0.kind == .delete }
                for change in ordered {
                    conflicts += try await apply(change, clock: clock, device: request.device, transaction: transaction.id, conn)
                }
            }
            return PushResponse(accepted: accepted, conflicts: conflicts, serverTime: now)
        }
    }

    /// The feed after `request.after` (F1).
    func pull(_ request: PullRequest, now: Int64) async throws -> PullResponse {
        guard request.after >= 0, request.limit > 0 else {
            throw SyncWireError(.invalidArgument, "a pull needs a cursor ≥ 0 and a limit ≥ 1 (got \(request.after), \(request.limit))")
        }
        let limit = min(request.limit, SyncProtocol.maximumPullLimit)
        return try await client.withConnection { conn in
            var newest: Int64 = 0
            for try await (top,) in try await conn.query("SELECT coalesce(max(seq), 0) FROM docstore_feed", logger: logger).decode((Int64,).self) {
                newest = top
            }
            guard request.after <= newest else {
                throw SyncWireError(.invalidArgument, "cursor \(request.after) is from the future: the feed ends at \(newest)")
            }
            var entries: [FeedEntry] = []
            let rows = try await conn.query("""
                SELECT seq, entry FROM docstore_feed WHERE seq > \(request.after) ORDER BY seq LIMIT \(limit + 1)
                """, logger: logger)
            for try await (seq, text) in rows.decode((Int64, String).self) {
                var entry = try WireCoding.decode(FeedEntry.self, from: Data(text.utf8))
                entry.seq = seq
                entries.append(entry)
            }
            let hasMore = entries.count > limit
            if hasMore { entries.removeLast() }
            return PullResponse(entries: entries, cursor: entries.last?.seq ?? request.after, hasMore: hasMore, serverTime: now)
        }
    }

    // MARK: - Steps of a push

    /// The first secret a device ID pushes with is its own; another is refused (F3).
    private func checkDevice(_ request: PushRequest, _ conn: PostgresConnection) async throws {
        let digest = SHA256.hash(data: Data(request.deviceSecret.utf8)).map { String(format: "%02x", $0) }.joined()
        try await conn.query("""
            INSERT INTO docstore_devices (device, secret_sha256) VALUES (\(request.device), \(digest)) ON CONFLICT DO NOTHING
            """, logger: logger)
        for try await (stored,) in try await conn.query("SELECT secret_sha256 FROM docstore_devices WHERE device = \(request.device)", logger: logger).decode((String,).self) {
            guard stored == digest else {
                throw SyncWireError(.deviceMismatch, "device ID \(request.device) belongs to another device (its secret differs)")
            }
        }
    }

    /// Each field keeps the kind it was first pushed with; a push that disagrees is refused.
    private func checkSchema(_ schema: SchemaManifest, _ conn: PostgresConnection) async throws {
        var known: [String: [String: String]] = [:]
        for try await (entity, field, kind) in try await conn.query("SELECT entity, field, kind FROM docstore_fields", logger: logger).decode((String, String, String).self) {
            known[entity, default: [:]][field] = kind
        }
        for (entity, fields) in schema.entities.sorted(by: { $0.key < $1.key }) {
            for (field, kind) in fields.sorted(by: { $0.key < $1.key }) {
                if let stored = known[entity]?[field] {
                    guard stored == kind else {
                        throw SyncWireError(.schemaIncompatible, "\(entity).\(field) is \(kind) in schema version \(schema.version), but \(stored) on the server")
                    }
                } else {
                    try await conn.query("INSERT INTO docstore_fields (entity, field, kind) VALUES (\(entity), \(field), \(kind)) ON CONFLICT DO NOTHING", logger: logger)
                }
            }
        }
    }

    /// Merges one object change (M1–M3) and writes its feed entry when anything changed.
    private func apply(_ change: ObjectChange, clock: HybridTimestamp, device: String, transaction: UInt64,
                       _ conn: PostgresConnection) async throws -> [SyncConflict] {
        let current = try await state(of: change.id, conn)
        var conflicts: [SyncConflict] = []
        var change = change
        for (name, value) in change.fields.sorted(by: { $0.key < $1.key }) {
            // M6 for a to-one: a reference to an object the server holds as deleted is nil, as
            // the delete's rules made it on every device that had the object.
            if case .reference(let target) = value, try await state(of: target, conn)?.deleted == true {
                change.fields[name] = .null
                conflicts.append(SyncConflict(kind: .linkToDeletedObject, entity: change.entity, id: change.id, field: name, transaction: transaction))
            }
        }
        let outcome = ObjectMerge.merge(change, into: current, clock: clock, device: device, transaction: transaction)
        var links: [ClockedLink] = []
        if outcome.state.deleted, current?.deleted != true {
            // M5: a deleted object's links, both ways, go with it (each device's delete rules
            // remove them locally too); an ID brought back later starts with none.
            try await conn.query("""
                UPDATE docstore_links SET present = false, clock = \(Int64(bitPattern: clock.rawValue)), device = \(device)
                WHERE (source = \(change.id) OR target = \(change.id)) AND present
                """, logger: logger)
            try await clearReferences(to: change.id, conn)
        }
        if !outcome.state.deleted {
            for link in change.links {
                if link.present, try await state(of: link.target, conn)?.deleted == true {
                    // M6: a link to a deleted object is set aside; its device removes the link
                    // when it applies the delete.
                    conflicts.append(SyncConflict(kind: .linkToDeletedObject, entity: change.entity, id: change.id,
                                                  field: link.relationship, transaction: transaction))
                    continue
                }
                var stored: (clock: HybridTimestamp, device: String)?
                for try await (c, d) in try await conn.query("""
                    SELECT clock, device FROM docstore_links
                    WHERE source = \(change.id) AND relationship = \(link.relationship) AND target = \(link.target)
                    """, logger: logger).decode((Int64, String).self) {
                    stored = (HybridTimestamp(rawValue: UInt64(bitPattern: c)), d)
                }
                guard ObjectMerge.linkWins(clock: clock, device: device, over: stored) else { continue }
                try await conn.query("""
                    INSERT INTO docstore_links (source, relationship, target, present, clock, device)
                    VALUES (\(change.id), \(link.relationship), \(link.target), \(link.present), \(Int64(bitPattern: clock.rawValue)), \(device))
                    ON CONFLICT (source, relationship, target) DO UPDATE SET present = excluded.present, clock = excluded.clock, device = excluded.device
                    """, logger: logger)
                links.append(ClockedLink(relationship: link.relationship, target: link.target, present: link.present, clock: clock, device: device))
            }
        }
        conflicts = outcome.conflicts + conflicts
        guard outcome.changed || !links.isEmpty else { return conflicts }
        try await store(outcome.state, of: change.id, conn)
        let state = outcome.state
        let entry = FeedEntry(seq: 0, entity: state.entity, id: change.id, deleted: state.deleted, fields: state.fields, links: links,
                              device: state.deleted ? state.deletedDevice : device, deletedClock: state.deleted ? state.deletedClock : nil)
        let text = String(decoding: WireCoding.encode(entry), as: UTF8.self)
        try await conn.query("INSERT INTO docstore_feed (entry) VALUES (\(text))", logger: logger)
        return conflicts
    }

    /// Writes the state of the object `id`, and the to-one references it holds (M5).
    private func store(_ state: ObjectState, of id: UUID, _ conn: PostgresConnection) async throws {
        let stateText = String(decoding: WireCoding.encode(state), as: UTF8.self)
        try await conn.query("""
            INSERT INTO docstore_objects (id, state) VALUES (\(id), \(stateText))
            ON CONFLICT (id) DO UPDATE SET state = excluded.state
            """, logger: logger)
        try await conn.query("DELETE FROM docstore_refs WHERE source = \(id)", logger: logger)
        guard !state.deleted else { return }
        for (name, field) in state.fields.sorted(by: { $0.key < $1.key }) {
            guard case .reference(let target) = field.value else { continue }
            try await conn.query("INSERT INTO docstore_refs (source, field, target) VALUES (\(id), \(name), \(target))", logger: logger)
        }
    }

    /// M5 for to-ones: the live objects whose to-one names `id`, just deleted, hold nil from the
    /// delete on — what every device's delete rules make of it — with the clock of the edit
    /// that set the reference: the nil is that edit's consequence, not a newer edit, so a move
    /// of the to-one elsewhere made after that edit (by a device that had not seen the delete)
    /// still wins. The feed says so, so a fresh device replays the same state (devices also
    /// drop placeholders waiting for `id`, AP3, so an ID brought back later is not
    /// reattached).
    private func clearReferences(to id: UUID, _ conn: PostgresConnection) async throws {
        var sources: [(UUID, String)] = []
        for try await (source, field) in try await conn.query(
            "SELECT source, field FROM docstore_refs WHERE target = \(id) ORDER BY source, field", logger: logger
        ).decode((UUID, String).self) {
            sources.append((source, field))
        }
        for (source, field) in sources {
            guard var state = try await state(of: source, conn), !state.deleted,
                  let old = state.fields[field], old.value == .reference(id) else { continue }
            let cleared = ClockedValue(value: .null, clock: old.clock, device: old.device)
            state.fields[field] = cleared
            try await store(state, of: source, conn)
            let entry = FeedEntry(seq: 0, entity: state.entity, id: source, deleted: false, fields: state.fields, links: [],
                                  device: cleared.device, deletedClock: nil)
            try await conn.query("INSERT INTO docstore_feed (entry) VALUES (\(String(decoding: WireCoding.encode(entry), as: UTF8.self)))", logger: logger)
        }
    }

    /// The server's state of the object `id`, nil when it has never seen it.
    private func state(of id: UUID, _ conn: PostgresConnection) async throws -> ObjectState? {
        var current: ObjectState?
        for try await (text,) in try await conn.query("SELECT state FROM docstore_objects WHERE id = \(id)", logger: logger).decode((String,).self) {
            current = try WireCoding.decode(ObjectState.self, from: Data(text.utf8))
        }
        return current
    }
}
