// ManagedObject: an object of an entity, owned by one context — Core Data's NSManagedObject.
// Model classes subclass it (with @Model, which generates typed accessors over the slots below);
// objects of entities without a class are plain ManagedObjects used by key (`object["title"]`).
//
// State, all changed only by the owning Context:
//   values    by slot (EntityInfo); empty while the object is a fault. To-one relationships hold
//             `.reference(key)`; to-many relationships live in `toMany`, loaded lazily. A fetched
//             object may hold its checked record instead (`record`): typed reads decode one field
//             from it (going on from `recordPosition`, where the last read stopped, when the
//             field lies past it), and the first use of `values` decodes it whole and drops it.
//   flags     fault / inserted / updated / deleted / invalidated.
//   readAhead a fault's record read ahead (Context+Relationships R5); only a fault has one.
// Ownership runs one way, as in Core Data: the app keeps its contexts, a context keeps its
// changed objects (and the objects its undo stack and last prefetch name), and an object holds
// its context unretained (through the context's ContextLink, which the context's deinit clears)
// — so no object keeps a context alive and a context dropped with unsaved
// changes is freed with them. The context holds unchanged objects unretained, so objects the
// app no longer references are released; relationships hold keys, never objects, so two
// related objects form no retain cycle. An object that outlives its context reads its last
// known values and refuses changes (`.wrongContext`).

import Foundation
import Observation

/// The life-cycle flags of a managed object.
struct ObjectFlags: OptionSet, Sendable {
    let rawValue: UInt8
    static let fault = ObjectFlags(rawValue: 1)
    static let inserted = ObjectFlags(rawValue: 2)
    static let updated = ObjectFlags(rawValue: 4)
    static let deleted = ObjectFlags(rawValue: 8)
    /// The object's row is gone (deleted elsewhere, or its insert rolled back): reads return the
    /// last known values; saving or refreshing it is an error.
    static let invalidated = ObjectFlags(rawValue: 16)
    /// Its record must be written at save (an attribute or to-one relationship changed).
    static let recordChanged = ObjectFlags(rawValue: 32)
}

/// A fault's record, read before the fault fired, and the store's row-cache generation noted
/// before that read (`Context.fulfill` takes it only if the generation is still the same).
struct ReadAheadRecord {
    let record: [UInt8]
    let generation: UInt64
}

/// Passed to ``ManagedObject/init(_$fault:)`` when a context makes an object for a stored row.
/// Not for use outside DocStore and the code `@Model` generates.
public struct _$FaultToken {
    let entity: EntityInfo
    let key: UInt64
    /// The context's link, which the object keeps (`contextLink`): handed over as it is, not
    /// found again from a retained context for every object a fetch makes.
    let link: ContextLink

    init(entity: EntityInfo, key: UInt64, context: Context) {
        self.entity = entity
        self.key = key
        self.link = context.link
    }
}

