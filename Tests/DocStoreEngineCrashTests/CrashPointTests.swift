// The every-crash-point campaign (issue #2 "Crash safety, proven"). A fixed-seed workload of
// puts, deletes, overwrites, overflow values, blobs, tree drops and checkpoints runs on the
// fault-injecting file system, crashing at each mutating call in turn; for each crash, several
// power-loss images are built (only synced data; everything; random apply/drop/tear with
// reordering), the store is recovered from each, and:
//   - in `.full` durability the recovered state is exactly the model after the acknowledged
//     transactions, or after one more (the commit in flight may have reached the disk) — I4, I5;
//   - in `.normal` durability it is the model after some prefix of the attempted transactions no
//     shorter than the last checkpoint — never a partial transaction;
//   - the integrity check passes (I1, I2, I3, I9, I10);
//   - recovering the recovered store again after a second crash gives the same state (I6).
// Failures print the seed, crash point, image mode and the last file-system calls.

import DocStoreTestSupport
import Foundation
import Synchronization
import Testing

@testable import DocStoreEngine

@Suite struct CrashPointTests {
    static let path = "/db/Crash.docstore"

    static func options(_ fs: any FileSystem, _ durability: Durability, checkpointWALBytes: Int = 24_000, spillBytes: Int = 32 << 20) -> EngineOptions {
        var o = EngineOptions()
        o.writeSpillBytes = spillBytes
        o.fileSystem = fs
        o.durability = durability
        o.blobThreshold = 6000
        o.checkpointWALBytes = checkpointWALBytes
        o.walPreallocationBytes = 4096  // small steps: the campaign crashes inside them too
        return o
    }

    struct Outcome {
        var crashPoints = 0
        var images = 0
    }

    /// Runs the campaign for one seed and durability mode; returns how many crash points and
    /// images were checked.
    static func campaign(seed: UInt64, durability: Durability, transactions: Int, checkpointWALBytes: Int = 24_000, spillBytes: Int = 32 << 20) throws -> Outcome {
        let workload = EngineWorkload(seed: seed, transactions: transactions)
        // A clean run counts the calls (and checks the workload itself against the model).
        let clean = FaultInjectingFileSystem()
        let engine = try Engine.open(at: path, options: options(clean, durability, checkpointWALBytes: checkpointWALBytes, spillBytes: spillBytes))
        let result = workload.run(on: engine)
        #expect(result.error == nil, "seed \(seed): clean run failed: \(String(describing: result.error))")
        #expect(try EngineModel.read(engine) == workload.models.last, "seed \(seed): clean run differs from the model")
        let totalCalls = clean.callCount
        try engine.close()

        var outcome = Outcome()
        for point in 1...totalCalls {
            let fs = FaultInjectingFileSystem()
            fs.crash(at: point)
            var acknowledged = 0, attempted = 0
            if let engine = try? Engine.open(at: path, options: options(fs, durability, checkpointWALBytes: checkpointWALBytes, spillBytes: spillBytes)) {
                let r = workload.run(on: engine)
                acknowledged = r.acknowledged
                attempted = r.attempted
            }
            #expect(fs.hasCrashed, "seed \(seed): crash point \(point) was never reached")
            outcome.crashPoints += 1
            for mode in [CrashMode.dropUnsynced, .applyAll, .random(seed: seed &* 31 &+ UInt64(point))] {
                outcome.images += 1
                let context = "seed \(seed), \(durability), crash point \(point)/\(totalCalls), \(mode), acked \(acknowledged)/\(attempted); last calls: \(fs.recentCalls())"
                let image = FaultInjectingFileSystem(files: fs.crashImage(mode))
                let recovered: Engine
                do {
                    recovered = try Engine.open(at: path, options: options(image, durability, checkpointWALBytes: checkpointWALBytes, spillBytes: spillBytes))
                } catch {
                    Issue.record("recovery failed: \(error) — \(context)")
                    continue
                }
                let state = try EngineModel.read(recovered)
                // Two prefixes can hold equal states (a transaction that drops and recreates an
                // empty tree changes nothing), so ask whether an allowed prefix matches.
                let allowed: ClosedRange<Int> = durability == .full
                    ? acknowledged...min(acknowledged + 1, workload.models.count - 1)
                    : 0...min(attempted, workload.models.count - 1)
                if !allowed.contains(where: { workload.models[$0] == state }) {
                    let found = workload.index(of: state).map { "the state after \($0) transactions" } ?? "no committed prefix"
                    Issue.record("recovered \(found), allowed \(allowed) — \(context)")
                    continue
                }
                let report = try recovered.verify()
                #expect(report.isClean, "integrity: \(report.problems.prefix(3)) — \(context)")
                // I6: crash again right after recovery (losing anything unsynced) and recover again.
                let second = FaultInjectingFileSystem(files: image.crashImage(.dropUnsynced))
                let again = try Engine.open(at: path, options: options(second, durability, checkpointWALBytes: checkpointWALBytes, spillBytes: spillBytes))
                #expect(try EngineModel.read(again) == state, "second recovery differs — \(context)")
            }
        }
        return outcome
    }

