// Contexts in Swift concurrency: background contexts (actors) inserting at the same time, each
// saving its own objects into the one store; the main-actor context seeing what they saved; and
// only Sendable values (object IDs) crossing between them. Handing a ManagedObject or a Context
// across isolation domains does not compile (Context and ManagedObject are not Sendable).

import DocStore
import Foundation
import Testing

@Suite struct ConcurrencyTests {
    @Test func backgroundContextsSaveConcurrentlyAndTheMainContextSeesTheirObjects() async throws {
        let store = try Store.inMemory(models: ModelClassTests.models)
        let workers = (0..<4).map { BackgroundContext(store: store, name: "worker \($0)") }
        let ids = try await withThrowingTaskGroup(of: [ObjectID].self) { group in
            for (w, worker) in workers.enumerated() {
                group.addTask {
                    try await worker.perform { context in
                        var ids: [ObjectID] = []
                        for i in 0..<50 {
                            let note = Note(title: "w\(w) n\(i)")
                            try context.insert(note)
                            if let id = note.objectID { ids.append(id) }
                        }
                        try context.save()
                        return ids
                    }
                }
            }
            var all: [ObjectID] = []
            for try await batch in group { all += batch }
            return all
        }
        #expect(Set(ids).count == 200)                  // keys never collide across contexts
        let titles = try await MainActor.run {
            let context = store.mainContext
            #expect(context === store.mainContext)       // one main context per store
            return try ids.map { try (context.existingObject(with: $0) as? Note)?.title ?? "" }
        }
        #expect(Set(titles).count == 200)
        #expect(titles.allSatisfy { $0.hasPrefix("w") })
    }
}