/// An object of an entity, living in a ``Context``.
///
/// Use a subclass declared with `@Model` for typed properties, or a plain `ManagedObject` by key:
///
/// ```swift
/// let note = try context.insertObject(forEntityName: "Note")
/// note["title"] = "Groceries"
/// print(note["title"] as? String ?? "")
/// try context.save()
/// ```
///
/// Reading a deleted or invalidated object never traps: it returns the last values it had
/// (`isDeleted` and ``isInvalidated`` tell), and ``value(forKey:)`` throws a typed error only for
/// a property the entity does not have.
///
/// ## Topics
/// - ``objectID``
/// - ``value(forKey:)``
/// - ``setValue(_:forKey:)``
/// - ``isFault``
/// - ``changedValues()``
/// - ``committedValues(forKeys:)``
open class ManagedObject: Hashable, CustomStringConvertible, Observable {
    // Exclusivity is checked statically only: a ManagedObject is not Sendable, so these are
    // touched from one isolation domain, and only DocStore's own code touches them, never with
    // an access open across a call out (observers and lifecycle hooks run between accesses).
    // The dynamic check on every read and write was about a twentieth of an insert's time.
    @exclusivity(unchecked) final var entityInfo: EntityInfo? {
        didSet { entityReference = entityInfo.map(Unmanaged.passUnretained) }
    }
    /// `entityInfo`, unretained, for `loadedValue` to reach it without a retain and a release
    /// per property read. Safe: `entityInfo` holds the same object strongly, and is not set
    /// while a read runs (the decode it calls does not touch this object).
    @exclusivity(unchecked) private final var entityReference: Unmanaged<EntityInfo>?
    @exclusivity(unchecked) final var key: UInt64 = 0
    /// The context's link (ContextLink): held strongly, it reaches the context without
    /// keeping it alive — the app owns its contexts (see the file comment).
    @exclusivity(unchecked) final var contextLink: ContextLink?
    @exclusivity(unchecked) final var flags: ObjectFlags = []
    /// The to-one slots (below 16) that the delete rules of this object's deletion nullified:
    /// they read as nil, while its values stay the saved ones — a deleted object is neither
    /// decoded nor copied for the links it loses (Context+Delete). Zero for every other object.
    /// Declared between `flags` and `recordPosition`, it takes padding and costs no memory.
    @exclusivity(unchecked) final var nulledSlots: UInt16 = 0
    /// Where the last field read from `record` stopped: the next read of a later field goes on
    /// from there (RecordCoding.field). Declared after `flags`, it takes the padding before the
    /// next eight-byte field, so it costs a fetched object no memory.
    @exclusivity(unchecked) final var recordPosition = RecordPosition()
    /// The values by slot once decoded; see `values`.
    @exclusivity(unchecked) final var decodedValues: [StoredValue] = []
    /// A fetched object's record (checked whole by `RecordCoding.validate`) while its values are
    /// not decoded yet: a typed read decodes only its own field from it (`storedValue`).
    @exclusivity(unchecked) final var record: [UInt8]? = nil {
        didSet { recordPosition = RecordPosition() }
    }
    @exclusivity(unchecked) final var toMany: ToManyStates? = nil
    /// A fault's record read ahead with others (a to-many relationship's members): firing the
    /// fault takes it if no save came after the read, else reads afresh. Nil once loaded.
    @exclusivity(unchecked) final var readAhead: ReadAheadRecord? = nil
    final var rowVersion: UInt64 = 0
    /// Values set by key that did not fit their attribute: reported by the next save.
    final var rejectedValues: [String: String]? = nil
    /// Relationships set before the object was inserted, by slot: resolved by `Context.insert`.
    final var unattachedLinks: [Int: [ManagedObject]]? = nil
    /// Made on the first read of a property (`observeAccess`): an object never read cannot be
    /// observed, and a fault costs no registrar.
    @usableFromInline @exclusivity(unchecked) final var observation: ObservationBox? = nil {
        didSet { observationReference = observation.map(Unmanaged.passUnretained) }
    }
    /// `observation`, unretained, for a property read to reach the registrar without a retain
    /// and a release. Safe as `entityReference`: `observation` holds the box strongly and is set
    /// only when it is made, never while a read uses it.
    @usableFromInline @exclusivity(unchecked) final var observationReference: Unmanaged<ObservationBox>? = nil

    /// An object not yet in any context; `Context.insert(_:)` adds it.
    public init() {
        if FaultMaking.isActive { return }   // a fault: its values come from the store
        values = [StoredValue](repeating: .null, count: Self._$slotCount)
        _$absorbPending()
    }

    /// An object for a stored row, made by its context as a fault. (`init()` is the only
    /// designated initializer, so a model class's own initializers call it implicitly.)
    public required convenience init(_$fault token: _$FaultToken) {
        self.init()
        _$becomeFault(token)
    }

    /// Turns a newly made object into its context's fault for a stored row.
    public final func _$becomeFault(_ token: _$FaultToken) {
        entityInfo = token.entity
        key = token.key
        contextLink = token.link
        flags = .fault
        values = []
        unattachedLinks = nil
    }

