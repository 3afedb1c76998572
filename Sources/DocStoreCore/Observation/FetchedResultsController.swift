// FetchedResultsController: a fetch with sort descriptors and an optional section key path,
// kept up to date from its context's changes — Core Data's NSFetchedResultsController — and
// each change reported as a ResultsDifference (ResultsDifference.swift) for a table or list.
//
//   FR1  it holds the results as primary keys per section, never objects: a list of a million
//        objects costs eight bytes an object, and objects are made (a batch at a time with a
//        batch size) only when `object(at:)` asks.
//   FR2  it listens to its context's ObjectsDidChange (local edits at processPendingChanges,
//        merged saves of other contexts); a change of an entity the fetch cannot depend on does
//        not refetch. A relevant change refetches keys and sections and reports the difference
//        from the previous state, if any — except FR4's.
//   FR4  a change to one object of a list without sections or window, whose predicate and sort
//        keys read only the object itself, is applied from the change: the object leaves its
//        old place (found by a scan of the keys) and takes its new one (a binary search by the
//        fetch's own order, reading about log2(n) objects' values), and the difference is that
//        one insert, delete, move or update — a change to a list of a million costs what it
//        touches, not a fetch of a million keys.
//   FR3  sections follow the first sort key, which must be the section key path (as in Core
//        Data), so a section's objects are contiguous; counts per section come from one
//        group-by fetch, not from reading every object.

import Foundation

/// Keeps a sorted, optionally sectioned fetch current and says how it changed.
///
/// ```swift
/// let request = FetchRequest<Note>(sortDescriptors: [SortKey("folder.name"), SortKey("createdAt")])
/// let controller = try FetchedResultsController(fetchRequest: request, context: context,
///                                               sectionNameKeyPath: "folder.name")
/// try controller.performFetch()
/// controller.onChange = { difference in tableView.apply(difference) }
/// let first = controller.object(at: IndexPath(item: 0, section: 0))
/// ```
public final class FetchedResultsController<Result: ManagedObject> {
    public let fetchRequest: FetchRequest<Result>
    public let context: Context
    /// The key path whose value names each object's section; nil for one unnamed section.
    public let sectionNameKeyPath: String?
    /// How many objects `object(at:)` fills at once (0: one at a time).
    public let batchSize: Int
    /// Called with every non-empty difference, in the context's domain, after the controller's
    /// state moved on.
    public var onChange: ((ResultsDifference) -> Void)?

    private var sectionKeys: ResultsDiffer.Sections = []
    private var handler: Int?
    /// Entity IDs whose changes can change the results (nil: any entity).
    private let watched: Set<UInt32>?
    private let differences = EventChannel<ResultsDifference>()
    /// How many times the results were fetched (tests check that unrelated changes do not).
    private(set) var fetchCount = 0
    /// How many changes were applied without a fetch (FR4).
    private(set) var changesApplied = 0

    /// - Throws: ``DocStoreError/Code/invalidQuery`` when sections are asked for and the first
    ///   sort key is not the section key path (FR3), or the entity is unknown.
    public init(fetchRequest: FetchRequest<Result>, context: Context, sectionNameKeyPath: String? = nil,
                batchSize: Int = 0) throws(DocStoreError) {
        if let sectionNameKeyPath, fetchRequest.sortDescriptors.first?.keyPath != sectionNameKeyPath {
            throw DocStoreError(.invalidQuery, "sections by \(sectionNameKeyPath) need it as the first sort key, so that a section's objects are together; the first is \(fetchRequest.sortDescriptors.first?.keyPath ?? "none")")
        }
        let name = fetchRequest.entityName ?? context.store.model.entity(ofClass: Result.self)?.name ?? _typeName(Result.self, qualified: false)
        guard let entity = context.store.model.entity(named: name) else {
            throw DocStoreError(.invalidQuery, "the schema has no entity \"\(name)\"", entity: name)
        }
        self.fetchRequest = fetchRequest
        self.context = context
        self.sectionNameKeyPath = sectionNameKeyPath
        self.batchSize = batchSize
        // A key path that goes on past a relationship (`folder.name`), or into a to-many
        // (`ANY tags.name`, `tags.@count`), depends on other entities' objects: any change may
        // matter. One that ends at a to-one (`folder == %@`) reads only this object's record.
        var paths = Set((fetchRequest.sortDescriptors.map(\.keyPath) + (sectionNameKeyPath.map { [$0] } ?? []))
            .map { $0.split(separator: ".").map(String.init) })
        if let predicate = fetchRequest.predicate { QueryPlanner.collectRootPaths(predicate, into: &paths) }
        let crossesRelationships = paths.contains { path in
            guard let first = path.first, let p = entity.property(named: first), p.relationship != nil else { return false }
            return p.isToMany || path.count > 1
        }
        watched = crossesRelationships ? nil : entity.kindIDs
    }

