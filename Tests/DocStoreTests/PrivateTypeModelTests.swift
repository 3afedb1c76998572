// A model class whose persisted property has a private type, and one whose name and a
// subclass's property spell the same key-path static (`_$keyPath<Class>_<name>`): both compile
// (the statics @Model adds are private to their class) and save and read back their values.

import DocStore
import DocStoreTestSupport
import Foundation
import Testing

private struct Mood: Codable, Equatable {
    var level = 1
}

@Model final class Diary: ManagedObject {
    var entry: String = ""
    fileprivate var mood: Mood = Mood()
}

@Model class Shelf: ManagedObject {
    var b_c: Int = 0
}

// `Shelf_b.c` and `Shelf.b_c` both make the name `_$keyPathShelf_b_c`.
@Model final class Shelf_b: Shelf {
    var c: Int = 0
}

@Suite struct PrivateTypeModelTests {
    @Test func privateTypesAndLookalikeNamesSaveAndReadBack() throws {
        let dir = TemporaryDirectory("private")
        defer { withExtendedLifetime(dir) {} }
        let url = URL(fileURLWithPath: dir.file("Diary.docstore"))
        do {
            let store = try Store(url: url, models: [Diary.self, Shelf.self, Shelf_b.self])
            let context = Context(store: store)
            let diary = Diary()
            diary.entry = "calm"
            diary.mood = Mood(level: 3)
            let shelf = Shelf_b()
            shelf.b_c = 5
            shelf.c = 7
            try context.insert(diary)
            try context.insert(shelf)
            try context.save()
        }
        let store = try Store(url: url, models: [Diary.self, Shelf.self, Shelf_b.self])
        let context = Context(store: store)
        let diaries = try context.fetch(Diary.self)
        #expect(diaries.count == 1 && diaries.first?.entry == "calm" && diaries.first?.mood == Mood(level: 3))
        let shelves = try context.fetch(Shelf_b.self)
        #expect(shelves.count == 1 && shelves.first?.b_c == 5 && shelves.first?.c == 7)
    }
}
