// Kills during sync (issue #21 § Proof): device processes SIGKILLed mid-push and mid-pull, the
// server SIGKILLed mid-request, PostgreSQL crashed and restarted while devices sync. Each ends
// the same way: heal (sync until quiet), then every replica equals every other object by object,
// passes the store's full check, has nothing left to push, and holds every note whose save was
// acknowledged exactly once — no loss, no duplicate. Fixed seeds, printed on failure.

import DocStore
import DocStoreSyncTestModels
import DocStoreSyncWire
import DocStoreTestSupport
import Foundation
import Testing
@testable import DocStoreServer
@testable import DocStoreSync
#if canImport(Glibc)
import Glibc
#endif

@Suite(.serialized) struct SyncKillTests {
    static var child: String { Bundle.main.bundleURL.appendingPathComponent("DocStoreSyncKillTarget").path }

    /// 120 SIGKILLs of device processes (two stores, taking turns) at random moments; at least
    /// 50 must meet a sync round (the engine's events tell which step, push or pull).
    @Test func devicesKilledMidPushAndMidPullLoseNothing() async throws {
        let seed: UInt64 = 2611
        var rng = SplitMix64(seed: seed)
        let server = try ServerProcess(postgres: try TestPostgres.newDatabase())
        defer { server.stop() }        // (also keeps it alive: Swift may end a lifetime at its last use)
        let dir = TemporaryDirectory("sync-kill")
        defer { withExtendedLifetime(dir) {} }
        var acknowledged: Set<String> = []
        var killedIn: [String: Int] = [:]
        var kills = 0
        for round in 0..<120 {
            let device = round % 2 == 0 ? "a" : "b"
            let output = dir.file("round-\(round).out")
            let pid = try Spawn.start([Self.child, dir.file("\(device).docstore"), server.url.absoluteString, device, "\(seed * 1_000 + UInt64(round))"],
                                      output: output)
            // Once the child has opened its store and started its first sync round (under load
            // that can take a while), 0–250 ms more of edits and syncs, then the kill.
            let started = Date()
            while Date().timeIntervalSince(started) < 20,
                  !(((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("round")) {
                try await Task.sleep(for: .milliseconds(5))
            }
            try await Task.sleep(for: .milliseconds(Int(rng.next() % 250)))
            Spawn.kill(pid)
            kills += 1
            let lines = ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            for line in lines where line.hasPrefix("error") {
                Issue.record("seed \(seed) round \(round) (\(device)): the child said \(line)")
            }
            acknowledged.formUnion(lines.filter { $0.hasPrefix("saved ") }.map { String($0.dropFirst(6)) })
            // Where the kill met the child: in a round (after "round", before "synced" — the
            // loop prints both itself), and there in which step, as far as the engine's events
            // (printed a little late under load) had told.
            switch lines.last(where: { $0 == "round" || $0 == "synced" }) {
            case "round"?:
                let step = lines.last { ["export", "import", "setup", "round"].contains($0) }
                killedIn["in a round" + (step == "round" ? "" : ", \(step ?? "")"), default: 0] += 1
            case "synced"?: killedIn["between rounds", default: 0] += 1
            default: killedIn["opening", default: 0] += 1
            }
        }
        print("sync kills: \(kills) SIGKILLs of device processes, by step: \(killedIn.sorted { $0.key < $1.key }); \(acknowledged.count) acknowledged notes; seed \(seed)")
        #expect(kills >= 100)
        let inRounds = killedIn.filter { $0.key.hasPrefix("in a round") }.values.reduce(0, +)
        #expect(inRounds >= 50, "seed \(seed): too few kills met a sync round to prove anything: \(killedIn)")
        #expect(acknowledged.count >= 50, "seed \(seed): the children saved too little to prove anything")
        let devices = try [SyncedStore(dir.file("a.docstore"), "a", server.url), SyncedStore(dir.file("b.docstore"), "b", server.url),
                           SyncedStore(dir.file("c.docstore"), "c", server.url)]
        try await Self.healAndCheck(devices, acknowledged: acknowledged, "seed \(seed)")
    }

    /// The server SIGKILLed 25 times while a device pushes and pulls, restarted on the same
    /// port each time; the device's failed rounds are retried by the next.
    @Test func theServerKilledMidRequestLosesNothing() async throws {
        let postgres = try TestPostgres.newDatabase()
        var server = try ServerProcess(postgres: postgres)
        let port = server.port
        defer { server.stop() }
        let dir = TemporaryDirectory("sync-server-kill")
        defer { withExtendedLifetime(dir) {} }
        let worker = try EditingDevice(dir.file("a.docstore"), "a", server.url)
        let running = Task { await worker.run() }
        var rng = SplitMix64(seed: 77)
        for _ in 0..<25 {
            try await Task.sleep(for: .milliseconds(40 + Int(rng.next() % 160)))
            server.kill()
            server = try ServerProcess(postgres: postgres, port: port)
        }
        try await Task.sleep(for: .milliseconds(200))
        running.cancel()
        let report = await running.value
        print("server kills: 25 SIGKILLs; the device saved \(report.acknowledged.count) notes in \(report.rounds) rounds, \(report.failedRounds) failed")
        #expect(report.failedRounds >= 1, "no round met a killed server: the test proves nothing")
        #expect(report.acknowledged.count >= 20)
        let devices = try [worker.device, SyncedStore(dir.file("b.docstore"), "b", server.url)]
        try await Self.healAndCheck(devices, acknowledged: report.acknowledged, "server kills")
    }

    /// PostgreSQL stopped as by a crash (immediate: no checkpoint, connections cut) and started
    /// again 5 times while two devices sync through two servers. A round that meets it down may
    /// fail or may wait for it (postgres-nio's pool reconnects), so the check that the test
    /// proves something counts the rounds in flight during a downtime, not the failed ones.
    @Test func postgresCrashedAndRestartedDuringSyncLosesNothing() async throws {
        let dir = TemporaryDirectory("sync-pg-restart")
        defer { withExtendedLifetime(dir) {} }   // runs last: after the cluster in it has stopped
        let port = 40_000 + Int(getpid() % 10_000)
        let url = try TestPostgres.run(["bash", TestPostgres.packageRoot + "/scripts/test-postgres.sh", "start", dir.file("cluster"), "\(port)"])
            .trimmingCharacters(in: .whitespacesAndNewlines)
        defer {
            _ = try? TestPostgres.run(["bash", TestPostgres.packageRoot + "/scripts/test-postgres.sh", "stop", dir.file("cluster")])
        }
        let one = try ServerProcess(postgres: url), two = try ServerProcess(postgres: url)
        defer { one.stop(); two.stop() }
        let a = try EditingDevice(dir.file("a.docstore"), "a", one.url), b = try EditingDevice(dir.file("b.docstore"), "b", two.url)
        let runningA = Task { await a.run() }, runningB = Task { await b.run() }
        // Each crash keeps the database down for 400 ms, so the rounds then in flight meet it
        // down: they fail, or wait in the server's pool for it to come back.
        var downtimes: [ClosedRange<ContinuousClock.Instant>] = []
        for _ in 0..<5 {
            try await Task.sleep(for: .milliseconds(300))
            try TestPostgres.run(["bash", TestPostgres.packageRoot + "/scripts/test-postgres.sh", "crash", dir.file("cluster")])
            let down = ContinuousClock.now
            try await Task.sleep(for: .milliseconds(400))
            downtimes.append(down...ContinuousClock.now)
            try TestPostgres.run(["bash", TestPostgres.packageRoot + "/scripts/test-postgres.sh", "resume", dir.file("cluster")])
        }
        try await Task.sleep(for: .milliseconds(300))
        runningA.cancel()
        runningB.cancel()
        let (ra, rb) = (await runningA.value, await runningB.value)
        let metDown = (ra.roundSpans + rb.roundSpans).filter { span in downtimes.contains { $0.overlaps(span) } }.count
        print("postgres restarts: 5 immediate stops, each down 400 ms; devices saved \(ra.acknowledged.count) + \(rb.acknowledged.count) notes; \(metDown) rounds were in flight while it was down, \(ra.failedRounds + rb.failedRounds) failed")
        #expect(metDown >= 1, "no round met the database down: the test proves nothing")
        let devices = try [a.device, b.device, SyncedStore(dir.file("c.docstore"), "c", one.url)]
        try await Self.healAndCheck(devices, acknowledged: ra.acknowledged.union(rb.acknowledged), "postgres restarts")
    }

    /// SV3: with PostgreSQL stopped, a round fails within the server's 10 s deadline with a
    /// typed `unavailable` (503), not after the device's own 30 s timeout; once PostgreSQL is
    /// back, the next round pushes the save that waited.
    @Test func aRequestWhilePostgresIsDownFailsFastAndTheNextRoundSucceeds() async throws {
        let dir = TemporaryDirectory("sync-pg-down")
        defer { withExtendedLifetime(dir) {} }   // runs last: after the cluster in it has stopped
        let script = TestPostgres.packageRoot + "/scripts/test-postgres.sh"
        let port = 40_000 + Int((getpid() + 5_000) % 10_000)
        let url = try TestPostgres.run(["bash", script, "start", dir.file("cluster"), "\(port)"]).trimmingCharacters(in: .whitespacesAndNewlines)
        defer {
            _ = try? TestPostgres.run(["bash", script, "stop", dir.file("cluster")])
        }
        let server = try ServerProcess(postgres: url)
        defer { server.stop() }
        let device = try SyncedStore(dir.file("a.docstore"), "a", server.url)
        let context = Context(store: device.store)
        try context.insert(Note(title: "before"))
        try context.save()
        try await device.sync.syncNow()

        try TestPostgres.run(["bash", script, "stop", dir.file("cluster")])
        try context.insert(Note(title: "while down"))
        try context.save()
        let started = ContinuousClock.now
        let error = await #expect(throws: SyncError.self) { try await device.sync.syncNow() }
        let waited = ContinuousClock.now - started
        print("postgres down: the round failed after \(waited) with \(String(describing: error))")
        #expect(error?.code == .server && error?.serverError?.code == .unavailable, "\(String(describing: error))")
        #expect(waited < .seconds(25), "the round waited \(waited): longer than the server's deadline allows")
        #expect(await device.sync.pendingCount == 1)

        try TestPostgres.run(["bash", script, "resume", dir.file("cluster")])
        // A query in flight, too: another session holds the feed lock for 20 s, so a push waits
        // on it inside its transaction. It is answered at the deadline all the same.
        let holder = try Spawn.start(["psql", url, "-c",
                                             "SELECT pg_advisory_lock(\(SyncDatabase.feedLock)), pg_sleep(20)"], output: dir.file("lock.log"))
        try await Task.sleep(for: .seconds(1))
        let lockedStart = ContinuousClock.now
        let locked = await #expect(throws: SyncError.self) { try await device.sync.syncNow() }
        let lockedWait = ContinuousClock.now - lockedStart
        print("feed lock held: the round failed after \(lockedWait) with \(String(describing: locked))")
        #expect(locked?.serverError?.code == .unavailable, "\(String(describing: locked))")
        #expect(lockedWait < .seconds(15), "the round waited \(lockedWait): for the lock, not the deadline")
        Spawn.wait(holder)                  // the lock goes with its session
        var pushed = 0
        for _ in 0..<20 where pushed == 0 {
            pushed = (try? await device.sync.syncNow().pushed) ?? 0
            if pushed == 0 { try await Task.sleep(for: .milliseconds(250)) }
        }
        #expect(pushed == 1)
        #expect(await device.sync.pendingCount == 0)
    }

    /// Syncs every device until a whole round moves nothing, then checks them (file comment).
    static func healAndCheck(_ devices: [SyncedStore], acknowledged: Set<String>, _ context: String) async throws {
        for round in 0..<8 {
            var moved = 0
            for device in devices {
                let summary = try await device.sync.syncNow()
                moved += summary.pushed + summary.pulled
            }
            if moved == 0 && round > 0 { break }
        }
        let snapshots = try await devices.asyncMap { try await $0.sync.snapshot() }
        for (i, device) in devices.enumerated() {
            let differing = Set(snapshots[0].keys).union(snapshots[i].keys).filter { snapshots[0][$0] != snapshots[i][$0] }
            #expect(differing.isEmpty, "\(context): \(devices[0].name) and \(device.name) differ in \(differing.count) objects, e.g. \(differing.sorted().prefix(3))")
            #expect(try device.store.verify().isEmpty, "\(context): \(device.name) fails the full check")
            #expect(await device.sync.pendingCount == 0, "\(context): \(device.name) still has unpushed saves")
            let context2 = Context(store: device.store)
            var count: [String: Int] = [:]
            for note in try context2.fetch(SyncModels.Note.self) { count[note.title, default: 0] += 1 }
            let lost = acknowledged.filter { count[$0] == nil }
            let doubled = count.filter { $0.value > 1 }
            #expect(lost.isEmpty, "\(context): \(device.name) lost \(lost.count) acknowledged notes, e.g. \(lost.sorted().prefix(3))")
            #expect(doubled.isEmpty, "\(context): \(device.name) has duplicates: \(doubled.keys.sorted().prefix(3))")
        }
    }
}

/// A store on disk and its sync engine, opened in this process.
final class SyncedStore: Sendable {
    let name: String
    let store: Store
    let sync: SyncEngine

    init(_ path: String, _ name: String, _ server: URL) throws {
        self.name = name
        store = try Store(url: URL(fileURLWithPath: path), models: SyncModels.all)
        sync = try SyncEngine(store: store, server: server, device: name, localOnlyEntities: ["Cache"])
    }
}

/// A device in this process that inserts a note and syncs, round after round, until cancelled;
/// a failed round (the server or PostgreSQL gone) is counted and the next one retries.
final class EditingDevice: Sendable {
    let device: SyncedStore

    struct Report: Sendable {
        var acknowledged: Set<String> = []
        var rounds = 0
        var failedRounds = 0
        /// When each sync round started and ended.
        var roundSpans: [ClosedRange<ContinuousClock.Instant>] = []
    }

    init(_ path: String, _ name: String, _ server: URL) throws {
        device = try SyncedStore(path, name, server)
    }

    func run() async -> Report {
        var report = Report()
        let context = Context(store: device.store)
        while !Task.isCancelled {
            report.rounds += 1
            let title = "\(device.name)-\(report.rounds)"
            do {
                try context.insert(SyncModels.Note(title: title))
                try context.save()
                report.acknowledged.insert(title)
            } catch {
                Issue.record("\(device.name): a local save failed: \(error)")
                context.rollback()
            }
            let started = ContinuousClock.now
            do { try await device.sync.syncNow() } catch { report.failedRounds += 1 }
            report.roundSpans.append(started...ContinuousClock.now)
        }
        return report
    }
}
