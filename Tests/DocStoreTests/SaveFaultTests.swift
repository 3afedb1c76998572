// Faults under object-level saves (issue #8), on a fixed-seed workload of saves through one
// context over the graph fuzz target's schema: inserts with relationships on both sides,
// attachments whose bytes go to blob files, edits, cascading deletes (which free blobs), and
// the history each save records. Checkpoints run every few saves.
//
//   SF1 Every crash point: the workload crashes at each mutating file-system call in turn; each
//       crash is recovered from three power-loss images (synced data only, everything, random
//       apply/drop/tear with reordering and lost directory entries). The recovered store holds
//       exactly the state after the acknowledged saves, or one more, and passes the full check
//       (no dangling link, every blob referenced exactly once, no orphan blob file).
//   SF2 I/O errors: EIO or ENOSPC at each call, once or from then on. The save throws a typed
//       `.storage` error naming the cause (a fault in a checkpoint after the commit was durable
//       lets that save stand, and the next one is refused naming it); the context keeps its changes; the open store shows
//       the state before the save or after it, never part; it refuses further saves; after the
//       fault clears, `Store.reopen()` recovers exactly the acknowledged saves (and so does a
//       power-loss image), and saving the same context again succeeds — the workload then runs
//       to the same final state as a run without faults, which a power cut then keeps.
// Failures print the fault, the call, and the save it hit.

import DocStoreQueryTestSupport
import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStoreCore
@testable import DocStoreEngine

@Suite struct SaveFaultTests {
    static let path = "/db/Saves.docstore"
    static let saves = 20

    static func open(_ fs: any FileSystem) throws(DocStoreError) -> Store {
        var o = EngineOptions()
        o.fileSystem = fs
        o.durability = .full
        o.blobThreshold = 512
        o.checkpointWALBytes = 3_000
        o.walPreallocationBytes = 4096
        return try Store(path: path, url: nil, schema: FuzzTargets.graphSchema, classes: [:], options: o)
    }

    /// Everything a store holds, as text: each object with its attributes and relationships
    /// (unordered ones sorted, blobs by size and first byte), and the number of history
    /// transactions.
    static func describe(_ store: Store) throws -> [String] {
        let c = Context(store: store)
        var out: [String] = []
        for entity in store.schema.entities {
            for o in try c.fetch(entityName: entity.name) {
                var line = "\(entity.name)/\(o.objectID?.number ?? 0)"
                for a in entity.attributes {
                    let v = try o.value(forKey: a.name)
                    line += " \(a.name)=" + ((v as? Data).map { "\($0.count)b\($0.reduce(UInt32(2166136261)) { ($0 ^ UInt32($1)) &* 16777619 })" } ?? "\(v ?? "nil")")
                }
                for r in entity.relationships {
                    let v = try o.value(forKey: r.name)
                    let ids: [UInt64]
                    if let list = v as? [ManagedObject] { ids = list.compactMap { $0.objectID?.number } }
                    else if let set = v as? Set<ManagedObject> { ids = set.compactMap { $0.objectID?.number }.sorted() }
                    else { ids = (v as? ManagedObject)?.objectID.map { [$0.number] } ?? [] }
                    line += " \(r.name)=\(ids)"
                }
                out.append(line)
            }
        }
        out.append("history \(try store.history().count)")
        return out
    }