    /// The values by slot: decoded from `record` (and it dropped) on first use, so code that
    /// reads or changes values whole never sees the record.
    final var values: [StoredValue] {
        get {
            if record != nil { decodeRecord() }
            return decodedValues
        }
        set {
            record = nil
            decodedValues = newValue
        }
        _modify {
            if record != nil { decodeRecord() }
            yield &decodedValues
        }
    }

    /// The owning context: nil before insert, and once the context is gone (ContextLink L1).
    final var context: Context? {
        get { contextLink?.context }
        set { contextLink = newValue?.link }
    }

    /// Whether `slot` is a to-one this object's deletion nullified (`nulledSlots`).
    final func isNulled(_ slot: Int) -> Bool {
        nulledSlots != 0 && slot < 16 && nulledSlots & (1 << UInt16(slot)) != 0
    }

    /// The values as the app sees them: `values`, with the to-ones a deletion nullified
    /// (`nulledSlots`) as nil — what queries, child contexts and conflict reports read.
    final var visibleValues: [StoredValue] {
        guard nulledSlots != 0 else { return values }
        var out = values
        for slot in out.indices where isNulled(slot) { out[slot] = .null }
        return out
    }

    /// The values as saved (or as they are, once changed), decoded from the record the object
    /// still holds without keeping the decode. With `onlyReadOnDeletion`, just the slots a save
    /// reads of a deleted or rewritten object (`EntityInfo.slotForFieldOnDeletion`: index entries,
    /// tombstone, to-ones) are decoded, the others left at their defaults: its strings and data
    /// are not made only to be dropped.
    final func valuesLeavingRecord(onlyReadOnDeletion: Bool = false) -> [StoredValue] {
        guard let bytes = record, let entity = entityInfo else { return decodedValues }
        var decoded = entity.defaults
        _ = try? RecordCoding.decode(bytes, key: key, into: &decoded,
                                     slotForField: onlyReadOnDeletion ? entity.slotForFieldOnDeletion : entity.slotForField,
                                     partial: onlyReadOnDeletion)
        return decoded
    }

    /// The value of `slot` of a loaded object: from its record when it still holds one (that
    /// field alone decoded), else from its values.
    final func loadedValue(_ slot: Int) -> StoredValue {
        if let record, let entity = entityReference {
            // The position read and written through a local: passed `inout` from this object,
            // the call could have changed `record` for all the compiler knew.
            var position = recordPosition
            let key = key
            let value = record.withUnsafeBytes { raw in
                entity._withUnsafeGuaranteedRef { $0.value(ofSlot: slot, inRecord: raw, key: key, from: &position) }
            }
            recordPosition = position
            return value
        }
        return slot < decodedValues.count ? decodedValues[slot] : .null
    }

    /// Decodes `record` into `decodedValues`. The record passed `RecordCoding.validate` when it
    /// was kept, so its decode cannot fail; if it ever did, the values stay at their defaults.
    final func decodeRecord() {
        guard record != nil, entityInfo != nil else { return }
        let decoded = valuesLeavingRecord()
        record = nil
        decodedValues = decoded
    }

    deinit {
        if key != 0, let context { context.forget(key) }
    }

    // MARK: - Identity

    /// The object's permanent ID: valid from the moment it is inserted, and still after its
    /// context is gone (fetch the object again with it from another context).
    ///
    /// An object not yet inserted, or whose insert was rolled back, has no ID; this returns nil
    /// for it.
    public final var objectID: ObjectID? {
        guard key != 0, let entityInfo, let storeIdentifier = entityInfo.storeIdentifier else { return nil }
        return ObjectID(store: storeIdentifier, entity: entityInfo.name, key: key)
    }

    /// The entity's name (nil for a subclass instance not yet inserted).
    public final var entityName: String? { entityInfo?.name }

    /// The context the object belongs to; nil before insert or after its context is gone.
    ///
    /// As in Core Data, an object does not keep its context alive: keep a reference to the
    /// context for as long as you use its objects. An object whose context is gone reads its
    /// last known values (a fault reads none) and refuses changes.
    public final var managedObjectContext: Context? { context }

