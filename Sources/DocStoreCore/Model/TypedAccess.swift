// TypedAccess: what the accessors @Model generates call — typed reads and writes of a slot,
// with Observation and change tracking — and the pieces @Model builds an entity description from.
// Overloads on the property's type pick the kind: a PersistentValue is an attribute, another
// Codable type a document attribute, `T?` / `Set<T>` / `[T]` of a ManagedObject a to-one /
// to-many / ordered to-many relationship.
//
// Reads never trap: an object whose values cannot be loaded (its row is gone, a storage error)
// reads its last known values, or the type's placeholder (PersistentValue.placeholder) when it
// has none. A write that cannot be applied (a deleted object, an object of another context) is
// recorded on the object and reported by the next save.
//
// Observation: an object's registrar is made on the first read of any property (in a box of its
// own, ObservationBox, read in place); writes notify only an object that has one, since an
// object never read cannot be observed.

import Foundation
import Observation

// MARK: - Pending values of phase-one initialization

/// One value given to a persisted property before the object was fully initialized.
public enum _$PendingValue {
    case stored(StoredValue)
    case objects([ManagedObject])
}

/// The values a model class's properties received during phase-one initialization.
public struct _$PendingValues {
    var items: [(Int, _$PendingValue)] = []
    /// Made while a fault is made: its initial values are not kept (the record's replace them).
    /// Asked once per class level here rather than once per property in `_$record`.
    let skips: Bool
    public init() { skips = FaultMaking.isActive }

    /// Keeps one value. The first makes room for eight: a model's properties each record their
    /// default, and growing the list one value at a time made four arrays for a note's five.
    mutating func append(_ index: Int, _ value: _$PendingValue) {
        if items.isEmpty { items.reserveCapacity(8) }
        items.append((index, value))
    }
}

public func _$record<V: PersistentValue>(_ pending: inout _$PendingValues, _ index: Int, _ value: V) {
    if pending.skips { return }
    pending.append(index, .stored(value.storedValue))
}

public func _$record<V: Codable>(_ pending: inout _$PendingValues, _ index: Int, _ value: V) {
    if pending.skips { return }
    pending.append(index, .stored(documentValue(value)))
}

public func _$record<V: ManagedObject>(_ pending: inout _$PendingValues, _ index: Int, _ value: V?) {
    if pending.skips { return }
    guard let value else { return }
    pending.append(index, .objects([value]))
}

public func _$record<V: ManagedObject>(_ pending: inout _$PendingValues, _ index: Int, _ value: Set<V>) {
    if pending.skips { return }
    if !value.isEmpty { pending.append(index, .objects(Array(value))) }
}

public func _$record<V: ManagedObject>(_ pending: inout _$PendingValues, _ index: Int, _ value: [V]) {
    if pending.skips { return }
    if !value.isEmpty { pending.append(index, .objects(value)) }
}

/// A value for a fault's phase-one initialization; the stored values replace it.
public func _$placeholder<V: PersistentValue>() -> V { V.placeholder }

@available(*, unavailable, message: "give this Codable property a default value: DocStore needs one to make faults")
public func _$placeholder<V: Codable>() -> V {
    // Unavailable: no call can be compiled, so this never runs.
    fatalError("unavailable")
}

// MARK: - Documents (Codable values)

func documentValue<V: Encodable>(_ value: V) -> StoredValue {
    guard let data = try? JSONEncoder.docStore.encode(value) else { return .null }
    return data == Data("null".utf8) ? .null : .document(data)
}

func decodeDocument<V: Decodable>(_ stored: StoredValue, as type: V.Type) -> V? {
    switch stored {
    case .document(let data): return try? JSONDecoder().decode(V.self, from: data)
    case .null: return try? JSONDecoder().decode(V.self, from: Data("null".utf8))
    default: return nil
    }
}

// MARK: - Observation

/// An object's observation registrar, in a box of its own: the registrar's layout is the
/// Observation library's (resilient), so reading it from an optional stored property copied it
/// through its value witnesses on every property read — a tenth of reading every attribute of
/// 100 000 notes. A `let` in a final class is used where it is.
@usableFromInline
final class ObservationBox {
    @usableFromInline let registrar = ObservationRegistrar()
    @usableFromInline init() {}
}

/// Tells Observation that `keyPath` of `object` is read (the box is made on the first read).
@inlinable @inline(__always)
func observeAccess<Root: ManagedObject, V>(_ object: Root, _ keyPath: KeyPath<Root, V>) {
    if let made = object.observationReference {
        made._withUnsafeGuaranteedRef { $0.registrar.access(object, keyPath: keyPath) }
    } else {
        let box = ObservationBox()
        object.observation = box
        box.registrar.access(object, keyPath: keyPath)
    }
}

