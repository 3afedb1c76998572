// FetchResultsCollection: the result of a fetch with a batch size (Core Data's fetchBatchSize,
// SwiftData's `fetch(_:batchSize:)`) — the matches' keys in order, with objects made and filled
// a batch at a time as the collection is indexed.
//
// Invariants:
// - The keys are fixed when the fetch runs (its order, window and pending changes included);
//   later changes to the context do not move them, as with Core Data's batched arrays.
// - Every key's entity class is `Element` or a subclass (keys of other classes are left out
//   when the collection is made), so the object made for a key is an `Element`.
// - At most `retainedBatches` batches of objects are held; an object the app still holds stays
//   alive through its own references, and an evicted batch is made again from the context (its
//   records read again in one read, Context+Relationships R5).

import Foundation

/// The ordered results of a fetch, loaded a batch at a time as they are read.
///
/// ```swift
/// let notes = try context.fetch(FetchRequest<Note>(sortDescriptors: [SortKey("createdAt")]), batchSize: 50)
/// print(notes.count)          // no object made yet
/// let first = notes[0]        // makes and fills notes 0..<50 with one read
/// ```
public final class FetchResultsCollection<Element: ManagedObject>: RandomAccessCollection {
    /// How many objects are made together.
    public let batchSize: Int
    private let context: Context
    private let keys: [(key: UInt64, entity: EntityInfo)]
    /// The most recently used batches, newest last.
    private var batches: [(index: Int, objects: [Element])] = []
    private let retainedBatches = 4

    init(context: Context, keys: [(key: UInt64, entity: EntityInfo)], batchSize: Int) {
        self.context = context
        self.keys = keys.filter { $0.entity.objectClass is Element.Type }
        self.batchSize = Swift.max(1, batchSize)
    }

    public var startIndex: Int { 0 }
    public var endIndex: Int { keys.count }

    /// The object at `position`, made with the rest of its batch on first use.
    public subscript(position: Int) -> Element {
        let batch = position / batchSize
        let objects: [Element]
        if let i = batches.firstIndex(where: { $0.index == batch }) {
            let hit = batches.remove(at: i)
            batches.append(hit)
            objects = hit.objects
        } else {
            objects = load(batch)
            batches.append((batch, objects))
            if batches.count > retainedBatches { batches.removeFirst() }
        }
        return objects[position - batch * batchSize]
    }

    /// Makes the objects of a batch and fills them with one read. A read that fails leaves
    /// them faults, which report the error when they are touched.
    private func load(_ batch: Int) -> [Element] {
        let range = (batch * batchSize)..<Swift.min(keys.count, (batch + 1) * batchSize)
        let slice = keys[range]
        let objects = slice.map { context.materialize($0.key, $0.entity) }
        try? context.readAhead(objects.filter(\.isFault))
        return objects.map { object in
            try? context.fulfill(object)
            // The class was checked when the collection was made (see the invariants above).
            return unsafeDowncast(object, to: Element.self)
        }
    }
}