    deinit {
        if let handler { context.removeChangeHandler(handler) }
    }

    /// Fetches the results and starts following the context's changes.
    public func performFetch() throws(DocStoreError) {
        sectionKeys = try fetchSections()
        if handler == nil {
            handler = context.addChangeHandler { [weak self] change in self?.contextDidChange(change) }
        }
    }

    /// The current state as object IDs.
    public var snapshot: ResultsSnapshot {
        ResultsSnapshot(sections: sectionKeys.map { ResultsSnapshot.Section(name: $0.name, objectIDs: $0.keys.map(objectID)) })
    }

    /// Every difference from now on, as an AsyncSequence (the same values `onChange` gets).
    public func changes() -> AsyncStream<ResultsDifference> { differences.stream() }

    /// The section names, in order.
    public var sectionNames: [String] { sectionKeys.map(\.name) }

    /// The number of objects in `section`.
    public func numberOfObjects(inSection section: Int) -> Int {
        section < sectionKeys.count ? sectionKeys[section].keys.count : 0
    }

    /// How many objects there are in all.
    public var count: Int { sectionKeys.reduce(0) { $0 + $1.keys.count } }

    /// The object at `indexPath` (a fault filled with its batch when a batch size is set).
    ///
    /// - Throws: ``DocStoreError/Code/objectNotFound`` for an index path outside the results.
    public func object(at indexPath: IndexPath) throws(DocStoreError) -> Result {
        guard indexPath.section < sectionKeys.count, indexPath.item < sectionKeys[indexPath.section].keys.count else {
            throw DocStoreError(.objectNotFound, "no object at section \(indexPath.section), item \(indexPath.item) (\(sectionKeys.count) sections)")
        }
        let keys = sectionKeys[indexPath.section].keys
        if batchSize > 1 {
            let start = indexPath.item / batchSize * batchSize
            try context.prefetchRecords(Array(keys[start..<min(start + batchSize, keys.count)]))
        }
        guard let object = try context.materialize(keys[indexPath.item]) as? Result else {
            throw DocStoreError(.typeMismatch, "the object at \(indexPath) is not a \(Result.self)")
        }
        return object
    }

    /// Where `object` is, if it is in the results.
    public func indexPath(for object: ManagedObject) -> IndexPath? {
        for (s, section) in sectionKeys.enumerated() {
            if let i = section.keys.firstIndex(of: object.key) { return IndexPath(item: i, section: s) }
        }
        return nil
    }

    // MARK: - Following changes (FR2)

    private func contextDidChange(_ change: ObjectsDidChange) {
        if let watched, !change.invalidatedAllObjects,
           !change.allObjectIDs.contains(where: { watched.contains(PrimaryKey.entity(of: $0.primaryKey)) }) {
            return
        }
        let difference: ResultsDifference
        if let applied = applyingOneChange(change) {
            difference = applied
        } else {
            guard let fresh = try? fetchSections() else { return }
            let updated = Set(change.updatedObjectIDs.union(change.refreshedObjectIDs).map(\.primaryKey))
            difference = ResultsDiffer(id: objectID).difference(from: sectionKeys, to: fresh, updated: updated)
            sectionKeys = fresh
        }
        guard !difference.isEmpty else { return }
        onChange?(difference)
        differences.send(difference)
    }

