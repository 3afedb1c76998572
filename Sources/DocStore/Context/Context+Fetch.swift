// Context+Fetch: every object of an entity, its sub-entities included (entity inheritance: a
// fetch of the parent returns the children too). Queries with predicates and sorting come with
// FetchRequest (issue #4); this is the scan they build on.
//
// A fetch reads each record once, during the scan, and fills the objects it makes (no second
// lookup per object). Objects already in the context keep their values (and their unsaved
// changes); objects inserted in the context and not saved are included, deleted ones are not.

import Foundation
internal import DocStoreEngine

extension Context {
    /// Every object of `type`'s entity and its sub-entities, in primary-key order per entity,
    /// then the ones inserted and not saved yet.
    ///
    /// ```swift
    /// let notes = try context.fetch(Note.self)
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/unknownProperty`` if the class is not in the store's schema;
    ///   ``DocStoreError/Code/storage``, ``DocStoreError/Code/corrupt``.
    public func fetch<T: ManagedObject>(_ type: T.Type) throws(DocStoreError) -> [T] {
        let name = store.model.entity(ofClass: type)?.name ?? _typeName(type, qualified: false)
        return try fetch(entityName: name).compactMap { $0 as? T }
    }

    /// Every object of the entity `entityName` and its sub-entities.
    public func fetch(entityName: String) throws(DocStoreError) -> [ManagedObject] {
        guard let entity = store.model.entity(named: entityName) else {
            throw DocStoreError(.unknownProperty, "the schema has no entity \"\(entityName)\"", entity: entityName)
        }
        var out: [ManagedObject] = []
        // Objects are made and filled as the cursor passes their records: no copy of the rows.
        try store.read { txn in
            for id in entity.kindIDs.sorted() {
                guard let kind = store.model.entity(id: id) else { continue }
                try txn.forEachRecord(of: kind) { key, bytes in
                    let object = try materialize(key)
                    if object.isFault, let info = object.entityInfo {
                        try load(object, info, from: bytes)
                        object.awakeFromFetch()
                    }
                    if !object.isDeleted { out.append(object) }
                }
            }
        }
        for object in changed.values.sorted(by: { $0.key < $1.key })
        where object.isInserted && !object.isDeleted   // not stored yet, so not in the scan
            && object.entityInfo.map({ entity.kindIDs.contains($0.id) }) == true {
            out.append(object)
        }
        return out
    }
}
