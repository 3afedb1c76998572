// GraphModel: the plain model of the object graph that the graph-operations fuzz target
// (GraphOperationsFuzzTarget.swift) checks a context against: plain dictionaries and sets, with
// the delete rules written out by hand.
//
//   GM1 both sides of every relationship are kept together: every mutation updates the inverse.
//   GM2 deleting a note cascades to its attachments and nullifies its folder, tags and project;
//       deleting a folder cascades to its notes.
//   GM3 `denied` holds the projects deleted in the context (deny rule) with the notes that still
//       reach them; the notes keep pointing at them until they are deleted themselves.

import DocStoreCore

struct GraphModel: Equatable {
    struct Folder: Equatable { var name: String; var notes: [ObjectID] }
    struct Note: Equatable {
        var title: String
        var folder: ObjectID? = nil
        var tags: Set<ObjectID> = []
        var project: ObjectID? = nil
        var files: Set<ObjectID> = []
    }
    struct Tag: Equatable { var name: String; var notes: Set<ObjectID> = [] }
    struct Project: Equatable { var name: String; var notes: Set<ObjectID> = [] }
    struct Attachment: Equatable { var name: String; var size: Int; var fill: UInt8; var note: ObjectID }

    var folders: [ObjectID: Folder] = [:]
    var notes: [ObjectID: Note] = [:]
    var tags: [ObjectID: Tag] = [:]
    var projects: [ObjectID: Project] = [:]
    var attachments: [ObjectID: Attachment] = [:]
    /// GM3.
    var denied: [ObjectID: Set<ObjectID>] = [:]

    /// Why a save must be refused now, or nil if it must succeed.
    var saveRefusal: String? {
        var names: Set<String> = []
        for folder in folders.values.sorted(by: { $0.name < $1.name }) where !names.insert(folder.name).inserted {
            return "two folders named \(folder.name)"
        }
        if let (project, notes) = denied.first(where: { !$0.value.isEmpty }) {
            return "deleted project \(project.number) still reaches \(notes.count) note(s)"
        }
        return nil
    }

    func ids(of entity: String) -> Set<ObjectID> {
        switch entity {
        case "Folder": Set(folders.keys)
        case "Note": Set(notes.keys)
        case "Tag": Set(tags.keys)
        case "Project": Set(projects.keys)
        default: Set(attachments.keys)
        }
    }

    mutating func setFolder(_ note: ObjectID, _ folder: ObjectID?) {
        let old = notes[note]?.folder
        if old == folder { return }
        if let old { folders[old]?.notes.removeAll { $0 == note } }
        notes[note]?.folder = folder
        if let folder { folders[folder]?.notes.append(note) }
    }

    mutating func setProject(_ note: ObjectID, _ project: ObjectID?) {
        let old = notes[note]?.project
        if old == project { return }
        if let old { projects[old]?.notes.remove(note); denied[old]?.remove(note) }
        notes[note]?.project = project
        if let project { projects[project]?.notes.insert(note) }
    }

    /// GM2.
    mutating func deleteNote(_ note: ObjectID) {
        guard let n = notes[note] else { return }
        setFolder(note, nil)
        setProject(note, nil)
        for tag in n.tags { tags[tag]?.notes.remove(note) }
        for file in n.files { attachments.removeValue(forKey: file) }
        notes.removeValue(forKey: note)
    }

    mutating func deleteFolder(_ folder: ObjectID) {
        for note in folders[folder]?.notes ?? [] { deleteNote(note) }
        folders.removeValue(forKey: folder)
    }

    mutating func deleteAttachment(_ attachment: ObjectID) {
        guard let a = attachments.removeValue(forKey: attachment) else { return }
        notes[a.note]?.files.remove(attachment)
    }

    /// The first difference between this model and `seen`, for a finding.
    func difference(from seen: GraphModel) -> String {
        func first<V: Equatable>(_ kind: String, _ a: [ObjectID: V], _ b: [ObjectID: V]) -> String? {
            for (id, value) in a.sorted(by: { $0.key.primaryKey < $1.key.primaryKey }) where b[id] != value {
                return "\(kind) \(id.number) as \(b[id].map { "\($0)" } ?? "missing"), the model has \(value)"
            }
            return nil
        }
        return first("folder", folders, seen.folders) ?? first("note", notes, seen.notes) ?? first("tag", tags, seen.tags)
            ?? first("project", projects, seen.projects) ?? first("attachment", attachments, seen.attachments) ?? "a difference"
    }
}