    public static func == (a: ManagedObject, b: ManagedObject) -> Bool { a === b }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }

    // MARK: - State

    /// Whether the object's values are not loaded yet; reading any property loads them.
    public final var isFault: Bool { flags.contains(.fault) }
    /// Inserted into its context and not saved yet.
    public final var isInserted: Bool { flags.contains(.inserted) }
    /// Changed since the last save.
    public final var isUpdated: Bool { flags.contains(.updated) }
    /// Deleted in its context (and not saved yet), or deleted and saved.
    public final var isDeleted: Bool { flags.contains(.deleted) }
    /// The object's row is gone: it was deleted by a save elsewhere, or its insert was rolled
    /// back. Reads return the last known values.
    public final var isInvalidated: Bool { flags.contains(.invalidated) }
    /// Whether the object has unsaved changes.
    public final var hasChanges: Bool { !flags.intersection([.inserted, .updated, .deleted]).isEmpty }

    // MARK: - Access by key

    /// The value of the property `key`, as `NSManagedObject.value(forKey:)` gives it: an
    /// attribute's Swift value (nil when it has none), a to-one's object, a to-many's
    /// `Set<ManagedObject>` (ordered: `[ManagedObject]`).
    ///
    /// - Throws: ``DocStoreError/Code/unknownProperty``; ``DocStoreError/Code/storage`` if
    ///   loading the object's values failed; ``DocStoreError/Code/wrongContext`` for an
    ///   attribute of a fault (never loaded) whose context is gone.
    public final func value(forKey key: String) throws(DocStoreError) -> Any? {
        guard let info = try propertyInfo(key) else { return nil }   // not inserted: no entity yet
        guard let context else {
            // Deleted and saved, or its context is gone: the last known attribute values — and
            // for a fault, never loaded, none: a typed error rather than a nil that looks real.
            guard info.attribute != nil else { return nil }
            guard !isFault, info.slot < values.count else {
                throw DocStoreError(.wrongContext, "\(self)'s context is gone and its \(key) was never loaded; keep the Context "
                    + "while you use its objects, or fetch it again by its objectID", entity: entityInfo?.name, property: key)
            }
            return values[info.slot].anyValue
        }
        return try context.value(of: self, property: info)
    }

    /// Sets the property `key`: an attribute from a Swift value of its type (or nil), a to-one
    /// from an object or nil, a to-many from a `Set` or an array of objects. Inverse
    /// relationships are updated at once.
    ///
    /// - Throws: ``DocStoreError/Code/unknownProperty``, ``DocStoreError/Code/typeMismatch``
    ///   (nothing is changed), ``DocStoreError/Code/wrongContext`` for an object of another
    ///   context, ``DocStoreError/Code/objectDeleted``.
    public final func setValue(_ value: Any?, forKey key: String) throws(DocStoreError) {
        guard let info = try propertyInfo(key) else {
            throw DocStoreError(.wrongContext, "insert the object into a context before setting values by key", property: key)
        }
        guard let context else {
            throw DocStoreError(.wrongContext, "the object's context is gone", entity: entityInfo?.name, property: key)
        }
        try context.setValue(value, of: self, property: info)
    }

    /// The value of a property by key; setting a value that does not fit records the problem,
    /// and the next save reports it (use ``setValue(_:forKey:)`` to be told at once).
    public final subscript(key: String) -> Any? {
        get { (try? value(forKey: key)) ?? nil }
        set {
            do { try setValue(newValue, forKey: key) } catch {
                var rejected = rejectedValues ?? [:]
                rejected[key] = error.message
                rejectedValues = rejected
            }
        }
    }

    private func propertyInfo(_ key: String) throws(DocStoreError) -> PropertyInfo? {
        guard let entityInfo else { return nil }
        guard let info = entityInfo.property(named: key) else {
            throw DocStoreError(.unknownProperty, "\(entityInfo.name) has no property \"\(key)\"", entity: entityInfo.name, property: key)
        }
        return info
    }

    /// The changed attributes and relationships since the last save, by name, with their new
    /// values (as ``value(forKey:)`` gives them).
    public final func changedValues() -> [String: Any] {
        context?.changedValues(of: self) ?? [:]
    }

    /// The values as last saved (or fetched), for the given keys or all attributes and to-one
    /// relationships.
    public final func committedValues(forKeys keys: [String]? = nil) -> [String: Any] {
        context?.committedValues(of: self, keys: keys) ?? [:]
    }

    // MARK: - Lifecycle hooks (override; call super is not needed)

    /// Called once, when the object is inserted into a context.
    open func awakeFromInsert() {}
    /// Called when a fault's values are loaded from the store.
    open func awakeFromFetch() {}
    /// Called at the start of a save, for each inserted, updated or deleted object. Changes made
    /// here are saved too.
    open func willSave() {}
    /// Called after a save that included this object succeeded.
    open func didSave() {}
    /// Called when the object is deleted, before its delete rules are applied.
    open func prepareForDeletion() {}
    /// Called before the object turns back into a fault (refresh, reset).
    open func willTurnIntoFault() {}

    // MARK: - Validation hooks (override and throw to refuse a save)

    /// Checks an inserted object at save; throw a ``DocStoreError`` (or any error) to refuse it.
    open func validateForInsert() throws {}
    /// Checks an updated object at save.
    open func validateForUpdate() throws {}
    /// Checks a deleted object at save.
    open func validateForDelete() throws {}

    // MARK: - Declaration metadata (generated by @Model)

    /// The entity this class declares, with its attributes and relationships.
    open class var _$entityDescription: EntityDescription? { nil }
    /// The class's own properties in declaration order (its slot order).
    open class var _$declaredPropertyNames: [String]? { nil }
    /// The number of slots of this class: its ancestors' properties and its own.
    open class var _$slotCount: Int { 0 }
    /// The class's persisted properties by Swift key path (rooted at the class itself, inherited
    /// ones included): how a Foundation `#Predicate` or `SortDescriptor` names a property.
    open class var _$keyPathNames: [AnyKeyPath: String] { [:] }

    /// Moves the values given during phase-one initialization into the object (generated by
    /// @Model for each class level; each calls super first).
    open func _$absorbPending() {}

    /// Tells Observation that the property in `slot` changed other than through its setter (a
    /// merge of another context's save, a refresh): generated by @Model for each class level,
    /// which passes slots of other levels to super.
    open func _$observedValueChanged(slot: Int) {}

    /// Stores pending values of one class level, whose slots start at `base`.
    public final func _$applyPending(_ pending: _$PendingValues, base: Int) {
        for (index, value) in pending.items {
            let slot = base + index
            if slot >= values.count { values += [StoredValue](repeating: .null, count: slot + 1 - values.count) }
            switch value {
            case .stored(let v): values[slot] = v
            case .objects(let objects):
                setUnattachedLinks(slot, objects)
            }
        }
    }

    // MARK: - Description

    open var description: String {
        let name = entityInfo?.name ?? String(describing: type(of: self))
        guard key != 0 else { return "<\(name) (not inserted)>" }
        var state = ""
        if isFault { state += " fault" }
        if isInserted { state += " inserted" }
        if isUpdated { state += " updated" }
        if isDeleted { state += " deleted" }
        if isInvalidated { state += " invalidated" }
        return "<\(name)/\(key & PrimaryKey.sequenceMask)\(state)>"
    }
}

