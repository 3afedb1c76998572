// Context+Values: reading and writing an object's properties — by key for dynamic code, and the
// typed primitives @Model accessors call. Every write goes through `willChange` first (C2, C3):
// the object is retained by the context and its saved values are kept for rollback.

import Foundation

extension Context {
    // MARK: - Change tracking

    /// Records that `object` is about to change (C2, C3). `record` says whether its record
    /// changes (an attribute or to-one): then its values are loaded and kept as saved first. A
    /// change to a to-many relationship alone does not load the object.
    func willChange(_ object: ManagedObject, record: Bool = true) throws(DocStoreError) {
        if record {
            try fulfill(object)
            changed.noteValuesMayChange(object.key)    // its value index entries, if any
        }
        if observesChanges { noteChange(object.key) }
        if journal != nil { recordForJournal(object) }
        if undo?.open != nil { recordForUndo(object) }
        if object.isDeleted && !isPropagatingDelete {
            throw DocStoreError(.objectDeleted, "\(object) is deleted; it cannot be changed", entity: object.entityInfo?.name)
        }
        if object.isInvalidated {
            throw DocStoreError(.objectDeleted, "\(object)'s row is gone from the store; it cannot be changed", entity: object.entityInfo?.name)
        }
        // An inserted object is in `changed` from its insert on, and has no committed values.
        if object.isInserted { return }
        if record && committed[object.key] == nil { committed[object.key] = object.values }
        guard changed[object.key] == nil else { return }
        changed[object.key] = object
        object.flags.insert(.updated)
    }

    // MARK: - By key

    func value(of object: ManagedObject, property p: PropertyInfo) throws(DocStoreError) -> Any? {
        try fulfill(object)
        switch p.kind {
        case .attribute:
            return object.values[p.slot].anyValue
        case .toOne:
            guard !object.isNulled(p.slot), case .reference(let key) = object.loadedValue(p.slot) else { return nil }
            return try materialize(key)
        case .toMany(let r):
            let objects = try memberObjects(of: object, p)
            return r.isOrdered ? objects as Any : Set(objects) as Any
        }
    }

    func setValue(_ value: Any?, of object: ManagedObject, property p: PropertyInfo) throws(DocStoreError) {
        try undoable { () throws(DocStoreError) in try setValueNow(value, of: object, property: p) }
    }

    private func setValueNow(_ value: Any?, of object: ManagedObject, property p: PropertyInfo) throws(DocStoreError) {
        switch p.kind {
        case .attribute(let a):
            guard let stored = StoredValue.converting(value, to: a.type) else {
                throw DocStoreError(.typeMismatch, "the value \(describe(value)) does not fit \(a.type) attribute \(p.name)", entity: object.entityInfo?.name, property: p.name)
            }
            try setStored(stored, of: object, slot: p.slot)
        case .toOne:
            let target: ManagedObject?
            switch value {
            case nil: target = nil
            case let o as ManagedObject: target = o
            case let o as ManagedObject?: target = o
            default:
                throw DocStoreError(.typeMismatch, "a to-one relationship takes an object or nil, not \(describe(value))", entity: object.entityInfo?.name, property: p.name)
            }
            try setToOne(target, of: object, p)
        case .toMany:
            let targets: [ManagedObject]
            switch value {
            case nil: targets = []
            case let set as Set<ManagedObject>: targets = Array(set)
            case let list as [ManagedObject]: targets = list
            default:
                throw DocStoreError(.typeMismatch, "a to-many relationship takes a Set or an array of objects, not \(describe(value))", entity: object.entityInfo?.name, property: p.name)
            }
            try setToMany(targets, of: object, p)
        }
    }

    // MARK: - Typed primitives

    /// Sets an attribute's stored value.
    func setStored(_ value: StoredValue, of object: ManagedObject, slot: Int) throws(DocStoreError) {
        try undoable { () throws(DocStoreError) in try setStoredNow(value, of: object, slot: slot) }
    }

    private func setStoredNow(_ value: StoredValue, of object: ManagedObject, slot: Int) throws(DocStoreError) {
        try fulfill(object)
        if object.values[slot] == value { return }
        try willChange(object)
        object.values[slot] = value
        object.flags.insert(.recordChanged)
        object.rejectedValues?.removeValue(forKey: object.entityInfo?.properties[slot].name ?? "")
    }

    /// An attribute's stored value (loading the object first).
    func stored(of object: ManagedObject, slot: Int) throws(DocStoreError) -> StoredValue {
        try fulfill(object)
        return object.loadedValue(slot)
    }

    // MARK: - Changed and committed values

    func changedValues(of object: ManagedObject) -> [String: Any] {
        guard let entity = object.entityInfo, object.hasChanges else { return [:] }
        var out: [String: Any] = [:]
        let saved = committed[object.key]
        for p in entity.properties {
            switch p.kind {
            case .attribute, .toOne:
                if object.isInserted || object.isNulled(p.slot) || saved.map({ $0[p.slot] != object.values[p.slot] }) == true {
                    out[p.name] = (try? value(of: object, property: p)) ?? NSNull()
                }
            case .toMany:
                if let state = object.toMany?[p.slot], state.hasChanges {
                    out[p.name] = (try? value(of: object, property: p)) ?? NSNull()
                }
            }
        }
        return out
    }

    func committedValues(of object: ManagedObject, keys: [String]?) -> [String: Any] {
        guard let entity = object.entityInfo, !object.isInserted else { return [:] }
        try? fulfill(object)
        let saved = committed[object.key] ?? object.values
        var out: [String: Any] = [:]
        for p in entity.properties where !p.isToMany && (keys?.contains(p.name) ?? true) {
            switch saved[p.slot] {
            case .null: out[p.name] = NSNull()
            case .reference(let key): out[p.name] = (try? materialize(key)) ?? NSNull()
            case let v: out[p.name] = v.anyValue ?? NSNull()
            }
        }
        return out
    }
}

/// A value and its type, for error messages.
func describe(_ value: Any?) -> String {
    guard let value else { return "nil" }
    return "\(value) (\(type(of: value)))"
}
