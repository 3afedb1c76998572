// GraphWorkload: the object-graph side of the real-process crash test — a store of folders,
// notes and tags written through a background context, save after save, until the process is
// killed. Save N inserts note N (seq = N) into folder "f(N mod 3)", tags it with "t(N mod 4)" and
// "t((N+1) mod 4)", and from N = 10 on also deletes note N-10's tags and moves it to the next
// folder, so every save changes both sides of several relationships. "ack N" is printed
// (unbuffered) only after save N returned.
//
// The parent reads the schema from the file (Store.schema(at:)): nothing here is shared with it
// but the rules above.

import DocStoreCore
import DocStoreEngine
import Foundation

enum GraphWorkload {
    static let schema = Schema(entities: [
        EntityDescription(name: "Folder", attributes: [AttributeDescription(name: "name", type: .string, isUnique: true)],
                          relationships: [RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", isToMany: true, isOrdered: true, deleteRule: .cascade)]),
        EntityDescription(name: "Note", attributes: [
            AttributeDescription(name: "seq", type: .int64, isIndexed: true),
            AttributeDescription(name: "body", type: .string),
        ], relationships: [
            RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes"),
            RelationshipDescription(name: "tags", destination: "Tag", inverse: "notes", isToMany: true),
        ]),
        EntityDescription(name: "Tag", attributes: [AttributeDescription(name: "name", type: .string, isUnique: true)],
                          relationships: [RelationshipDescription(name: "notes", destination: "Note", inverse: "tags", isToMany: true)]),
    ])

    static func run(_ path: String) throws {
        let store = try Store(url: URL(fileURLWithPath: path), schema: schema)
        let done = DispatchSemaphore(value: 0)
        let failure = Locked<String?>(nil)
        Task {
            do { try await saveForever(store) } catch { failure.withLock { $0 = "\(error)" } }
            done.signal()
        }
        done.wait()
        if let message = failure.withLock({ $0 }) { throw WorkloadError(message: message) }
    }

    struct WorkloadError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    static func saveForever(_ store: Store) async throws {
        let context = BackgroundContext(store: store, name: "writer")
        var next = try await context.perform { c in
            if try c.count(for: FetchRequest<ManagedObject>(entityName: "Folder")) == 0 {
                for i in 0..<3 { try c.insertObject(forEntityName: "Folder").setValue("f\(i)", forKey: "name") }
                for i in 0..<4 { try c.insertObject(forEntityName: "Tag").setValue("t\(i)", forKey: "name") }
                try c.save()
            }
            return try c.count(for: FetchRequest<ManagedObject>(entityName: "Note"))
        }
        while true {
            let n = next
            try await context.perform { c in
                func one(_ entity: String, _ format: String, _ argument: Any) throws -> ManagedObject? {
                    try c.fetch(FetchRequest<ManagedObject>(entityName: entity, predicate: QueryPredicate(format: format, argumentArray: [argument]), fetchLimit: 1)).first
                }
                let note = try c.insertObject(forEntityName: "Note")
                try note.setValue(Int64(n), forKey: "seq")
                try note.setValue(String(repeating: "note \(n) ", count: n % 9 == 0 ? 400 : 3), forKey: "body")
                try note.setValue(try one("Folder", "name == %@", "f\(n % 3)"), forKey: "folder")
                let tags = try [n % 4, (n + 1) % 4].compactMap { try one("Tag", "name == %@", "t\($0)") }
                try note.setValue(tags, forKey: "tags")
                if n >= 10, let old = try one("Note", "seq == %@", Int64(n - 10)) {
                    try old.setValue([ManagedObject](), forKey: "tags")
                    try old.setValue(try one("Folder", "name == %@", "f\((n - 9) % 3)"), forKey: "folder")
                }
                try c.save()
            }
            FileHandle.standardOutput.write(Data("ack \(n)\n".utf8))
            next += 1
        }
    }
}
