// Schema checks (Schema.validate, rules S1-S7): a sound model passes; each kind of mistake is
// reported as a problem naming the entity and the property; every problem of a model is reported
// in one error.

import DocStore
import Testing

@Suite struct SchemaValidationTests {
    /// The notes model of the README and the benchmark: Folder 1–N Note, Note N–M Tag, and an
    /// Attachment sub-entity of a File entity.
    static func notesModel() -> Schema {
        Schema(entities: [
            EntityDescription(name: "Folder", attributes: [
                AttributeDescription(name: "name", type: .string, isUnique: true, minLength: 1, maxLength: 100),
            ], relationships: [
                RelationshipDescription(name: "notes", destination: "Note", inverse: "folder", isToMany: true, isOrdered: true, deleteRule: .cascade),
            ]),
            EntityDescription(name: "Note", attributes: [
                AttributeDescription(name: "title", type: .string, maxLength: 200),
                AttributeDescription(name: "body", type: .string, isOptional: true),
                AttributeDescription(name: "createdAt", type: .date, isIndexed: true),
                AttributeDescription(name: "isRead", type: .bool),
                AttributeDescription(name: "rating", type: .int16, minimum: 0, maximum: 5),
                AttributeDescription(name: "slug", type: .string, isOptional: true, pattern: "^[a-z0-9-]+$"),
            ], relationships: [
                RelationshipDescription(name: "folder", destination: "Folder", inverse: "notes", isOptional: true),
                RelationshipDescription(name: "tags", destination: "Tag", inverse: "notes", isToMany: true, maxCount: 20),
                RelationshipDescription(name: "files", destination: "File", inverse: "note", isToMany: true, deleteRule: .cascade),
            ]),
            EntityDescription(name: "Tag", attributes: [
                AttributeDescription(name: "name", type: .string, isUnique: true),
            ], relationships: [
                RelationshipDescription(name: "notes", destination: "Note", inverse: "tags", isToMany: true),
            ]),
            EntityDescription(name: "File", isAbstract: true, attributes: [
                AttributeDescription(name: "name", type: .string),
            ], relationships: [
                RelationshipDescription(name: "note", destination: "Note", inverse: "files", isOptional: false),
            ]),
            EntityDescription(name: "Attachment", parent: "File", attributes: [
                AttributeDescription(name: "bytes", type: .binaryData, allowsExternalStorage: true),
                AttributeDescription(name: "info", type: .codable(typeName: "AttachmentInfo"), isOptional: true),
            ]),
        ])
    }

    /// The problems `schema` is reported with (empty if it is valid).
    static func problems(_ schema: Schema) -> [DocStoreError.Problem] {
        do {
            try schema.validate()
            return []
        } catch {
            #expect(error.code == .invalidSchema)
            #expect(!error.problems.isEmpty)
            return error.problems
        }
    }

    /// The notes model with one entity changed by `edit`.
    static func notes(editing name: String, _ edit: (inout EntityDescription) -> Void) -> Schema {
        var schema = notesModel()
        if let i = schema.entities.firstIndex(where: { $0.name == name }) { edit(&schema.entities[i]) }
        return schema
    }

    @Test func theNotesModelIsValidAndInheritanceGivesSubEntitiesTheirParentsProperties() {
        let schema = Self.notesModel()
        #expect(Self.problems(schema).isEmpty)
        #expect(schema.allAttributes(of: "Attachment").map(\.name) == ["name", "bytes", "info"])
        #expect(schema.allRelationships(of: "Attachment").map(\.name) == ["note"])
        #expect(schema.entity("Attachment", isKindOf: "File"))
        #expect(!schema.entity("File", isKindOf: "Attachment"))
    }

    @Test func aRelationshipWithoutAnInverseNamesTheEntityAndRelationship() {
        let schema = Self.notes(editing: "Tag") { $0.relationships[0].inverse = nil }
        let problems = Self.problems(schema)
        #expect(problems.contains { $0.entity == "Tag" && $0.property == "notes" && $0.message.contains("no inverse") })
    }

    @Test func anInverseThatDoesNotPointBackIsReported() {
        // Note.tags names Tag.notes as its inverse, but Tag.notes names "folder".
        let schema = Self.notes(editing: "Tag") { $0.relationships[0].inverse = "folder" }
        let problems = Self.problems(schema)
        #expect(problems.contains { $0.entity == "Note" && $0.property == "tags" && $0.message.contains("names \"folder\"") })
        #expect(problems.contains { $0.entity == "Tag" && $0.property == "notes" })
    }

