// Custom migration stages that change relationships (MigrationEdits ME1–ME4, CustomMigration
// CM4): to-manys and one-to-ones set by a handler change both sides of the graph, a partner
// given to another object loses it, bad targets fail naming the object and leave the store;
// and a batch that would leave an object without a required to-one is refused (BatchWriter B7).

import Foundation
import Testing
import DocStoreTestSupport

@testable import DocStore
@testable import DocStoreCore

/// People with desks (one-to-one), teams (ordered, to-one inverse) and skills (many-to-many).
enum OfficeV1: VersionedSchema {
    static let versionIdentifier = SchemaVersion(1, 0, 0)
    static var models: [ManagedObject.Type] { [Person.self, Desk.self, Team.self, Skill.self] }

    @Model final class Person: ManagedObject {
        @Attribute(.unique) var name: String = ""
        var desk: Desk?
        var skills: Set<Skill> = []
        @Relationship(inverse: \Team.members) var team: Team?
    }
    @Model final class Desk: ManagedObject {
        @Attribute(.unique) var label: String = ""
        @Relationship(inverse: \Person.desk) var owner: Person?
    }
    @Model final class Team: ManagedObject {
        @Attribute(.unique) var name: String = ""
        var members: [Person] = []
    }
    @Model final class Skill: ManagedObject {
        @Attribute(.unique) var name: String = ""
        @Relationship(inverse: \Person.skills) var people: Set<Person> = []
    }
}

/// Version 2 adds a note to people (the custom stage makes the migration rewrite anyway).
enum OfficeV2: VersionedSchema {
    static let versionIdentifier = SchemaVersion(2, 0, 0)
    static var models: [ManagedObject.Type] { [Person.self, Desk.self, Team.self, Skill.self] }

    @Model final class Person: ManagedObject {
        @Attribute(.unique) var name: String = ""
        var note: String?
        var desk: Desk?
        var skills: Set<Skill> = []
        @Relationship(inverse: \Team.members) var team: Team?
    }
    @Model final class Desk: ManagedObject {
        @Attribute(.unique) var label: String = ""
        @Relationship(inverse: \Person.desk) var owner: Person?
    }
    @Model final class Team: ManagedObject {
        @Attribute(.unique) var name: String = ""
        var members: [Person] = []
    }
    @Model final class Skill: ManagedObject {
        @Attribute(.unique) var name: String = ""
        @Relationship(inverse: \Person.skills) var people: Set<Person> = []
    }
}

/// The stage: ann takes bob's desk (one-to-one: bob loses it, ann's old desk its owner);
/// everyone gets the skill "swift" (inserted by ann's handler) beside the ones they had; team
/// "core" lists its members in reverse and takes cy from team "web".
enum OfficePlan: SchemaMigrationPlan {
    /// The version-1 objects' IDs by name or label, read before migrating (handlers run entity
    /// by entity, so they cannot count on seeing another entity's objects first).
    nonisolated(unsafe) static var ids: [String: ObjectID] = [:]
    /// People whose carried-over skills the handler found equal to their old ones.
    nonisolated(unsafe) static var carriedSkillsChecked = 0
    static var schemas: [any VersionedSchema.Type] { [OfficeV1.self, OfficeV2.self] }
    static var stages: [MigrationStage] {
        [.custom(fromVersion: OfficeV1.self, toVersion: OfficeV2.self) { migration in
            var swift: MigrationObject?
            migration.forEachObject(of: "Person") { old, new in
                let name = old["name"] as? String ?? ""
                let had = old["skills"] as? [ObjectID] ?? []
                if Set(had) == Set(new["skills"] as? [ObjectID] ?? []) { carriedSkillsChecked += 1 }
                if swift == nil {
                    let skill = try migration.insertObject(forEntityName: "Skill")
                    skill["name"] = "swift"
                    swift = skill
                }
                new["skills"] = had + [swift?.objectID].compactMap { $0 }
                if name == "ann" { new["desk"] = ids["D2"] }
                new["note"] = "migrated"
            }
            migration.forEachObject(of: "Team") { old, new in
                guard old["name"] as? String == "core" else { return }
                let members = old["members"] as? [ObjectID] ?? []
                new["members"] = members.reversed() + [ids["cy"]].compactMap { $0 }
            }
        }]
    }
}

@Suite(.serialized) struct MigrationRelationshipEditTests {
    // one per test (swift-testing makes a suite value for each): removed when the test ends
    let temporary = TemporaryDirectory("edits")