/// The in-memory state of one to-many relationship of one object: the links added and removed
/// since the last save (kept even while the relationship is not loaded, so the inverse of a
/// fault is updated without loading it), and the loaded members when someone read them.
final class ToManyState {
    // Exclusivity checked statically only, as ManagedObject's fields.
    /// The members in order (ordered relationships) or in no particular order; nil until loaded.
    @exclusivity(unchecked) private(set) var members: [UInt64]?
    /// The members as a set, kept only once `members` has grown past `indexedAbove` out of
    /// ascending order (`indexed`). A smaller list is searched in place — a new note's two tags
    /// cost no hash table (15 MB of an insert of 100 000 notes) — and an ascending one by
    /// bisection: an unordered relationship's members come from the store in key order (with
    /// the unsaved additions after them, in key order too: `load`), and new objects, whose keys
    /// grow, are appended in order, so a folder's thousands of new notes need no table (each
    /// probe of one was a cache miss: a twentieth of inserting 100 000 notes). An ordered
    /// relationship's list is in its own order, ascending or not. Use `isMember(_:)`.
    /// Invariants: T1 `ascending` true means `members` is strictly increasing (false says
    /// nothing); T2 `indexed` true means `memberSet` holds exactly the members. A list that
    /// grows past `indexedAbove` out of order gets its set then (`add`); one made whole
    /// (`setMembers`) gets it if it is large and not ascending.
    @exclusivity(unchecked) private(set) var memberSet: KeySet = []
    private(set) var indexed = false
    private(set) var ascending = true
    static let indexedAbove = 8
    @exclusivity(unchecked) var added: KeySet = []
    @exclusivity(unchecked) var removed: KeySet = []
    /// Ordered relationships: the order changed, so all links are rewritten at save.
    var orderChanged = false {
        didSet { if changeLog != nil, oldValue != orderChanged { changeLog?.append(.orderChanged(was: oldValue)) } }
    }
    /// The relationship of an object not saved yet: nothing is stored, its members are all new
    /// (kept in `members` alone; `added` and `removed` stay empty), and save writes them all.
    var isNew = false
    /// While a delete runs, what to undo if it fails, newest last (Context+Delete's journal);
    /// nil otherwise. A log rather than a copy: copying a tag's set of thousands of removed
    /// links before each note's delete took a tenth of deleting 50 000 notes.
    @exclusivity(unchecked) var changeLog: [ToManyChange]?