    /// Makes save `i`'s changes in `c` (the same ones for the same stored state).
    static func change(_ c: Context, step i: Int, _ rng: inout SplitMix64) throws {
        let folders = try c.fetch(entityName: "Folder"), notes = try c.fetch(entityName: "Note")
        let tags = try c.fetch(entityName: "Tag")
        func any(_ list: [ManagedObject]) -> ManagedObject? { list.isEmpty ? nil : list[Int(rng.next() % UInt64(list.count))] }
        func bytes(_ count: Int) -> Data { Data((0..<count).map { _ in UInt8(truncatingIfNeeded: rng.next()) }) }   // incompressible
        let roll = notes.count < 4 ? 0 : rng.next() % 5     // grow first, then mix
        switch roll {
        case 0, 1:
            let folder = try c.insertObject(forEntityName: "Folder")
            try folder.setValue("f\(i)", forKey: "name")
            let tag = try any(tags) ?? { let t = try c.insertObject(forEntityName: "Tag"); try t.setValue("t\(i)", forKey: "name"); return t }()
            var members: [ManagedObject] = []
            for k in 0..<Int(1 + rng.next() % 3) {
                let note = try c.insertObject(forEntityName: "Note")
                try note.setValue("n\(i).\(k)", forKey: "title")
                try note.setValue(Set([tag]), forKey: "tags")
                members.append(note)
                let file = try c.insertObject(forEntityName: "Attachment")
                try file.setValue("a\(i).\(k)", forKey: "name")
                try file.setValue(bytes(k == 0 ? 900 + i : 40), forKey: "bytes")   // a blob, and an inline value
                try file.setValue(note, forKey: "note")
            }
            try folder.setValue(members, forKey: "notes")
        case 2:
            guard let note = any(notes) else { return }
            try note.setValue("edited \(i)", forKey: "title")
            let files = try note.value(forKey: "files") as? Set<ManagedObject> ?? []
            if let file = files.min(by: { ($0.objectID?.number ?? 0) < ($1.objectID?.number ?? 0) }) {
                try file.setValue(bytes(1200), forKey: "bytes")   // the old blob is freed
            }
        case 3:
            guard let folder = any(folders) else { return }
            try c.delete(folder)     // cascades to its notes and their attachments (blobs freed)
        default:
            guard let note = any(notes) else { return }
            try c.delete(note)
        }
    }

    /// The workload on one store through one context: `go` runs the saves until one throws and
    /// can be called again after it did — the context still has the failed save's changes, so
    /// the same save is retried and the rest follow.
    struct Workload {
        var rng = SplitMix64(seed: 808)
        var acknowledged = 0
        let context: Context

        init(_ store: Store) { context = Context(store: store, name: "faults") }

        mutating func go(record: ((Int) throws -> Void)? = nil) -> (any Error)? {
            while acknowledged < SaveFaultTests.saves {
                do {
                    if !context.hasChanges { try SaveFaultTests.change(context, step: acknowledged, &rng) }
                    try context.save()
                    acknowledged += 1
                    try record?(acknowledged)
                } catch {
                    return error
                }
            }
            return nil
        }
    }

    /// The state after each number of saves of a run without faults, and its call count.
    static func clean() throws -> (states: [[String]], calls: Int, setup: Int) {
        let fs = FaultInjectingFileSystem()
        let store = try open(fs)
        let setup = fs.callCount
        var states = [try describe(store)]
        var workload = Workload(store)
        if let error = workload.go(record: { _ in states.append(try describe(store)) }) { throw error }
        // describe reads only, so the calls counted are the saves'.
        return (states, fs.callCount, setup)
    }

    @Test func aCrashAtAnyCallOfASaveWithBlobsLosesNoAcknowledgedSave() throws {
        let (states, calls, _) = try Self.clean()
        #expect(states.count == Self.saves + 1)
        var images = 0, blobsSeen = false
        for point in 1...calls {
            let fs = FaultInjectingFileSystem()
            fs.crash(at: point)
            var acknowledged = -1    // the store was not even created
            if let store = try? Self.open(fs) {
                var workload = Workload(store)
                _ = workload.go()
                acknowledged = workload.acknowledged
            }
            for mode in [CrashMode.dropUnsynced, .applyAll, .random(seed: 808 &* 131 &+ UInt64(point))] {
                images += 1
                let where_ = "crash point \(point)/\(calls), \(mode), acknowledged \(acknowledged); last calls \(fs.recentCalls(3))"
                let files = fs.crashImage(mode)
                blobsSeen = blobsSeen || files.keys.contains { $0.hasSuffix(".blob") }
                let recovered: Store
                do { recovered = try Self.open(FaultInjectingFileSystem(files: files)) } catch {
                    Issue.record("recovery failed: \(error) — \(where_)")
                    continue
                }
                let state = try Self.describe(recovered)
                let low = max(acknowledged, 0), high = min(acknowledged + 1, Self.saves)
                if !(low...high).contains(where: { states[$0] == state }) {
                    Issue.record("the recovered store is not the state after \(low)…\(high) saves — \(where_)")
                }
                let problems = try recovered.verify()
                #expect(problems.isEmpty, "\(problems.prefix(3)) — \(where_)")
            }
        }
        print("save crash campaign (blobs, cascades, history): \(calls) crash points, \(images) images")
        #expect(images == calls * 3 && blobsSeen)
    }

