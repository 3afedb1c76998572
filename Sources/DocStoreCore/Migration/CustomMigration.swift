// CustomMigration: what a custom stage's code works with — each object as the old version had
// it beside the object the new version makes of it, and new objects it may insert (splitting an
// attribute or an entity). Objects are streamed: the handler for an entity runs once per
// object while the store is rewritten, so memory does not grow with the store.
//
//   CM1 `old` is read-only and holds the old version's attributes and to-one references by
//       name; `new` starts with the old values carried over (renames applied, new properties at
//       their defaults) and is what gets written.
//   CM2 an object inserted by a handler is written in the same step as the object being
//       migrated; its relationships may name `new` objects (which exist already) or stored ones.
//   CM3 after the handlers, each new object is validated as a save validates it; a problem
//       fails the migration, naming the object, and leaves the store as it was.
//   CM4 a to-many reads as the links the object has: `old` the old version's, `new` those
//       carried over until the handler sets it. Setting a relationship (to-one or to-many, on
//       either side, one-to-one included) changes the graph as a context's edit would: the
//       inverse side follows, and a partner given to another object loses it.

import Foundation

/// The custom part of a migration stage (``MigrationStage/custom(fromVersion:toVersion:migrate:)``).
///
/// ```swift
/// .custom(fromVersion: V1.self, toVersion: V2.self) { migration in
///     migration.forEachObject(of: "Person") { old, new in
///         let parts = (old["name"] as? String ?? "").split(separator: " ", maxSplits: 1)
///         new["firstName"] = parts.first.map(String.init) ?? ""
///         new["lastName"] = parts.count > 1 ? String(parts[1]) : ""
///     }
/// }
/// ```
public final class CustomMigration {
    /// Handlers by entity name (of the new version), in registration order.
    var handlers: [(entity: String, body: (MigrationObject, MigrationObject) throws -> Void)] = []
    /// Set while the copier runs a handler: where inserts go.
    var inserter: ((String) throws -> MigrationObject)?

    init() {}

    /// Runs `body` for every object of `entityName` (its name in the new version), with the
    /// object as the old version had it and the object as it will be written.
    public func forEachObject(of entityName: String, _ body: @escaping (_ old: MigrationObject, _ new: MigrationObject) throws -> Void) {
        handlers.append((entityName, body))
    }

    /// Inserts a new object of `entityName` (of the new version), written with the object being
    /// migrated (CM2). Only inside a `forEachObject` handler.
    ///
    /// - Throws: ``DocStoreError/Code/unknownProperty`` for an unknown or abstract entity, or
    ///   when called outside a handler.
    public func insertObject(forEntityName entityName: String) throws(DocStoreError) -> MigrationObject {
        guard let inserter else {
            throw DocStoreError(.unknownProperty, "insertObject(forEntityName:) works only inside a forEachObject handler", entity: entityName)
        }
        do { return try inserter(entityName) } catch let error as DocStoreError { throw error } catch {
            throw DocStoreError(.storage, "\(error)", entity: entityName)
        }
    }
}

/// An object during a migration: its values by property name (CM1). Attributes take and give
/// their Swift values; to-one relationships an ``ObjectID`` (or another MigrationObject);
/// to-many relationships arrays of them.
public final class MigrationObject {
    /// The entity (of the version this object belongs to).
    let entity: EntityInfo
    let key: UInt64
    let storeID: UUID
    /// The version's model, for the entity names of related objects.
    let model: StoreModel
    var values: [StoredValue]
    /// To-many relationships the handler set, by slot.
    var toMany: [Int: [UInt64]] = [:]
    /// The links a to-many has before the handler sets it (CM4); set by the copier.
    var linkLoader: ((PropertyInfo) throws -> [UInt64])?
    let isReadOnly: Bool
    /// Values set that did not fit (reported with the validation problems).
    var problems: [DocStoreError.Problem] = []