    var hasChanges: Bool { isNew ? !(members?.isEmpty ?? true) : (!added.isEmpty || !removed.isEmpty || orderChanged) }

    /// Whether `key` is among the loaded members (false while they are not loaded).
    func isMember(_ key: UInt64) -> Bool {
        guard let members else { return false }
        if indexed { return memberSet.contains(key) }
        if ascending && members.count > Self.indexedAbove { return Self.position(of: key, inAscending: members) != nil }
        return members.contains(key)
    }

    /// Where `key` is in the loaded members, if it is there.
    private func position(of key: UInt64) -> Int? {
        guard let members else { return nil }
        if ascending { return Self.position(of: key, inAscending: members) }
        return members.firstIndex(of: key)
    }

    /// Where `key` is in the strictly increasing `list`, by bisection; a key past the last
    /// (the next new object's) is answered without a search.
    static func position(of key: UInt64, inAscending list: [UInt64]) -> Int? {
        guard let last = list.last, key <= last else { return nil }
        var low = 0, high = list.count - 1
        while low < high {
            let middle = low + (high - low) / 2
            if list[middle] < key { low = middle + 1 } else { high = middle }
        }
        return list[low] == key ? low : nil
    }

    /// Sets the loaded members (nil: not loaded) and the set beside them when they are many and
    /// not in ascending order (T2).
    private func setMembers(_ list: [UInt64]?, set: KeySet? = nil) {
        members = list
        ascending = list.map(Self.isAscending) ?? true
        indexed = !ascending && (list?.count ?? 0) > Self.indexedAbove
        memberSet = indexed ? (set ?? KeySet(list ?? [])) : []
    }

    private static func isAscending(_ list: [UInt64]) -> Bool {
        var previous: UInt64?
        for key in list {
            if let previous, previous >= key { return false }
            previous = key
        }
        return true
    }

    /// Makes room in the loaded members for `more` keys (when they are loaded).
    func reserveMembers(_ more: Int) {
        guard let count = members?.count else { return }
        members?.reserveCapacity(count + more)
    }

