// The model the sync tests and their kill-test child process (DocStoreSyncKillTarget) use:
// folders with cascading notes, notes with tags (many-to-many), tags unique by name
// (deterministic global IDs), projects that deny their own delete while they have tasks, and a
// local-only cache entity. A library of its own so that both open the same stores with the
// same classes; not a user product. Checklists keep their items in order (an ordered to-many whose
// items' to-one syncs membership); playlists hold clips in order, many-to-many (the clips' side
// syncs the links — "Clip.playlists" sorts first — and the playlist's side its order).

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

    /// Items in the order the user gives them; deleting the checklist deletes its items.
    @Model public final class Checklist: ManagedObject {
        public var name: String = ""
        @Relationship(deleteRule: .cascade) public var items: [Item] = []
        public init(name: String) { self.name = name }
    }

    /// One title per checklist (a compound uniqueness constraint): two devices adding "milk" to
    /// one list offline make one item.
    @Model public final class Item: ManagedObject {
        #Unique<Item>([\.checklist, \.title])
        public var title: String = ""
        public var done: Bool = false
        @Relationship(inverse: \Checklist.items) public var checklist: Checklist?
        public init(title: String) { self.title = title }
    }

    /// Clips in an order of their own; a clip can be in several playlists.
    @Model public final class Playlist: ManagedObject {
        public var name: String = ""
        @Relationship(inverse: \Clip.playlists) public var clips: [Clip] = []
        public init(name: String) { self.name = name }
    }

    @Model public final class Clip: ManagedObject {
        public var title: String = ""
        public var playlists: Set<Playlist> = []
        public init(title: String) { self.title = title }
    }

    @Model public final class Cache: ManagedObject {
        public var payload: String = ""
        public init(payload: String) { self.payload = payload }
    }

    public static let all: [ManagedObject.Type] = [Folder.self, Note.self, Tag.self, Project.self, Task.self, Checklist.self, Item.self, Playlist.self, Clip.self, Cache.self]
}