extension ManagedObject {
    /// The registrar, if the object was ever read (only then can it be observed).
    var registrar: ObservationRegistrar? { observation?.registrar }
}

// MARK: - Reads

/// The stored value of a slot: loaded if the object is a fault; the last known value otherwise.
/// A fault whose context is gone has no value to give: see `unloadedValueWithoutContext`.
@usableFromInline
func storedValue(_ object: ManagedObject, _ slot: Int) -> StoredValue {
    if !object.flags.contains(.fault), object.record != nil || slot < object.decodedValues.count { return object.loadedValue(slot) }
    if object.key != 0 {
        guard let context = object.context else { unloadedValueWithoutContext(object, slot) }
        if let v = try? context.stored(of: object, slot: slot) { return v }
    }
    return slot < object.values.count ? object.values[slot] : .null
}

/// A typed property read of an object that was never loaded (a fault) and whose context is
/// gone: there is no value to return, and a default would look like real data (a title of "").
/// As Core Data's "could not fulfill a fault", this stops the program, naming the object and
/// the property — a mistake in the app's code (the context was not kept while its objects were
/// used, README § Contexts and memory), never something a store's contents or a user's input
/// can cause. `value(forKey:)` throws `wrongContext` instead.
func unloadedValueWithoutContext(_ object: ManagedObject, _ slot: Int) -> Never {
    let property = object.entityInfo.flatMap { slot < $0.properties.count ? $0.properties[slot].name : nil } ?? "slot \(slot)"
    fatalError("\(object)'s context is gone and its \(property) was never loaded: keep the Context while you use its objects "
        + "(README § Contexts and memory), or fetch the object again by its objectID from a live context")
}

/// Inlinable, so the accessors @Model generates are specialized for their types in the app's
/// module (no generic metadata at run time on the read path).
@inlinable
public func _$read<Root: ManagedObject, V: PersistentValue>(
    _ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, V>, default fallback: @autoclosure () -> V = V.placeholder
) -> V {
    observeAccess(object, keyPath)
    return V(storedValue: storedValue(object, slot)) ?? fallback()
}

/// A Codable property always has a fallback (@Model requires a default value, or the property
/// is optional or a collection): a document that no longer decodes reads as it.
public func _$read<Root: ManagedObject, V: Codable>(
    _ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, V>, default fallback: @autoclosure () -> V
) -> V {
    observeAccess(object, keyPath)
    return decodeDocument(storedValue(object, slot), as: V.self) ?? fallback()
}

public func _$read<Root: ManagedObject, V: ManagedObject>(
    _ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, V?>, default fallback: @autoclosure () -> V? = nil
) -> V? {
    observeAccess(object, keyPath)
    guard let context = object.context, object.key != 0 else {
        return object.unattachedLinks?[slot]?.first as? V
    }
    guard !object.isNulled(slot), case .reference(let key) = storedValue(object, slot) else { return nil }
    return (try? context.materialize(key)) as? V
}

/// Inlinable as the attribute read: in the app's module the set is built for its concrete
/// element type (an unspecialized `Set<V>.insert` looked up generic metadata for every member,
/// and hashed through witnesses).
@inlinable
public func _$read<Root: ManagedObject, V: ManagedObject>(
    _ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, Set<V>>, default fallback: @autoclosure () -> Set<V> = []
) -> Set<V> {
    observeAccess(object, keyPath)
    let members = _$members(object, slot)
    var set = Set<V>(minimumCapacity: members.count)
    for member in members {
        if let v = member as? V { set.insert(v) }
    }
    return set
}

@inlinable
public func _$read<Root: ManagedObject, V: ManagedObject>(
    _ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, [V]>, default fallback: @autoclosure () -> [V] = []
) -> [V] {
    observeAccess(object, keyPath)
    let members = _$members(object, slot)
    var array: [V] = []
    array.reserveCapacity(members.count)
    for member in members {
        if let v = member as? V { array.append(v) }
    }
    return array
}

/// The members of the to-many at `slot` (of the context, or of an object not inserted yet),
/// in their order; none when they cannot be read (the typed reads never trap).
@usableFromInline
func _$members(_ object: ManagedObject, _ slot: Int) -> [ManagedObject] {
    if let context = object.context, object.key != 0, let p = object.entityInfo?.properties[slot] {
        return (try? context.memberObjects(of: object, p)) ?? []
    }
    return object.unattachedLinks?[slot] ?? []
}

// MARK: - Writes

public func _$write<Root: ManagedObject, V: PersistentValue>(_ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, V>, _ value: V) {
    writeStored(object, slot, keyPath, value.storedValue)
}