    func add(_ key: UInt64) {
        var wasRemoved = false, addedNew = false, appended = false
        if !isNew {
            if removed.remove(key) != nil { wasRemoved = true } else { addedNew = added.insert(key).inserted }
        }
        if members != nil, indexed ? memberSet.insert(key).inserted : !isMember(key) {
            if ascending, let last = members?.last, key < last { ascending = false }
            members?.append(key)
            appended = true
            if !indexed, !ascending, let list = members, list.count > Self.indexedAbove {   // T2
                memberSet = KeySet(list)
                indexed = true
            }
        }
        if changeLog != nil { changeLog?.append(.added(key, wasRemoved: wasRemoved, addedNew: addedNew, appended: appended)) }
    }

    func remove(_ key: UInt64) {
        var wasAdded = false, removedNew = false
        var position: Int?
        if !isNew {
            if added.remove(key) != nil { wasAdded = true } else { removedNew = removed.insert(key).inserted }
        }
        let at = indexed ? (memberSet.remove(key) != nil ? members?.firstIndex(of: key) : nil) : self.position(of: key)
        if let at {
            if changeLog != nil { position = at }
            members?.remove(at: at)   // keeps the order, so an ascending list stays ascending
        }
        if changeLog != nil { changeLog?.append(.removed(key, wasAdded: wasAdded, removedNew: removedNew, position: position)) }
    }

    /// Puts the loaded members in `order` (an ordered relationship set or rearranged whole).
    func setOrder(_ order: [UInt64]) {
        if changeLog != nil { changeLog?.append(.replaced(snapshot)) }
        setMembers(order)
        orderChanged = true
    }

    /// Everything but the log, for a change that replaces the state wholesale.
    var snapshot: ToManyChange.Snapshot {
        ToManyChange.Snapshot(members: members, memberSet: memberSet, indexed: indexed, ascending: ascending, added: added, removed: removed, orderChanged: orderChanged, isNew: isNew)
    }

    /// Undoes the logged changes, newest first, and stops logging (a delete failed).
    func undoLoggedChanges() {
        guard let log = changeLog else { return }
        changeLog = nil
        for change in log.reversed() {
            switch change {
            case .added(let key, let wasRemoved, let addedNew, let appended):
                if wasRemoved { removed.insert(key) }
                if addedNew { added.remove(key) }
                if appended {
                    if indexed { memberSet.remove(key) }
                    members?.removeLast()
                }
            case .removed(let key, let wasAdded, let removedNew, let position):
                if wasAdded { added.insert(key) }
                if removedNew { removed.remove(key) }
                if let position {
                    members?.insert(key, at: position)
                    if indexed { memberSet.insert(key) }
                }
            case .orderChanged(let was):
                orderChanged = was
            case .replaced(let s):
                members = s.members
                memberSet = s.memberSet
                indexed = s.indexed
                ascending = s.ascending
                added = s.added
                removed = s.removed
                orderChanged = s.orderChanged
                isNew = s.isNew
            }
        }
    }

    /// Forgets the loaded members, keeping the unsaved additions and removals: the next read
    /// loads the store's members again and applies them (a merge or a conflict found the store
    /// changed). An ordered relationship keeps its flag to be rewritten, in the store's order
    /// with this context's additions at the end (a reorder made here is not kept).
    func rebase() {
        guard !isNew else { return }
        if changeLog != nil { changeLog?.append(.replaced(snapshot)) }
        setMembers(nil)
    }

    /// Sets the loaded members from the store, then applies the pending changes.
    func load(stored: [UInt64]) {
        if changeLog != nil { changeLog?.append(.replaced(snapshot)) }
        let storedSet = KeySet(stored)
        removed.formIntersection(storedSet)   // a "removal" of a link the store lacks is no change
        var list = stored.filter { !removed.contains($0) }
        var set = KeySet(list)
        added.subtract(set)     // an "addition" of a link the store has (after a rebase) is no change
        // The additions in key order: after a store's list in key order they keep it ascending
        // (their order among themselves is no one's: they come after the stored members).
        for key in added.sorted() where set.insert(key).inserted { list.append(key) }
        setMembers(list, set: set)
    }

