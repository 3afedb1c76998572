// History survives crashes exactly as the data does (issue #5, Format/history.md rule 2): a
// fixed-seed workload of saves — inserts, edits, relationships, cascade deletes — runs on the
// fault-injecting file system, crashing at every mutating call in turn; each crash is recovered
// from three power-loss images (synced data only, everything, random apply/drop/tear), and the
// recovered store must hold exactly the state after the acknowledged saves (or one more), with
// exactly one history transaction per save in it, each listing that save's changes, and pass
// its integrity check. Failures print the seed, crash point and image mode.

import DocStoreTestSupport
import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore
@testable import DocStoreEngine

@Suite struct HistoryCrashTests {
    static let path = "/db/History.docstore"

    static func open(_ fs: any FileSystem) throws(DocStoreError) -> Store {
        var o = EngineOptions()
        o.fileSystem = fs
        o.durability = .full
        o.checkpointWALBytes = 8_000
        o.walPreallocationBytes = 4096
        return try Store(path: path, url: nil, schema: Schema(models: ModelClassTests.models), classes: [
            "Folder": Folder.self, "Note": Note.self, "Tag": Tag.self, "Item": Item.self, "Photo": Photo.self, "Journal": Journal.self,
        ], options: o)
    }

    /// What a store holds: every note (number, title, folder) and every history transaction's
    /// changes, in order.
    struct Snapshot: Equatable {
        var notes: [String]
        var history: [[String]]
    }

    static func snapshot(_ store: Store) throws -> Snapshot {
        let c = Context(store: store)
        let notes = try c.fetch(Note.self).map { "\($0.objectID?.number ?? 0) \($0.title) \($0.folder?.name ?? "-")" }.sorted()
        let history = try store.history().map { t in t.changes.map(\.description) }
        return Snapshot(notes: notes, history: history)
    }

    /// Runs `saves` saves of the seed's workload; returns how many were acknowledged and the
    /// snapshot after each acknowledged one (index 0: before any).
    static func run(_ store: Store, seed: UInt64, saves: Int, record: Bool) -> (acknowledged: Int, snapshots: [Snapshot]) {
        var rng = SplitMix64(seed: seed)
        let c = Context(store: store, name: "crash")
        var snapshots: [Snapshot] = []
        if record, let s = try? snapshot(store) { snapshots.append(s) }
        for i in 0..<saves {
            do {
                let notes = try c.fetch(Note.self)
                let folders = try c.fetch(Folder.self)
                switch rng.next() % 4 {
                case 0:
                    let folder = Folder(name: "f\(i)")
                    for k in 0..<Int(1 + rng.next() % 4) { _ = Note(title: "n\(i).\(k) " + String(repeating: "x", count: Int(rng.next() % 180)), folder: folder) }
                    try c.insert(folder)
                case 1 where !notes.isEmpty:
                    notes[Int(rng.next() % UInt64(notes.count))].title = "edited \(i)"
                case 2 where !folders.isEmpty:
                    try c.delete(folders[Int(rng.next() % UInt64(folders.count))])    // cascades to its notes
                default:
                    try c.insert(Note(title: "loose \(i)", folder: folders.first))
                }
                try c.save()
            } catch {
                return (i, snapshots)
            }
            if record, let s = try? snapshot(store) { snapshots.append(s) }
        }
        return (saves, snapshots)
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func historyIsRecoveredExactlyWithTheData(_ seed: UInt64) throws {
        let saves = 30
        let clean = FaultInjectingFileSystem()
        let store = try Self.open(clean)
        let expected = Self.run(store, seed: seed, saves: saves, record: true)
        #expect(expected.acknowledged == saves && expected.snapshots.count == saves + 1)
        #expect(expected.snapshots.last?.history.count == saves)
        let calls = clean.callCount
        try store.close()

        var images = 0
        for point in 1...calls {
            let fs = FaultInjectingFileSystem()
            fs.crash(at: point)
            var acknowledged = -1    // the store was not even created
            if let s = try? Self.open(fs) { acknowledged = Self.run(s, seed: seed, saves: saves, record: false).acknowledged }
            for mode in [CrashMode.dropUnsynced, .applyAll, .random(seed: seed &* 131 &+ UInt64(point))] {
                images += 1
                let where_ = "seed \(seed), crash point \(point)/\(calls), \(mode), acknowledged \(acknowledged)"
                let image = FaultInjectingFileSystem(files: fs.crashImage(mode))
                let recovered: Store
                do { recovered = try Self.open(image) } catch {
                    Issue.record("recovery failed: \(error) — \(where_)")
                    continue
                }
                let state = try Self.snapshot(recovered)
                let low = max(acknowledged, 0), high = min(acknowledged + 1, saves)
                if !(low...high).contains(where: { expected.snapshots[$0] == state }) {
                    Issue.record("recovered \(state.notes.count) notes and \(state.history.count) history transactions, not the state after \(low)…\(high) saves — \(where_)")
                }
                #expect(try recovered.verify().isEmpty, "integrity — \(where_)")
            }
        }
        print("history crash campaign, seed \(seed): \(calls) crash points, \(images) images")
        #expect(images == calls * 3)
    }
}