    func temporaryURL() -> URL {
        URL(fileURLWithPath: temporary.file("edits-\(UUID().uuidString).docstore"))
    }

    /// ann (desk D1, team core, skill sql), bob (desk D2, team core, skills sql and go),
    /// cy (desk D3, team web), dee (no desk, team core).
    func makeV1(_ url: URL) throws {
        let store = try Store(url: url, models: OfficeV1.models)
        let c = Context(store: store)
        func make<T: ManagedObject>(_ object: T) throws -> T { try c.insert(object); return object }
        let desks = try ["D1", "D2", "D3"].map { label in try make(OfficeV1.Desk()).with { $0.label = label } }
        let core = try make(OfficeV1.Team()).with { $0.name = "core" }
        let web = try make(OfficeV1.Team()).with { $0.name = "web" }
        let sql = try make(OfficeV1.Skill()).with { $0.name = "sql" }
        let go = try make(OfficeV1.Skill()).with { $0.name = "go" }
        let people = try ["ann", "bob", "cy", "dee"].map { name in try make(OfficeV1.Person()).with { $0.name = name } }
        people[0].desk = desks[0]
        people[1].desk = desks[1]
        people[2].desk = desks[2]
        core.members = [people[0], people[1], people[3]]
        web.members = [people[2]]
        people[0].skills = [sql]
        people[1].skills = [sql, go]
        try c.save()
        try store.close()
    }

    /// The IDs of the version-1 store's objects by name or label.
    func ids(_ url: URL) throws -> [String: ObjectID] {
        let store = try Store(url: url, models: OfficeV1.models)
        defer { try? store.close() }
        let c = Context(store: store)
        var ids: [String: ObjectID] = [:]
        for p in try c.fetch(FetchRequest<OfficeV1.Person>()) { ids[p.name] = p.objectID }
        for d in try c.fetch(FetchRequest<OfficeV1.Desk>()) { ids[d.label] = d.objectID }
        return ids
    }

    @Test func aStageSetsToManysAndOneToOnesOnBothSides() throws {
        let url = temporaryURL()
        try makeV1(url)
        OfficePlan.ids = try ids(url)
        OfficePlan.carriedSkillsChecked = 0
        let store = try Store(url: url, migrationPlan: OfficePlan.self)
        #expect(try store.verify() == [])
        let c = Context(store: store)
        let people = Dictionary(uniqueKeysWithValues: try c.fetch(FetchRequest<OfficeV2.Person>()).map { ($0.name, $0) })
        let desks = Dictionary(uniqueKeysWithValues: try c.fetch(FetchRequest<OfficeV2.Desk>()).map { ($0.label, $0) })
        let teams = Dictionary(uniqueKeysWithValues: try c.fetch(FetchRequest<OfficeV2.Team>()).map { ($0.name, $0) })
        let skills = Dictionary(uniqueKeysWithValues: try c.fetch(FetchRequest<OfficeV2.Skill>()).map { ($0.name, $0) })
        // One-to-one: ann has D2; bob lost it; D1 lost ann; D3 stays with cy.
        #expect(people["ann"]?.desk?.label == "D2" && desks["D2"]?.owner?.name == "ann")
        #expect(people["bob"]?.desk == nil && desks["D1"]?.owner == nil)
        #expect(people["cy"]?.desk?.label == "D3" && desks["D3"]?.owner?.name == "cy")
        // Many-to-many: everyone kept their skills and gained swift, seen from both sides.
        #expect(people.values.allSatisfy { $0.note == "migrated" })
        #expect(people.mapValues { Set($0.skills.map(\.name)) } == ["ann": ["sql", "swift"], "bob": ["sql", "go", "swift"], "cy": ["swift"], "dee": ["swift"]])
        #expect(Set(skills["swift"]?.people.map(\.name) ?? []) == ["ann", "bob", "cy", "dee"])
        #expect(Set(skills["go"]?.people.map(\.name) ?? []) == ["bob"])
        // Ordered to-many with a to-one inverse: core is reversed and took cy from web.
        #expect(teams["core"]?.members.map(\.name) == ["dee", "bob", "ann", "cy"])
        #expect(teams["web"]?.members.isEmpty == true && people["cy"]?.team?.name == "core")
        // The handler saw each person's skills carried over to the new object.
        #expect(OfficePlan.carriedSkillsChecked == 4)
        // The scratch tree is gone.
        #expect(try store.engine.read { try $0.treeExists(MigrationCopier.editsTree) } == false)
        // A context works on the result.
        people["dee"]?.desk = desks["D1"]
        try c.save()
        #expect(try store.verify() == [])
    }

