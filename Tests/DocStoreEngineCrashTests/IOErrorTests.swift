// I/O error injection: EIO and ENOSPC at every mutating call of a commit and of a checkpoint,
// failing once or from then on. After each: the caller got a typed error (.io / .noSpace / .failed),
// the open store refuses writes until reopened (I8), it still answers reads, no commit reported
// successful is missing after reopening, nothing half-written is visible, and once the fault
// clears a reopened store accepts writes again; reopened in place (Engine.reopenAfterFailure,
// I11) it holds exactly the acknowledged commits.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreEngine

@Suite struct IOErrorTests {
    static let path = "/db/Faulty.docstore"

    static func options(_ fs: any FileSystem, spillBytes: Int = 32 << 20) -> EngineOptions {
        var o = EngineOptions()
        o.writeSpillBytes = spillBytes
        o.fileSystem = fs
        o.blobThreshold = 6000
        o.checkpointWALBytes = 24_000
        o.walPreallocationBytes = 4096
        return o
    }

    @Test(arguments: [InjectedFault.eio, .enospc], [false, true])
    func failedCallLeavesTheStoreConsistentAndRefusingWrites(fault: InjectedFault, persistently: Bool) throws {
        try Self.inject(fault, persistently: persistently, spillBytes: 32 << 20)
    }

    /// The same over transactions past a two-page spill limit: a failed write of a spilled page
    /// is an I/O failure like any other.
    @Test(arguments: [InjectedFault.eio, .enospc])
    func failedSpillLeavesTheStoreConsistentAndRefusingWrites(fault: InjectedFault) throws {
        try Self.inject(fault, persistently: false, spillBytes: 2 * 4096)
    }

    static func inject(_ fault: InjectedFault, persistently: Bool, spillBytes: Int) throws {
        let workload = EngineWorkload(seed: 77, transactions: 20)
        // Count the calls of a clean run.
        let clean = FaultInjectingFileSystem()
        let cleanEngine = try Engine.open(at: Self.path, options: Self.options(clean, spillBytes: spillBytes))
        let start = clean.callCount
        _ = workload.run(on: cleanEngine)
        let total = clean.callCount
        var injected = 0
        for call in (start + 1)...total {
            let fs = FaultInjectingFileSystem()
            let engine = try Engine.open(at: Self.path, options: Self.options(fs, spillBytes: spillBytes))
            fs.fail(at: call, with: fault, persistently: persistently)
            let r = workload.run(on: engine)
            let context = "fault \(fault) at call \(call)/\(total) persistently \(persistently); last calls \(fs.recentCalls(4))"
            // Removing a blob file nothing references may fail harmlessly: the orphan sweep at the
            // next open removes it. Any other call must surface its failure — at the latest at the
            // next write, when it hit the last commit after that commit became durable (I11).
            let hit = fs.injectedCall ?? "nothing"
            let harmless = hit.hasPrefix("remove ") && hit.hasSuffix(".blob")
            var surfaced = r.error
            if surfaced == nil && fs.injectedCall != nil && !harmless {
                do { try engine.write { txn in try txn.createTreeIfMissing("probe") } } catch { surfaced = error }
            }
            guard let error = surfaced else {
                #expect(harmless, "no error surfaced for \(hit) — \(context)")
                continue
            }
            injected += 1
            guard let engineError = error as? EngineError else {
                Issue.record("untyped error \(error) — \(context)")
                continue
            }
            let expectedCode: EngineError.Code = fault == .eio ? .io : .noSpace
            // A fault after a commit became durable (in a checkpoint's new WAL generation, past its
            // synced meta page, I11) lets that commit return; the next write reports the store
            // failed, naming the fault.
            let newGeneration = hit.contains("Faulty.docstore-wal") && (hit.hasPrefix("truncate ") || hit.contains(" @0 ") || hit.hasPrefix("sync "))
            let namesFault = engineError.code == .failed && "\(engineError)".contains("\(expectedCode): injected") && newGeneration
            #expect(engineError.code == expectedCode || namesFault, "\(engineError) — \(context)")
            // I8: the store refuses further writes, with a clear code...
            do {
                try engine.write { txn in try txn.createTreeIfMissing("after") }
                Issue.record("a write after a failure was accepted — \(context)")
            } catch let e as EngineError {
                #expect(e.code == .failed, "\(e) — \(context)")
            }
            // ...and still answers reads with a state no newer than what was attempted.
            if let state = try? EngineModel.read(engine) {
                #expect(workload.models[0...r.attempted].contains(state), "in-memory state matches no prefix — \(context)")
            }
            // Reopen after the fault clears: every acknowledged commit is there, nothing partial.
            fs.clearFaults()
            // I11: reopening in place keeps exactly the commits `write` returned for.
            let inPlace = try engine.reopenAfterFailure()
            #expect(try EngineModel.read(inPlace) == workload.models[r.acknowledged], "reopened in place — \(context)")
            #expect(try inPlace.verify().isClean, "reopened in place — \(context)")
            try inPlace.close()
            let image = FaultInjectingFileSystem(files: fs.crashImage(.dropUnsynced))
            let reopened = try Engine.open(at: Self.path, options: Self.options(image, spillBytes: spillBytes))
            let state = try EngineModel.read(reopened)
            let allowed = r.acknowledged...min(r.attempted, workload.models.count - 1)
            #expect(allowed.contains { workload.models[$0] == state }, "reopened state not in \(allowed) — \(context)")
            #expect(try reopened.verify().isClean, "\(context)")
            try reopened.write { txn in try txn.createTreeIfMissing("after") }
            #expect(try reopened.read { try $0.treeExists("after") })
        }
        print("I/O faults (\(fault), persistently \(persistently), spill limit \(spillBytes)): \(injected) surfaced as errors of \(total - start) calls failed")
        #expect(injected >= (total - start) * 9 / 10)
    }
}