public func _$write<Root: ManagedObject, V: Codable>(_ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, V>, _ value: V) {
    writeStored(object, slot, keyPath, documentValue(value))
}

public func _$write<Root: ManagedObject, V: ManagedObject>(_ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, V?>, _ value: V?) {
    writeObjects(object, slot, keyPath, .one(value))
}

public func _$write<Root: ManagedObject, V: ManagedObject>(_ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, Set<V>>, _ value: Set<V>) {
    writeObjects(object, slot, keyPath, .many(managedObjects(value)))
}

public func _$write<Root: ManagedObject, V: ManagedObject>(_ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, [V]>, _ value: [V]) {
    writeObjects(object, slot, keyPath, .many(managedObjects(value)))
}

/// What a relationship's setter was given: a to-one's object (no array made for it, as a
/// note's folder is set once per note) or a to-many's objects.
private enum LinkTargets {
    case one(ManagedObject?)
    case many([ManagedObject])

    var all: [ManagedObject] {
        switch self {
        case .one(let object): object.map { [$0] } ?? []
        case .many(let objects): objects
        }
    }
}

/// The objects of a typed collection as `[ManagedObject]`, made in one pass. (`Array(set)` and
/// then converting `[V]` to `[ManagedObject]` copied twice and cast each element at run time:
/// a sixth of setting a new note's tags.)
private func managedObjects<C: Collection>(_ value: C) -> [ManagedObject] where C.Element: ManagedObject {
    var out: [ManagedObject] = []
    out.reserveCapacity(value.count)
    for object in value { out.append(object) }
    return out
}

/// Tells observers of `keyPath` that it changed (for @Model's `_$observedValueChanged`): only
/// an object whose registrar exists can have observers.
public func _$notifyObservers<Root: ManagedObject, V>(_ object: Root, _ keyPath: KeyPath<Root, V>) {
    object.registrar?.withMutation(of: object, keyPath: keyPath) {}
}

/// Runs `mutation`, telling observers of `keyPath` if anyone can be observing: an object whose
/// registrar was never made has never been read, so no observation can be tracking it.
private func mutate<Root: ManagedObject, V>(_ object: Root, _ keyPath: KeyPath<Root, V>, _ mutation: () -> Void) {
    if let registrar = object.registrar {
        registrar.withMutation(of: object, keyPath: keyPath, mutation)
    } else {
        mutation()
    }
}

private func writeStored<Root: ManagedObject, V>(_ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, V>, _ value: StoredValue) {
    mutate(object, keyPath) {
        guard object.key != 0 else {   // not inserted yet: kept until insert
            if slot >= object.values.count { object.values += [StoredValue](repeating: .null, count: slot + 1 - object.values.count) }
            object.values[slot] = value
            return
        }
        guard let context = object.context else { return object.rejectContextGone(slot) }
        do throws(DocStoreError) { try context.setStored(value, of: object, slot: slot) } catch {
            object.reject(slot, error)
        }
    }
}

private func writeObjects<Root: ManagedObject, V>(_ object: Root, _ slot: Int, _ keyPath: KeyPath<Root, V>, _ targets: LinkTargets) {
    mutate(object, keyPath) {
        guard object.key != 0 else {   // not inserted yet: both sides kept until insert
            object.setUnattachedLinks(slot, targets.all)
            return
        }
        guard let context = object.context, let p = object.entityInfo?.properties[slot] else { return object.rejectContextGone(slot) }
        do throws(DocStoreError) {
            try context.undoable { () throws(DocStoreError) in
                switch targets {
                case .one(let target):
                    if let target, target.isUnattached { try context.insert(target) }
                    try context.setToOne(target, of: object, p)
                case .many(let targets):
                    for target in targets where target.isUnattached { try context.insert(target) }
                    try context.setToMany(targets, of: object, p)
                }
            }
        } catch {
            object.reject(slot, error)
        }
    }
}

extension ManagedObject {
    /// Records a write that could not be applied; the next save reports it.
    final func reject(_ slot: Int, _ error: DocStoreError) {
        let name = entityInfo.flatMap { slot < $0.properties.count ? $0.properties[slot].name : nil } ?? "slot \(slot)"
        var rejected = rejectedValues ?? [:]
        rejected[name] = error.message
        rejectedValues = rejected
    }

    /// A write to an object whose context is gone (released, reset, or the object deleted and
    /// saved): nothing changes; it is recorded as refused, as ``setValue(_:forKey:)`` would throw.
    final func rejectContextGone(_ slot: Int) {
        reject(slot, DocStoreError(.wrongContext, "the object's context is gone", entity: entityInfo?.name))
    }
}