    /// A stage whose handler gives a to-many an object of the wrong entity.
    enum WrongTargetPlan: SchemaMigrationPlan {
        static var schemas: [any VersionedSchema.Type] { [OfficeV1.self, OfficeV2.self] }
        static var stages: [MigrationStage] {
            [.custom(fromVersion: OfficeV1.self, toVersion: OfficeV2.self) { migration in
                migration.forEachObject(of: "Person") { old, new in
                    if old["name"] as? String == "bob" { new["skills"] = [OfficePlan.ids["D1"]].compactMap { $0 } }
                }
            }]
        }
    }

    @Test func aTargetOfTheWrongEntityFailsNamingTheObjectAndLeavesTheStore() throws {
        let url = temporaryURL()
        try makeV1(url)
        OfficePlan.ids = try ids(url)
        let before = try Data(contentsOf: url)
        let error = #expect(throws: DocStoreError.self) { try Store(url: url, migrationPlan: WrongTargetPlan.self) }
        #expect(error?.code == .validation)
        #expect(error?.problems.contains { $0.entity.hasPrefix("Person/") && $0.property == "skills" && $0.message.contains("leads to Skill, not to Desk") } == true,
                "\(String(describing: error))")
        #expect(try Data(contentsOf: url) == before)
        let store = try Store(url: url, models: OfficeV1.models)
        #expect(store.catalog.versionIdentifier == nil || store.catalog.versionIdentifier == SchemaVersion(1, 0, 0))
        #expect(try store.verify() == [])
    }
}

@Suite struct RequiredPartnerBatchTests {
    /// Holders and badges: a badge must have its holder (a required one-to-one).
    static let schema = Schema(entities: [
        EntityDescription(name: "Holder", attributes: [AttributeDescription(name: "name", type: .string, isUnique: true)],
                          relationships: [RelationshipDescription(name: "badge", destination: "Badge", inverse: "holder", deleteRule: .cascade, isOptional: true)]),
        EntityDescription(name: "Badge", attributes: [AttributeDescription(name: "code", type: .string)],
                          relationships: [RelationshipDescription(name: "holder", destination: "Holder", inverse: "badge", isOptional: false)]),
    ])

    @Test func aBatchThatLeavesARequiredToOneEmptyIsRefused() throws {
        let dir = TemporaryDirectory("badges")
        defer { withExtendedLifetime(dir) {} }
        let store = try Store(url: URL(fileURLWithPath: dir.file("badges.docstore")), schema: Self.schema)
        var holders = BatchInsertRequest(entityName: "Holder", objects: [["name": "ann"], ["name": "bob"]])
        holders.resultType = .objectIDs
        let ids = try store.execute(holders).objectIDs
        try #require(ids.count == 2)
        _ = try store.execute(BatchInsertRequest(entityName: "Badge", objects: [["code": "A", "holder": ids[0]], ["code": "B", "holder": ids[1]]]))
        #expect(try store.verify() == [])
        // Badge B taking ann would leave badge A without its required holder: refused (B7).
        let steal = BatchUpdateRequest(entityName: "Badge", predicate: try QueryPredicate(format: "code == %@", "B"),
                                       propertiesToUpdate: ["holder": ids[0]])
        let error = #expect(throws: DocStoreError.self) { try store.execute(steal) }
        #expect(error?.code == .validation && error?.problems.contains { $0.entity.hasPrefix("Badge/") && $0.property == "holder" && $0.message.contains("required") } == true,
                "\(String(describing: error))")
        // Nothing changed.
        let c = Context(store: store)
        let badges = try c.fetchDictionaries(FetchRequest<ManagedObject>(entityName: "Badge", sortDescriptors: [SortKey("code")]))
        #expect(badges.map { $0["holder"] as? ObjectID } == [ids[0], ids[1]])
        #expect(try store.verify() == [])
        // Swapping code values is an attribute change: allowed.
        let rename = BatchUpdateRequest(entityName: "Badge", predicate: try QueryPredicate(format: "code == %@", "B"), propertiesToUpdate: ["code": "C"])
        #expect(try store.execute(rename).count == 1)
    }
}

extension ManagedObject {
    /// Sets properties of a new object inline (test shorthand).
    fileprivate func with(_ body: (Self) -> Void) -> Self {
        body(self)
        return self
    }
}
