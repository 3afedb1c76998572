// DocStoreSyncKillTarget: the device process the sync kill tests SIGKILL (not a user tool).
//
//   DocStoreSyncKillTarget STORE SERVER DEVICE SEED
//
// Opens STORE (SyncModels) with a SyncEngine for DEVICE against SERVER, then forever: one
// random edit, saved, and a sync round. It prints, unbuffered, one line per fact:
//   saved TITLE      a note inserted with this title; its save has returned (acknowledged)
//   round            a sync round starts (printed before it, from the loop itself)
//   export|import    a sync step started (from the engine's events, a little late under load)
//   synced           a round returned
//   error TEXT       a round or a save failed
// Edits never delete, so the parent can require every acknowledged title on every replica,
// exactly once, after it heals them. SEED makes the edits (not the kill time) repeatable.

import DocStore
import DocStoreSync
import DocStoreSyncTestModels
import DocStoreTestSupport
import Foundation

func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let arguments = CommandLine.arguments
guard arguments.count == 5, let server = URL(string: arguments[2]), let seed = UInt64(arguments[4]) else {
    say("error usage: DocStoreSyncKillTarget STORE SERVER DEVICE SEED")
    exit(2)
}
let device = arguments[3]
let tagNames = ["red", "green", "blue"]

do {
    let store = try Store(url: URL(fileURLWithPath: arguments[1]), models: SyncModels.all)
    let sync = try SyncEngine(store: store, server: server, device: device, localOnlyEntities: ["Cache"])
    let events = sync.events
    Task.detached {      // off the main actor, so the loop below does not hold the lines back
        for await event in events where event.isStart { say(event.kind.rawValue) }
    }
    let context = Context(store: store)
    var rng = SplitMix64(seed: seed)
    var step = 0
    while true {
        step += 1
        let notes = try context.fetch(SyncModels.Note.self)
        var inserted: String?
        switch rng.next() % 10 {
        case 0..<5:
            let title = "\(device)-\(seed)-\(step)"
            let note = SyncModels.Note(title: title)
            try context.insert(note)
            if rng.next() % 2 == 0 {
                let name = tagNames[Int(rng.next() % UInt64(tagNames.count))]
                let tag = try context.fetch(SyncModels.Tag.self).first { $0.name == name } ?? SyncModels.Tag(name: name)
                note.tags.insert(tag)
            }
            inserted = title
        case 5..<8:
            if !notes.isEmpty { notes[Int(rng.next() % UInt64(notes.count))].body = "b\(seed)-\(step)" }
        default:
            if !notes.isEmpty, let tag = try context.fetch(SyncModels.Tag.self).first {
                let note = notes[Int(rng.next() % UInt64(notes.count))]
                if note.tags.contains(tag) { note.tags.remove(tag) } else { note.tags.insert(tag) }
            }
        }
        do {
            try context.save()
            if let inserted { say("saved \(inserted)") }
        } catch {
            say("error save: \(error)")
            context.rollback()
        }
        do {
            say("round")
            try await sync.syncNow()
            say("synced")
        } catch {
            say("error sync: \(error)")
        }
    }
} catch {
    say("error \(error)")
    exit(1)
}

extension SyncEvent {
    var isStart: Bool { if case .started = phase { true } else { false } }
}