    /// Runs the campaign for several seeds on all cores and returns the summed outcome.
    static func campaigns(seeds: [UInt64], durability: Durability, transactions: Int, checkpointWALBytes: Int = 24_000, spillBytes: Int = 32 << 20) -> Outcome {
        let total = Mutex(Outcome())
        DispatchQueue.concurrentPerform(iterations: seeds.count) { i in
            do {
                let o = try campaign(seed: seeds[i], durability: durability, transactions: transactions, checkpointWALBytes: checkpointWALBytes, spillBytes: spillBytes)
                total.withLock { $0.crashPoints += o.crashPoints; $0.images += o.images }
            } catch {
                Issue.record("seed \(seeds[i]): \(error)")
            }
        }
        return total.withLock { $0 }
    }

    @Test func everyCrashPointRecoversExactlyTheAcknowledgedTransactions() throws {
        let total = Self.campaigns(seeds: Array(1...16), durability: .full, transactions: 28)
        print("crash campaign (full durability): \(total.crashPoints) crash points, \(total.images) recovered images, seeds 1-16")
        #expect(total.crashPoints >= 2000)
    }

    @Test func everyCrashPointInNormalModeRecoversAPrefix() throws {
        let total = Self.campaigns(seeds: [101, 102, 103], durability: .normal, transactions: 30)
        print("crash campaign (normal durability): \(total.crashPoints) crash points, \(total.images) recovered images, seeds 101-103")
        #expect(total.crashPoints >= 300)
    }

    /// Transactions larger than the checkpoint threshold commit by checkpoint instead of a WAL
    /// record; with a 2 000-byte threshold most of this workload's transactions take that path.
    @Test func everyCrashPointOfCommitByCheckpointRecoversExactlyTheAcknowledged() throws {
        let total = Self.campaigns(seeds: [201, 202, 203, 204], durability: .full, transactions: 20, checkpointWALBytes: 2_000)
        print("crash campaign (commit by checkpoint): \(total.crashPoints) crash points, \(total.images) recovered images, seeds 201-204")
        #expect(total.crashPoints >= 400)
    }

    /// Transactions past a two-page spill limit write their pages into the file before they
    /// commit: crashes during those writes, after the commit's log record (replayed onto a
    /// checkpoint for which those pages are free), and in the checkpoint that syncs them, must
    /// leave exactly the acknowledged transactions — committed by log, and by checkpoint.
    @Test func everyCrashPointOfASpillingTransactionRecoversExactlyTheAcknowledged() throws {
        let logged = Self.campaigns(seeds: [301, 302], durability: .full, transactions: 14, spillBytes: 2 * 4096)
        let checkpointed = Self.campaigns(seeds: [303, 304], durability: .full, transactions: 14, checkpointWALBytes: 2_000, spillBytes: 2 * 4096)
        print("crash campaign (spilling transactions): \(logged.crashPoints) + \(checkpointed.crashPoints) crash points, \(logged.images + checkpointed.images) recovered images, seeds 301-304")
        #expect(logged.crashPoints >= 200 && checkpointed.crashPoints >= 200)
    }
}
