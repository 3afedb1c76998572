// BatchRow: one object of a batch, resolved from what the app gave — values by slot and each
// to-many relationship's targets by key — and checked as a save checks an object, with every
// problem named by row and property.
//
//   BR1 a property name the entity does not have, a value that does not fit its attribute, an
//       object ID of another store or of the wrong entity, or a target that is not stored is a
//       problem of the row; nothing is guessed.
//   BR2 values wrapped in an Optional inside `Any` (`row["body"] = text` with `text: String?`)
//       count as the value they wrap; nil and NSNull are nil.
//   BR3 a to-many's targets are kept once each, in the order given 

import Foundation

/// An object of a batch: its values by slot, and its to-many relationships' targets.
struct BatchRow {
    var values: [StoredValue]
    var toMany: [(slot: Int, targets: [UInt64])] = []
}

/// A relationship target as a row names it: a stored object's key, or what is wrong.
enum Target {
    case key(UInt64)
    case problem(String)
}

/// Resolves rows for one entity of one store.
struct BatchRowReader {
    let entity: EntityInfo
    let model: StoreModel
    let storeID: UUID

    /// What `value` wraps, when it is an Optional inside `Any` (BR2); nil for nil and NSNull.
    static func unwrapped(_ value: Any?) -> Any? {
        guard let value else { return nil }
        if value is NSNull { return nil }
        let mirror = Mirror(reflecting: value)
        if mirror.displayStyle == .optional {
            return mirror.children.first.flatMap { unwrapped($0.value) }
        }
        return value
    }

    /// `row` with `value` given to the property `name`; problems are appended to `problems`.
    func set(_ name: String, _ value: Any?, in row: inout BatchRow, rowNumber: Int, writer: BatchWriter,
             problems: inout [DocStoreError.Problem]) throws {
        try set(entity.property(named: name), name, value, in: &row, rowNumber: rowNumber, writer: writer, problems: &problems)
    }

    /// `set(_:_:in:…)` with the property of `name` already looked up (nil: the entity has none).
    func set(_ property: PropertyInfo?, _ name: String, _ value: Any?, in row: inout BatchRow, rowNumber: Int, writer: BatchWriter,
             problems: inout [DocStoreError.Problem]) throws {
        func problem(_ message: String) {
            problems.append(.init(entity: "\(entity.name) row \(rowNumber)", property: name, message))
        }
        guard let p = property else {
            problem("\(entity.name) has no property \"\(name)\"")
            return
        }
        switch p.kind {
        case .attribute(let a):
            // The conversion sees through an Optional in `Any` on its own; only a value it
            // refuses is checked for being nil (BR2) — reflection costs more than the cast.
            if let value, let stored = StoredValue.converting(value, to: a.type) {
                row.values[p.slot] = stored
            } else if let unwrapped = Self.unwrapped(value) {
                problem("the value \(unwrapped) does not fit \(a.type) attribute \(name)")
            } else {
                row.values[p.slot] = .null
            }
        case .toOne:
            if let id = value as? ObjectID {
                switch try target(id, for: p, writer: writer) {
                case .key(let key): row.values[p.slot] = .reference(key)
                case .problem(let message): problem(message)
                }
                return
            }
            guard let value = Self.unwrapped(value) else {
                row.values[p.slot] = .null
                return
            }
            switch try target(value, for: p, writer: writer) {
            case .key(let key): row.values[p.slot] = .reference(key)
            case .problem(let message): problem(message)
            }
        case .toMany:
            /// The targets of `items`, once each in their order (BR3), as `p`'s.
            func resolveAll<C: Collection>(_ items: C, _ resolve: (C.Element) throws -> Target) rethrows {
                var keys: [UInt64] = []
                keys.reserveCapacity(items.count)
                var seen = items.count > 16 ? Set<UInt64>() : nil
                for item in items {
                    switch try resolve(item) {
                    case .key(let key):
                        let isNew = seen.map { _ in seen?.insert(key).inserted ?? true } ?? !keys.contains(key)
                        if isNew { keys.append(key) }
                    case .problem(let message): problem(message)
                    }
                }
                row.toMany.removeAll { $0.slot == p.slot }
                row.toMany.append((p.slot, keys))
            }
            // An array of IDs, the usual form, is resolved as it is: converted to [Any] first,
            // each ID was boxed and cast back.
            if let ids = value as? [ObjectID] {
                return try resolveAll(ids) { try target($0, for: p, writer: writer) }
            }
            let items: [Any]
            switch value {
            case let objects as [ManagedObject]: items = objects
            case let set as Set<ObjectID>: items = set.sorted { $0.primaryKey < $1.primaryKey }
            case let set as Set<ManagedObject>: items = set.sorted { $0.key < $1.key }
            case let list as [Any]: items = list
            case let set as Set<AnyHashable>: items = Array(set)
            default:
                guard let value = Self.unwrapped(value) else {
                    row.toMany.removeAll { $0.slot == p.slot }
                    return
                }
                problem("a to-many relationship takes an array or set of object IDs or objects, not \(value)")
                return
            }
            try resolveAll(items) { try target($0, for: p, writer: writer) }
        }
    }