    @Test(arguments: [InjectedFault.eio, .enospc], [false, true])
    func anIOErrorInASaveKeepsTheChangesAndARetryAfterReopeningSucceeds(fault: InjectedFault, persistently: Bool) throws {
        let (states, calls, setup) = try Self.clean()
        var surfaced = 0
        for call in (setup + 1)...calls {
            let fs = FaultInjectingFileSystem()
            let store = try Self.open(fs)
            fs.fail(at: call, with: fault, persistently: persistently)
            var workload = Workload(store)
            let error = workload.go()
            let c = workload.context, done = workload.acknowledged
            let where_ = "\(fault) at call \(call)/\(calls) persistently \(persistently), save \(done + 1)"
            guard let error else {
                // Removing a blob file nothing references may fail harmlessly (the sweep at the
                // next open removes it); any other failed call must surface.
                let hit = fs.injectedCall ?? "nothing"
                #expect(hit.hasPrefix("remove ") && hit.hasSuffix(".blob"), "no error surfaced for \(hit) — \(where_)")
                continue
            }
            surfaced += 1
            // A typed error naming the cause — or, when the fault hit a checkpoint after the save
            // it followed was durable (that save stood, I11), the next save's refusal naming it.
            let expected: EngineError.Code = fault == .eio ? .io : .noSpace
            guard let storageError = error as? DocStoreError, storageError.code == .storage,
                  let cause = storageError.underlying,
                  cause.code == expected || (cause.code == .failed && cause.message.contains("injected")) else {
                Issue.record("the save threw \(error), not .storage caused by \(expected) — \(where_)")
                continue
            }
            // The context keeps its changes; the open store shows the save whole or not at all.
            let before = states[done], after = states[done + 1]
            #expect(c.hasChanges, "the failed save's changes are gone — \(where_)")
            let seen = try Self.describe(store)
            #expect(seen == before || seen == after, "the open store shows part of the failed save — \(where_)")
            // It refuses writes until reopened.
            let again = #expect(throws: DocStoreError.self, "a save after the failure was accepted — \(where_)") { try c.save() }
            #expect(again?.underlying?.code == .failed, "\(String(describing: again)) — \(where_)")
            #expect(c.hasChanges)
            // A power cut now keeps every acknowledged save (and at most the failed one).
            let image = try Self.open(FaultInjectingFileSystem(files: fs.crashImage(.dropUnsynced)))
            let imaged = try Self.describe(image)
            #expect(imaged == before || imaged == after, "a power-loss image lost an acknowledged save — \(where_)")
            // The fault clears: reopening gives exactly the acknowledged saves; the same context
            // saves again, and the rest of the workload reaches the fault-free final state.
            fs.clearFaults()
            try store.reopen()
            #expect(try Self.describe(store) == before, "reopened, the store is not the acknowledged state — \(where_)")
            if let retry = workload.go() {
                Issue.record("after reopening, save \(workload.acknowledged + 1) threw \(retry) — \(where_)")
                continue
            }
            #expect(try Self.describe(store) == states[Self.saves], "the final state differs from a run without faults — \(where_)")
            let problems = try store.verify()
            #expect(problems.isEmpty, "\(problems.prefix(3)) — \(where_)")
            // And a power cut after all that keeps it: the reopening left nothing unsynced behind.
            let last = try Self.open(FaultInjectingFileSystem(files: fs.crashImage(.dropUnsynced)))
            #expect(try Self.describe(last) == states[Self.saves], "a power cut after the retry lost saves — \(where_)")
        }
        print("save I/O faults (\(fault), persistently \(persistently)): \(surfaced) surfaced of \(calls - setup) calls failed")
        #expect(surfaced >= (calls - setup) * 9 / 10)
    }

    /// `reopen()` on a store that has not failed (its close checkpoints first) keeps every save,
    /// and so does a power cut afterwards.
    @Test func reopeningAStoreThatHasNotFailedKeepsEverySave() throws {
        let (states, _, _) = try Self.clean()
        let fs = FaultInjectingFileSystem()
        let store = try Self.open(fs)
        var workload = Workload(store)
        #expect(workload.go() == nil)
        try store.reopen()
        #expect(try Self.describe(store) == states[Self.saves])
        try store.reopen()
        #expect(try Self.describe(store) == states[Self.saves])
        #expect(try store.verify().isEmpty)
        let image = try Self.open(FaultInjectingFileSystem(files: fs.crashImage(.dropUnsynced)))
        #expect(try Self.describe(image) == states[Self.saves])
    }
}