    /// FR4: the difference of a change to one object, with the list updated from it; nil (and
    /// nothing changed) when the change or the fetch is of another kind.
    private func applyingOneChange(_ change: ObjectsDidChange) -> ResultsDifference? {
        // A child context's fetch sees its parent's unsaved values (CC3), which placing one
        // object here does not read: it fetches again.
        guard let watched, context.parent == nil, sectionNameKeyPath == nil, sectionKeys.count == 1, fetchRequest.fetchLimit == 0,
              fetchRequest.fetchOffset == 0, fetchRequest.fetchAfter == nil, fetchRequest.includesPendingChanges,
              !change.invalidatedAllObjects, change.invalidatedObjectIDs.isEmpty else { return nil }
        let relevant = change.allObjectIDs.filter { watched.contains(PrimaryKey.entity(of: $0.primaryKey)) }
        guard relevant.count == 1, let changed = relevant.first, changed.storeIdentifier == context.store.identifier else { return nil }
        let key = changed.primaryKey
        // The keys are searched where they are and changed in place: a million keys are not
        // copied for one change. The placement first: making it can process pending changes,
        // whose event reaches this controller (and changes the keys) before this one goes on.
        let placement: Context.ResultsPlacement
        do { placement = try context.resultsPlacement(fetchRequest) } catch { return nil }
        guard sectionKeys.count == 1 else { return nil }
        let old = sectionKeys[0].keys.firstIndex(of: key)   // (a save reports its inserts again: never assume new)
        var new: Int?
        do {
            if let values = try context.sortValuesIfFetched(key, placement) {
                let count = sectionKeys[0].keys.count - (old == nil ? 0 : 1)
                let skip = old ?? Int.max
                guard let at = try context.insertionIndex(of: key, values: values, count: count, keyAt: { i in
                    self.sectionKeys[0].keys[i < skip ? i : i + 1]
                }, placement) else { return nil }
                new = at
            }
        } catch {
            return nil
        }
        if let old { sectionKeys[0].keys.remove(at: old) }
        if let new { sectionKeys[0].keys.insert(key, at: new) }
        changesApplied += 1
        let updated = change.updatedObjectIDs.contains(changed) || change.refreshedObjectIDs.contains(changed)
        var difference = ResultsDifference()
        let path = { (item: Int) in IndexPath(item: item, section: 0) }
        let id = objectID(key)
        switch (old, new) {
        case (nil, let n?): difference.changes = [.init(type: .insert, objectID: id, indexPath: nil, newIndexPath: path(n))]
        case (let o?, nil): difference.changes = [.init(type: .delete, objectID: id, indexPath: path(o), newIndexPath: nil)]
        case (let o?, let n?) where o != n: difference.changes = [.init(type: .move, objectID: id, indexPath: path(o), newIndexPath: path(n))]
        case (let o?, let n?) where updated: difference.changes = [.init(type: .update, objectID: id, indexPath: path(o), newIndexPath: path(n))]
        default: break
        }
        return difference
    }

    private func objectID(_ key: UInt64) -> ObjectID {
        ObjectID(store: context.store.identifier, entity: context.store.model.entity(ofKey: key)?.name ?? "?", key: key)
    }

    /// The results as keys per section (FR1, FR3).
    private func fetchSections() throws(DocStoreError) -> ResultsDiffer.Sections {
        fetchCount += 1
        let keys = try context.fetchKeys(fetchRequest)
        guard let sectionNameKeyPath else { return [("", keys)] }
        var grouped = fetchRequest
        grouped.propertiesToGroupBy = [sectionNameKeyPath]
        grouped.propertiesToFetch = [FetchProperty(sectionNameKeyPath, as: "section"), .count(as: "count")]
        grouped.fetchLimit = 0
        grouped.fetchOffset = 0
        var out: ResultsDiffer.Sections = []
        var start = 0
        for group in try context.fetchDictionaries(grouped) {
            let n = (group["count"] as? Int) ?? 0
            guard n > 0, start < keys.count else { continue }
            let end = min(keys.count, start + n)
            out.append((Self.sectionName(group["section"] ?? nil), Array(keys[start..<end])))
            start = end
        }
        return out
    }

    /// A section key path value as a section name: its description, "" for nil.
    static func sectionName(_ value: Any?) -> String {
        switch value {
        case nil, is NSNull: ""
        case let s as String: s
        case let some?: "\(some)"
        }
    }
}
