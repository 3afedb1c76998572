// Casts in #Predicate — `is`, `as?`, `as!` — on a model with entity inheritance and on values:
// each fetched through the store and compared with Foundation evaluating the same predicate on
// every object; the `@entities` step they become, in the format language; and the casts that
// cannot be run, refused with a typed error.

import Foundation
import Testing

@testable import DocStore
@testable import DocStoreCore

@Suite struct PredicateCastTests {
    @Model class Animal: ManagedObject {
        var name: String = ""
        var age: Int?
        var keeper: Keeper?
        @Relationship(inverse: \Keeper.favorite) var fans: Set<Keeper> = []
    }

    @Model class Dog: Animal {
        var barks: Bool = true
    }

    @Model final class Puppy: Dog {
        var toy: String = ""
    }

    @Model final class Cat: Animal {
        var lives: Int = 9
    }

    @Model final class Keeper: ManagedObject {
        var name: String = ""
        @Relationship(inverse: \Animal.keeper) var animals: Set<Animal> = []
        var favorite: Animal?
    }

    static func makeStore() throws -> Context {
        let c = Context(store: try Store.inMemory(models: [Animal.self, Dog.self, Puppy.self, Cat.self, Keeper.self]))
        var keepers: [Keeper] = []
        for name in ["Ann", "Bo", "Cy"] {
            keepers.append(Keeper())
            keepers[keepers.count - 1].name = name
            try c.insert(keepers[keepers.count - 1])
        }
        var animals: [Animal] = []
        for i in 0..<24 {
            let a: Animal
            switch i % 4 {
            case 0: a = Animal()
            case 1:
                let d = Dog()
                d.barks = i % 3 == 0
                a = d
            case 2:
                let p = Puppy()
                p.toy = "ball \(i)"
                a = p
            default:
                let cat = Cat()
                cat.lives = i % 9
                a = cat
            }
            a.name = "animal \(i)"
            a.age = i % 5 == 0 ? nil : i
            try c.insert(a)
            if i % 6 != 0 { a.keeper = keepers[i % 3] }
            animals.append(a)
        }
        keepers[0].favorite = animals[1]
        keepers[1].favorite = animals[3]
        try c.save()
        return c
    }

    func check<T: ManagedObject>(_ c: Context, _ predicate: Predicate<T>, _ label: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let fetched = try c.fetch(FetchRequest<T>(predicate: predicate)).compactMap(\.objectID)
        let all = try c.fetch(FetchRequest<T>())
        let expected = try all.filter { try predicate.evaluate($0) }.compactMap(\.objectID)
        #expect(Set(fetched) == Set(expected), "\(label)", sourceLocation: sourceLocation)
        #expect(!expected.isEmpty && expected.count < all.count || label.hasSuffix("(all)"), "\(label) should select some, not all", sourceLocation: sourceLocation)
    }

    @Test func castsMatchFoundationsOwnEvaluation() throws {
        let c = try Self.makeStore()
        try check(c, #Predicate<Animal> { $0 is Dog }, "is Dog (puppies too)")
        try check(c, #Predicate<Animal> { $0 is Puppy }, "is Puppy")
        try check(c, #Predicate<Animal> { !($0 is Dog) }, "is not a Dog")
        try check(c, #Predicate<Animal> { $0 is Animal }, "is Animal, an upcast (all)")
        try check(c, #Predicate<Animal> { ($0 as? Dog)?.barks == true }, "as? Dog, barking")
        try check(c, #Predicate<Animal> { ($0 as? Cat)?.lives ?? 0 > 4 }, "as? Cat, lives")
        try check(c, #Predicate<Animal> { ($0 as? Puppy)?.toy.starts(with: "ball 1") == true }, "as? Puppy, toy")
        try check(c, #Predicate<Keeper> { $0.favorite is Cat }, "a to-one that is a Cat")
        try check(c, #Predicate<Keeper> { ($0.favorite as? Dog)?.barks == false }, "a to-one cast, not barking")
        try check(c, #Predicate<Keeper> { $0.animals.contains { $0 is Puppy } }, "any member a Puppy")
        try check(c, #Predicate<Keeper> { $0.favorite is Animal }, "an upcast of a to-one: not nil")
        // Value casts: what the static types decide.
        try check(c, #Predicate<Animal> { ($0.age as? Int) == 3 }, "Int? as? Int")
        try check(c, #Predicate<Animal> { $0.age is Int }, "Int? is Int: not nil")
        try check(c, #Predicate<Animal> { ($0.name as? String) == "animal 7" }, "String as? String")
        try check(c, #Predicate<Animal> { ($0.age ?? 0) as! Int > 20 }, "as! Int")
    }

    @Test func typeChecksAreTheEntitiesStepInTheFormatLanguage() throws {
        let c = try Self.makeStore()
        let translated = try QueryPredicate(#Predicate<Animal> { $0 is Dog })
        #expect(translated.description == "ANY @entities == \"Dog\"")
        #expect(try QueryPredicate(format: translated.description) == translated)
        let format = try QueryPredicate(format: "ANY keeper.favorite.@entities == 'Cat' OR @entities CONTAINS 'Puppy'")
        #expect(try QueryPredicate(format: format.description) == format)
        let dogs = try c.fetch(FetchRequest<Animal>(predicate: try QueryPredicate(format: "ANY @entities == 'Dog'")))
        #expect(dogs.count == 12 && dogs.allSatisfy { $0 is Dog })
    }

    @Test func castsThatCannotRunAreTypedErrors() throws {
        let c = try Self.makeStore()
        // A value cast that always fails would trap in Swift: refused, not silently false (the
        // compiler warns about this cast, as it should).
        let always = FetchRequest<Animal>(predicate: #Predicate<Animal> { ($0.name as! Int) > 3 })
        let error = #expect(throws: DocStoreError.self) { try c.fetch(always) }
        #expect(error?.code == .unsupportedPredicate && error?.message.contains("always fails") == true, "\(String(describing: error))")
    }
}
