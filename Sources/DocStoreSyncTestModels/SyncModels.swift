// The model the sync tests and their kill-test child process (DocStoreSyncKillTarget) use:
// folders with cascading notes, notes with tags (many-to-many), tags unique by name
// (deterministic global IDs), projects that deny their own delete while they have tasks, and a
// local-only cache entity. A library of its own so that both open the same stores with the
// same classes; not a user product.

import DocStore
import Foundation

public enum SyncModels {
    @Model public final class Folder: ManagedObject {
        @Attribute(.unique) public var name: String
        @Relationship(deleteRule: .cascade) public var notes: Set<Note> = []
        public init(name: String) { self.name = name }
    }

    @Model public final class Note: ManagedObject {
        public var title: String = ""
        public var body: String?
        public var priority: Int = 0
        @Relationship(inverse: \Folder.notes) public var folder: Folder?
        public var tags: Set<Tag> = []
        public init(title: String, folder: Folder? = nil) {
            self.title = title
            self.folder = folder
        }
    }

    @Model public final class Tag: ManagedObject {
        @Attribute(.unique) public var name: String
        @Relationship(inverse: \Note.tags) public var notes: Set<Note> = []
        public init(name: String) { self.name = name }
    }

    /// A project cannot be deleted while tasks are in it (deny) — in a local save.
    @Model public final class Project: ManagedObject {
        public var name: String = ""
        @Relationship(deleteRule: .deny) public var tasks: Set<Task> = []
        public init(name: String) { self.name = name }
    }

    @Model public final class Task: ManagedObject {
        public var title: String = ""
        @Relationship(inverse: \Project.tasks) public var project: Project?
        public init(title: String) { self.title = title }
    }

    @Model public final class Cache: ManagedObject {
        public var payload: String = ""
        public init(payload: String) { self.payload = payload }
    }

    public static let all: [ManagedObject.Type] = [Folder.self, Note.self, Tag.self, Project.self, Task.self, Cache.self]
}
