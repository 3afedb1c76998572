// The README's sync example (§ Sync between devices), run as written against a real server. If
// this test has to change, the README changes with it.

import DocStore
import DocStoreSync
import DocStoreTestSupport
import Foundation
import Testing

@Suite struct SyncReadmeExampleTests {
    @Test func theReadmeSyncExampleRunsAsWritten() async throws {
        let process = try ServerProcess(postgres: try TestPostgres.newDatabase())
        let dir = TemporaryDirectory("readme-sync")
        defer { withExtendedLifetime(dir) {} }
        let phoneURL = URL(fileURLWithPath: dir.file("phone.docstore"))
        let laptopURL = URL(fileURLWithPath: dir.file("laptop.docstore"))

        // --- README ---
        let server = process.url      // URL(string: "http://127.0.0.1:8080")! in the README
        let phone = try Store(url: phoneURL, models: [Folder.self, Note.self, Tag.self])
        let laptop = try Store(url: laptopURL, models: [Folder.self, Note.self, Tag.self])
        let phoneSync = try SyncEngine(store: phone, server: server, device: "phone")
        let laptopSync = try SyncEngine(store: laptop, server: server, device: "laptop")

        let context = Context(store: phone)
        try context.insert(Note(title: "Buy milk", folder: Folder(name: "Inbox")))
        try context.save()
        try await phoneSync.syncNow()            // pushes the save
        try await laptopSync.syncNow()           // pulls it: the laptop has the note, in its folder

        let laptopContext = Context(store: laptop)     // keep the context while you use its objects
        let onLaptop = try laptopContext.fetch(Note.self)
        print(onLaptop.first?.folder?.name ?? "")            // Inbox
        // --- end ---
        #expect(onLaptop.map(\.title) == ["Buy milk"])
        #expect(onLaptop.first?.folder?.name == "Inbox")

        // The background loop and its events: a save on the laptop reaches the phone without a
        // call to syncNow.
        await laptopSync.start()
        try laptopContext.insert(Note(title: "Call mum"))
        try laptopContext.save()
        var sawExport = false
        let deadline = Date().addingTimeInterval(60)
        for await event in laptopSync.events {
            if Date() > deadline { break }
            if event.kind == .export, case .finished(let n) = event.phase, n == 1, event.pendingCount == 0 {
                sawExport = true
                break
            }
        }
        await laptopSync.stop()
        #expect(sawExport)
        try await phoneSync.syncNow()
        #expect(Set(try Context(store: phone).fetch(Note.self).map(\.title)) == ["Buy milk", "Call mum"])
    }
}