    @Test func aMissingInverseOrDestinationIsReported() {
        let missingInverse = Self.notes(editing: "Note") { $0.relationships[1].inverse = "taggedNotes" }
        #expect(Self.problems(missingInverse).contains { $0.entity == "Note" && $0.property == "tags" && $0.message.contains("does not exist") })
        let missingDestination = Self.notes(editing: "Note") { $0.relationships[1].destination = "Label" }
        #expect(Self.problems(missingDestination).contains { $0.entity == "Note" && $0.property == "tags" && $0.message.contains("\"Label\" does not exist") })
    }

    @Test func nullifyingARequiredToOneIsReported() {
        // Deleting a Note with a nullify rule on files would leave each File without its
        // required note.
        let schema = Self.notes(editing: "Note") { $0.relationships[2].deleteRule = .nullify }
        let problems = Self.problems(schema)
        #expect(problems.contains { $0.entity == "Note" && $0.property == "files" && $0.message.contains("required to-one") })
        // Deny or cascade is fine.
        #expect(Self.problems(Self.notes(editing: "Note") { $0.relationships[2].deleteRule = .deny }).isEmpty)
    }

    @Test func duplicateNamesAreReportedAlsoAcrossInheritance() {
        let twoEntities = Schema(entities: Self.notesModel().entities + [EntityDescription(name: "Tag")])
        #expect(Self.problems(twoEntities).contains { $0.entity == "Tag" && $0.property == nil && $0.message.contains("two entities") })
        let twoProperties = Self.notes(editing: "Note") { $0.attributes.append(AttributeDescription(name: "folder", type: .string)) }
        #expect(Self.problems(twoProperties).contains { $0.entity == "Note" && $0.property == "folder" && $0.message.contains("two properties") })
        let inherited = Self.notes(editing: "Attachment") { $0.attributes.append(AttributeDescription(name: "name", type: .string)) }
        #expect(Self.problems(inherited).contains { $0.entity == "Attachment" && $0.property == "name" && $0.message.contains("ancestor \"File\"") })
    }

    @Test func inheritanceProblemsAreReported() {
        let missingParent = Self.notes(editing: "Attachment") { $0.parent = "Blob" }
        #expect(Self.problems(missingParent).contains { $0.entity == "Attachment" && $0.message.contains("\"Blob\" does not exist") })
        let cycle = Self.notes(editing: "File") { $0.parent = "Attachment" }
        #expect(Self.problems(cycle).contains { $0.entity == "File" && $0.message.contains("cycle") })
    }

    @Test func attributeOptionsMustFitTheType() {
        let schema = Self.notes(editing: "Note") { note in
            note.attributes[0].minimum = 3                   // range on a String
            note.attributes[3].maxLength = 2                 // length on a Bool
            note.attributes[4].minimum = 9                   // minimum above maximum 5
            note.attributes[5].pattern = "([a-z"             // not a regular expression
            note.attributes[2].allowsExternalStorage = true  // external storage on a Date
        }
        let problems = Self.problems(schema)
        #expect(problems.count == 5, "\(problems)")
        #expect(problems.contains { $0.property == "title" && $0.message.contains("numbers and dates") })
        #expect(problems.contains { $0.property == "isRead" && $0.message.contains("String and Data") })
        #expect(problems.contains { $0.property == "rating" && $0.message.contains("greater than maximum") })
        #expect(problems.contains { $0.property == "slug" && $0.message.contains("not a valid regular expression") })
        #expect(problems.contains { $0.property == "createdAt" && $0.message.contains("external storage") })
        #expect(problems.allSatisfy { $0.entity == "Note" })
    }

    @Test func everyProblemIsReportedInOneErrorWithAReadableDescription() throws {
        var schema = Self.notes(editing: "Tag") { $0.relationships[0].inverse = nil }
        schema.entities.append(EntityDescription(name: "$catalog"))
        do {
            try schema.validate()
            Issue.record("an invalid schema passed")
        } catch {
            #expect(error.problems.count >= 3)
            #expect(error.description.hasPrefix("invalidSchema: the schema has \(error.problems.count) problems"))
            #expect(error.description.contains("\n  - Tag.notes: it has no inverse"))
            #expect(error.description.contains("\n  - $catalog: entity names may not begin with \"$\""))
        }
    }
}