    init(entity: EntityInfo, key: UInt64, storeID: UUID, model: StoreModel, values: [StoredValue], isReadOnly: Bool) {
        self.entity = entity
        self.model = model
        self.key = key
        self.storeID = storeID
        self.values = values
        self.isReadOnly = isReadOnly
    }

    /// The entity's name.
    public var entityName: String { entity.name }

    /// The object's ID (the same in the old and the new version).
    public var objectID: ObjectID { ObjectID(store: storeID, entity: entity.name, key: key) }

    /// The value of the property `key`: an attribute's Swift value, a to-one's ObjectID, a
    /// to-many's [ObjectID]; nil when unset or when the entity has no such property.
    public subscript(key: String) -> Any? {
        get {
            guard let p = entity.property(named: key) else { return nil }
            if p.isToMany { return links(p).compactMap(id) }
            if case .reference(let target) = values[p.slot] { return id(target) }
            return values[p.slot].anyValue
        }
        set {
            guard !isReadOnly else {
                problems.append(.init(entity: "\(entity.name)/\(self.key & PrimaryKey.sequenceMask)", property: key, "the old version's object is read-only"))
                return
            }
            guard let p = entity.property(named: key) else {
                problems.append(.init(entity: entity.name, property: key, "\(entity.name) has no property \"\(key)\" in the new version"))
                return
            }
            switch p.kind {
            case .attribute(let a):
                if let stored = StoredValue.converting(BatchRowReader.unwrapped(newValue), to: a.type) {
                    values[p.slot] = stored
                } else {
                    problems.append(.init(entity: "\(entity.name)/\(self.key & PrimaryKey.sequenceMask)", property: key, "the value \(newValue.map { "\($0)" } ?? "nil") does not fit \(a.type)"))
                }
            case .toOne:
                if let value = BatchRowReader.unwrapped(newValue) {
                    guard let target = Self.reference(value) else {
                        problems.append(.init(entity: "\(entity.name)/\(self.key & PrimaryKey.sequenceMask)", property: key, "a to-one relationship takes an ObjectID or a MigrationObject, not \(value)"))
                        return
                    }
                    values[p.slot] = .reference(target)
                } else {
                    values[p.slot] = .null
                }
            case .toMany:
                let items: [Any]
                switch BatchRowReader.unwrapped(newValue) {
                case nil: items = []
                case let list as [Any]: items = list
                case let set as Set<ObjectID>: items = set.sorted { $0.primaryKey < $1.primaryKey }
                case let other?:
                    problems.append(.init(entity: "\(entity.name)/\(self.key & PrimaryKey.sequenceMask)", property: key, "a to-many relationship takes an array of ObjectIDs or MigrationObjects, not \(other)"))
                    return
                }
                var targets: [UInt64] = []
                var seen = Set<UInt64>()
                for item in items {
                    guard let target = Self.reference(item) else {
                        problems.append(.init(entity: "\(entity.name)/\(self.key & PrimaryKey.sequenceMask)", property: key, "a to-many relationship takes ObjectIDs or MigrationObjects, not \(item)"))
                        return
                    }
                    if seen.insert(target).inserted { targets.append(target) }
                }
                toMany[p.slot] = targets
            }
        }
    }

    /// A to-many's targets: as the handler set them, or as loaded (CM4). A failure to read
    /// them is a problem of the object.
    func links(_ p: PropertyInfo) -> [UInt64] {
        if let set = toMany[p.slot] { return set }
        guard let linkLoader else { return [] }
        do {
            return try linkLoader(p)
        } catch {
            problems.append(.init(entity: "\(entity.name)/\(key & PrimaryKey.sequenceMask)", property: p.name, "its links could not be read: \(error)"))
            return []
        }
    }

    private func id(_ key: UInt64) -> ObjectID? {
        model.entity(ofKey: key).map { ObjectID(store: storeID, entity: $0.name, key: key) }
    }

    static func reference(_ value: Any?) -> UInt64? {
        switch BatchRowReader.unwrapped(value) {
        case let id as ObjectID: id.primaryKey
        case let object as MigrationObject: object.key
        default: nil
        }
    }
}