// MARK: - Entity descriptions

/// One property of a model class, as @Model describes it.
public enum _$PropertyDescription {
    case attribute(AttributeDescription)
    case relationship(RelationshipDescription)
}

public func _$entity(_ name: String, parent: String?, isAbstract: Bool, _ properties: [_$PropertyDescription],
                     indexes: [IndexDescription] = [], originalName: String? = nil) -> EntityDescription {
    var entity = EntityDescription(name: name, parent: parent, isAbstract: isAbstract, indexes: indexes)
    entity.originalName = originalName
    for p in properties {
        switch p {
        case .attribute(let a): entity.attributes.append(a)
        case .relationship(let r): entity.relationships.append(r)
        }
    }
    return entity
}

public func _$property<Root, V: PersistentValue>(
    _ property: (Root) -> V, _ name: String, defaultValue: StoredValue? = nil,
    attribute options: [AttributeOption] = [], relationship: _$RelationshipOptions? = nil
) -> _$PropertyDescription {
    var a = AttributeDescription(name: name, type: V.attributeType, isOptional: V.isOptional)
    // A default that already fits is kept as it is (converting goes through `Any`, whose casts
    // cost a new process's first open); one of another width or kind is converted.
    if let defaultValue, let converted = defaultValue.fits(a.type) ? defaultValue : StoredValue.converting(defaultValue.anyValue, to: a.type) {
        a.defaultValue = converted
    }
    for option in options { option.apply(&a) }
    return .attribute(a)
}

public func _$property<Root, V: Codable>(
    _ property: (Root) -> V, _ name: String, defaultValue: StoredValue? = nil,
    attribute options: [AttributeOption] = [], relationship: _$RelationshipOptions? = nil
) -> _$PropertyDescription {
    let optional = V.self as? any OptionalType.Type
    let typeName = optional?.wrappedTypeName ?? _typeName(V.self, qualified: false)
    var a = AttributeDescription(name: name, type: .codable(typeName: typeName), isOptional: optional != nil)
    for option in options { option.apply(&a) }
    return .attribute(a)
}

/// Lets a Codable attribute's description, and a cast in a `#Predicate`, see through `Optional`.
protocol OptionalType {
    static var wrappedTypeName: String { get }
    static var wrappedType: Any.Type { get }
}

extension Optional: OptionalType {
    static var wrappedTypeName: String { _typeName(Wrapped.self, qualified: false) }
    static var wrappedType: Any.Type { Wrapped.self }
}

public func _$property<Root, V: ManagedObject>(
    _ property: (Root) -> V?, _ name: String, defaultValue: StoredValue? = nil,
    attribute options: [AttributeOption] = [], relationship: _$RelationshipOptions? = nil
) -> _$PropertyDescription {
    relationshipDescription(name, V.self, relationship, toMany: false, ordered: false)
}

public func _$property<Root, V: ManagedObject>(
    _ property: (Root) -> Set<V>, _ name: String, defaultValue: StoredValue? = nil,
    attribute options: [AttributeOption] = [], relationship: _$RelationshipOptions? = nil
) -> _$PropertyDescription {
    relationshipDescription(name, V.self, relationship, toMany: true, ordered: false)
}

public func _$property<Root, V: ManagedObject>(
    _ property: (Root) -> [V], _ name: String, defaultValue: StoredValue? = nil,
    attribute options: [AttributeOption] = [], relationship: _$RelationshipOptions? = nil
) -> _$PropertyDescription {
    relationshipDescription(name, V.self, relationship, toMany: true, ordered: true)
}

private func relationshipDescription(_ name: String, _ destination: ManagedObject.Type, _ options: _$RelationshipOptions?,
                                     toMany: Bool, ordered: Bool) -> _$PropertyDescription {
    // @Model names an entity after its class (asking the class for its description here would
    // recurse through the inverse relationship).
    let entityName = _typeName(destination, qualified: false)
    var r = RelationshipDescription(name: name, destination: entityName, inverse: options?.inverseName, isToMany: toMany, isOrdered: ordered)
    if let options {
        r.deleteRule = options.deleteRule
        r.minCount = options.minimumCount
        r.maxCount = options.maximumCount
        r.originalName = options.originalName
    }
    return .relationship(r)
}

/// The key paths every model class has, rooted at `R` (the start of `_$keyPaths<Class>`, which
/// @Model generates): `objectID`, which a predicate may compare to stand for the object.
public func _$baseKeyPaths<R: ManagedObject>(_ root: R.Type) -> [AnyKeyPath: String] {
    [\R.objectID: "objectID"]
}
