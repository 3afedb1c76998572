// The @Model macro's expansion, pinned: the accessors each persisted property gets, the members
// the class gets, what is left alone (computed, static, @Transient properties), and the error
// for a declaration that is not a class.

import DocStoreMacros
import SwiftSyntaxMacroExpansion
import SwiftSyntaxMacrosGenericTestSupport
import Testing

private let macros: [String: MacroSpec] = [
    "Model": MacroSpec(type: ModelMacro.self),
    "_PersistedProperty": MacroSpec(type: PersistedPropertyMacro.self),
    "Attribute": MacroSpec(type: MarkerMacro.self),
    "Relationship": MacroSpec(type: MarkerMacro.self),
    "Transient": MacroSpec(type: MarkerMacro.self),
]

private func expand(_ source: String, _ expected: String, diagnostics: [DiagnosticSpec] = [], sourceLocation: SourceLocation = #_sourceLocation) {
    assertMacroExpansion(source, expandedSource: expected, diagnostics: diagnostics, macroSpecs: macros) { failure in
        Issue.record(Comment(rawValue: failure.message), sourceLocation: sourceLocation)
    }
}

@Suite struct ModelMacroTests {
    @Test func persistedPropertiesGetAccessorsAndTheClassItsMembers() {
        expand(
            """
            @Model final class Note: ManagedObject {
                @Attribute(.indexed) var title: String = ""
                @Relationship(inverse: \\Folder.notes) var folder: Folder?
                var tags: Set<Tag>
                @Transient var scratch = 0
                var computed: Int { 1 }
                static var shared = 0
                init(tags: Set<Tag>) { self.tags = tags }
            }
            """,
            """
            final class Note: ManagedObject {
                var title: String {
                    @storageRestrictions(accesses: _$pendingNote)
                    init(initialValue) {
                        DocStore._$record(&_$pendingNote, 0, initialValue)
                    }
                    get {
                        DocStore._$read(self, Note._$slotBaseNote &+ 0, Note._$keyPathNote_title, default: "")
                    }
                    set {
                        DocStore._$write(self, Note._$slotBaseNote &+ 0, Note._$keyPathNote_title, newValue)
                    }
                }
                var folder: Folder? {
                    @storageRestrictions(accesses: _$pendingNote)
                    init(initialValue) {
                        DocStore._$record(&_$pendingNote, 1, initialValue)
                    }
                    get {
                        DocStore._$read(self, Note._$slotBaseNote &+ 1, Note._$keyPathNote_folder, default: nil)
                    }
                    set {
                        DocStore._$write(self, Note._$slotBaseNote &+ 1, Note._$keyPathNote_folder, newValue)
                    }
                }
                var tags: Set<Tag> {
                    @storageRestrictions(accesses: _$pendingNote)
                    init(initialValue) {
                        DocStore._$record(&_$pendingNote, 2, initialValue)
                    }
                    get {
                        DocStore._$read(self, Note._$slotBaseNote &+ 2, Note._$keyPathNote_tags, default: [])
                    }
                    set {
                        DocStore._$write(self, Note._$slotBaseNote &+ 2, Note._$keyPathNote_tags, newValue)
                    }
                }
                var scratch = 0
                var computed: Int { 1 }
                static var shared = 0
                init(tags: Set<Tag>) { self.tags = tags }

                override public class var _$entityDescription: DocStore.EntityDescription? {
                    DocStore._$entity("Note", parent: nil, isAbstract: false, [
                        DocStore._$property({ (o: Note) in
                                        o.title
                                    }, "title", defaultValue: .string(""), attribute: [.indexed]),
                                DocStore._$property({ (o: Note) in
                                        o.folder
                                    }, "folder", relationship: DocStore._$RelationshipOptions(inverseName: "notes")),
                                DocStore._$property({ (o: Note) in
                                        o.tags
                                    }, "tags")
                    ])
                }

                override public class var _$declaredPropertyNames: [String]? {
                    ["title", "folder", "tags"]
                }

                public static func _$keyPathsNote<R: Note>(_ root: R.Type) -> [AnyKeyPath: String] {
                    var names: [AnyKeyPath: String] = DocStore._$baseKeyPaths(root)
                    names[\\R.title] = "title"
                    names[\\R.folder] = "folder"
                    names[\\R.tags] = "tags"
                    return names
                }

                override public class var _$keyPathNames: [AnyKeyPath: String] {
                    Self._$keyPathsNote(Self.self)
                }

                static let _$slotBaseNote: Int = ManagedObject._$slotCount

                private static let _$keyPathNote_title = \\Note.title

                private static let _$keyPathNote_folder = \\Note.folder

                private static let _$keyPathNote_tags = \\Note.tags

                override public class var _$slotCount: Int {
                    Note._$slotBaseNote + 3
                }

                var _$pendingNote = DocStore._$PendingValues()

                override public func _$absorbPending() {
                    super._$absorbPending()
                    _$applyPending(_$pendingNote, base: Note._$slotBaseNote)
                    _$pendingNote = DocStore._$PendingValues()
                }

                override public func _$observedValueChanged(slot: Int) {
                    switch slot &- Note._$slotBaseNote {
                    case 0:
                        DocStore._$notifyObservers(self, \\Note.title)
                    case 1:
                        DocStore._$notifyObservers(self, \\Note.folder)
                    case 2:
                        DocStore._$notifyObservers(self, \\Note.tags)
                    default:
                        super._$observedValueChanged(slot: slot)
                    }
                }

                public required init(_$fault token: DocStore._$FaultToken) {
                    self.folder = nil
                    self.tags = []
                    super.init()
                    _$becomeFault(token)
                }
            }
            """)
    }

    @Test func aStructIsRefusedWithAClearMessage() {
        expand(
            """
            @Model struct Note {
                var title: String = ""
            }
            """,
            """
            struct Note {
                var title: String = ""
            }
            """,
            diagnostics: [DiagnosticSpec(message: "@Model applies to a class that inherits from ManagedObject (or from another @Model class)", line: 1, column: 1)])
    }
}
