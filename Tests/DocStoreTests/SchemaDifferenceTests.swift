// Schema differences: an identical schema (in any declaration order) has none; each kind of change
// is named by entity and property; a rename through originalName is one change, not a removal and
// an addition.

import DocStore
import Testing

@Suite struct SchemaDifferenceTests {
    let model = SchemaValidationTests.notesModel()

    @Test func anIdenticalSchemaInAnyOrderHasNoDifferences() {
        #expect(model.differences(from: model).isEmpty)
        var reordered = model
        reordered.entities.reverse()
        reordered.entities[0].attributes.reverse()
        #expect(reordered.differences(from: model).isEmpty)
    }

    @Test func eachChangeIsNamedByEntityAndProperty() throws {
        var changed = model
        changed.entities.removeAll { $0.name == "Tag" }
        changed.entities.append(EntityDescription(name: "Reminder"))
        let note = try #require(changed.entities.firstIndex { $0.name == "Note" })
        changed.entities[note].attributes[0].type = .int64                 // title: String → Int64
        changed.entities[note].attributes[1].isOptional = false            // body becomes required
        changed.entities[note].attributes.append(AttributeDescription(name: "pinned", type: .bool))
        changed.entities[note].attributes.removeAll { $0.name == "isRead" }
        changed.entities[note].relationships[0].deleteRule = .deny
        let found = changed.differences(from: model).map(\.description)
        #expect(found.contains("Note.title: type String → Int64"))
        #expect(found.contains("Note.body: became required"))
        #expect(found.contains("Note.pinned: attribute added"))
        #expect(found.contains("Note.isRead: attribute removed"))
        #expect(found.contains("Note.folder: delete rule nullify → deny"))
        #expect(found.contains("Reminder: entity added"))
        #expect(found.contains("Tag: entity removed"))
        #expect(found.count == 7, "\(found)")
    }

    @Test func aRenameThroughOriginalNameIsOneChange() throws {
        var renamed = model
        let note = try #require(renamed.entities.firstIndex { $0.name == "Note" })
        renamed.entities[note].attributes[0].name = "heading"
        renamed.entities[note].attributes[0].originalName = "title"
        #expect(renamed.differences(from: model).map(\.description) == ["Note.heading: renamed from title"])
    }
}