    /// The links the store held when the members were loaded (or last saved): the loaded list
    /// without its additions, with the removals (which may name a link the store never had:
    /// removing it is no change). Nil while not loaded, for a new relationship, and for an
    /// ordered one (its links are keyed by position). A save trusts it for a deleted object's
    /// links only when its reads are current (Context+Conflicts K6); `forgetMembers`, which can
    /// drop a stored member without a removal (a merged delete under a `.noAction` inverse
    /// leaves that link stored), ends that trust (Context+Merge's `mergeDeletes`).
    var linksAsLoaded: [UInt64]? {
        guard let members, !isNew else { return nil }
        var out: [UInt64] = []
        out.reserveCapacity(members.count + removed.count)
        for key in members where !added.contains(key) { out.append(key) }
        for key in removed { out.append(key) }   // never among the members (add, remove, load)
        return out
    }

    /// Drops the members in `gone` from the loaded list (objects deleted by another context).
    func forgetMembers(_ gone: Set<UInt64>) {
        guard let list = members, list.contains(where: gone.contains) else { return }
        members = list.filter { !gone.contains($0) }
        if indexed { memberSet.subtract(gone) }
    }

    /// A copy of the whole state (undo snapshots), without the change log.
    func copy() -> ToManyState {
        let c = ToManyState()
        c.members = members
        c.memberSet = memberSet
        c.indexed = indexed
        c.ascending = ascending
        c.added = added
        c.removed = removed
        c.orderChanged = orderChanged
        c.isNew = isNew
        return c
    }
}

/// One logged change to a ToManyState, with what undoing it needs.
enum ToManyChange {
    struct Snapshot {
        var members: [UInt64]?
        var memberSet: KeySet
        var indexed: Bool
        var ascending: Bool
        var added: KeySet
        var removed: KeySet
        var orderChanged: Bool
        var isNew: Bool
    }
    /// `add(key)`: whether it cancelled a removal, recorded a new addition, appended a member.
    case added(UInt64, wasRemoved: Bool, addedNew: Bool, appended: Bool)
    /// `remove(key)`: whether it cancelled an addition, recorded a new removal, and the member's
    /// position if it was loaded.
    case removed(UInt64, wasAdded: Bool, removedNew: Bool, position: Int?)
    case orderChanged(was: Bool)
    /// A load, rebase or new order: the whole state before it.
    case replaced(Snapshot)
}

/// An object's to-many relationship states by property slot: the states present, in ascending
/// slot order. An object has few to-many relationships, so finding one is a short walk with no
/// hashing, and the list holds only states (an array with a place for every property took
/// 4.8 MB more of an insert of 100 000 notes).
struct ToManyStates: Sequence {
    private var entries: [(slot: Int, state: ToManyState)] = []

    init() {}

    /// Room for `count` states, filled with no growth (an insert of 100 000 objects that grew
    /// each object's array and copied it had 20 MB more at a save's peak).
    init(capacity count: Int) {
        entries.reserveCapacity(count)
    }

    subscript(slot: Int) -> ToManyState? {
        get {
            for entry in entries where entry.slot == slot { return entry.state }
            return nil
        }
        set {
            let i = entries.firstIndex { $0.slot >= slot } ?? entries.count
            if i < entries.count, entries[i].slot == slot {
                if let newValue { entries[i].state = newValue } else { entries.remove(at: i) }
            } else if let newValue {
                entries.insert((slot, newValue), at: i)
            }
        }
    }

    /// A copy whose states are copies (for undo snapshots).
    func copied() -> ToManyStates {
        var copy = ToManyStates()
        copy.entries = entries.map { ($0.slot, $0.state.copy()) }
        return copy
    }

    /// The states present, with their slots, in slot order.
    func makeIterator() -> IndexingIterator<[(slot: Int, state: ToManyState)]> {
        entries.makeIterator()
    }
}