    /// The stored object `value` names for the relationship `p` (BR1).
    func target(_ value: Any, for p: PropertyInfo, writer: BatchWriter) throws -> Target {
        let key: UInt64
        switch value as? ObjectID ?? Self.unwrapped(value) {
        case let id as ObjectID:
            return try target(id, for: p, writer: writer)
        case let object as ManagedObject:
            guard object.key != 0, object.context?.store.identifier == storeID else {
                return .problem("\(object) is not an object of this store (insert and save it first)")
            }
            key = object.key
        default:
            return .problem("a relationship takes object IDs or objects, not \(value)")
        }
        return try target(key: key, for: p, writer: writer)
    }

    /// The stored object `id` names for the relationship `p` (BR1).
    func target(_ id: ObjectID, for p: PropertyInfo, writer: BatchWriter) throws -> Target {
        guard id.storeIdentifier == storeID else { return .problem("\(id) belongs to another store") }
        return try target(key: id.primaryKey, for: p, writer: writer)
    }

    /// `key` as a target of `p`, when it is an object of the destination entity that is stored.
    private func target(key: UInt64, for p: PropertyInfo, writer: BatchWriter) throws -> Target {
        let destination = model.entities[p.destination]
        guard destination.kindIDs.contains(PrimaryKey.entity(of: key)) else {
            return .problem("\(p.name) leads to \(destination.name), not to \(model.entity(ofKey: key)?.name ?? "entity \(PrimaryKey.entity(of: key))")")
        }
        guard try writer.exists(key) else {
            return .problem("\(model.entity(ofKey: key)?.name ?? "?")/\(key & PrimaryKey.sequenceMask) is not in the store (saved objects only)")
        }
        return .key(key)
    }

    /// The save-time checks of an object's values and to-many counts (Context+Save V1).
    func validate(_ row: BatchRow, rowNumber: Int, problems: inout [DocStoreError.Problem]) {
        for p in entity.properties {
            func problem(_ message: String) {
                problems.append(.init(entity: "\(entity.name) row \(rowNumber)", property: p.name, message))
            }
            if let rules = p.rules {
                if let message = Context.check(row.values, p.slot, against: rules) { problem(message) }
            } else if p.requiresTarget {
                if row.values[p.slot].isNull { problem(Context.missingTarget) }
            } else if let bounds = p.countBounds {
                let count = row.toMany.first { $0.slot == p.slot }?.targets.count ?? 0
                if let message = Context.check(count: count, against: bounds) { problem(message) }
            }
        }
    }
}

/// The properties a batch's rows name, by the name's position in the row. Rows made alike (a
/// handler filling one reused dictionary) list their names in the same order, so each name is
/// compared with the last row's name at its position — equal small strings compare by their
/// bits — rather than hashed for the entity's dictionary of names (SipHash over every name of
/// every row was about a twelfth of a batch insert from dictionaries).
struct RowNames {
    private var names: [String] = []
    private var properties: [PropertyInfo?] = []

    /// The property named `name`, the `position`-th name of its row.
    mutating func property(_ name: String, at position: Int, in entity: EntityInfo) -> PropertyInfo? {
        if position < names.count, names[position] == name { return properties[position] }
        let found = entity.property(named: name)
        if position < names.count {
            names[position] = name
            properties[position] = found
        } else if position == names.count {
            names.append(name)
            properties.append(found)
        }
        return found
    }
}
