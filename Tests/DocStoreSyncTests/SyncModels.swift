// The model the sync tests use: folders with cascading notes, notes with tags (many-to-many),
// tags unique by name (deterministic global IDs), and a local-only cache entity.

import DocStore
import Foundation

enum SyncModels {
    @Model final class Folder: ManagedObject {
        @Attribute(.unique) var name: String
        @Relationship(deleteRule: .cascade) var notes: Set<Note> = []
        init(name: String) { self.name = name }
    }

    @Model final class Note: ManagedObject {
        var title: String = ""
        var body: String?
        var priority: Int = 0
        @Relationship(inverse: \Folder.notes) var folder: Folder?
        var tags: Set<Tag> = []
        init(title: String, folder: Folder? = nil) {
            self.title = title
            self.folder = folder
        }
    }

    @Model final class Tag: ManagedObject {
        @Attribute(.unique) var name: String
        @Relationship(inverse: \Note.tags) var notes: Set<Note> = []
        init(name: String) { self.name = name }
    }

    @Model final class Cache: ManagedObject {
        var payload: String = ""
        init(payload: String) { self.payload = payload }
    }

    static let all: [ManagedObject.Type] = [Folder.self, Note.self, Tag.self, Cache.self]
}
