// Context: a scratch pad of objects — Core Data's NSManagedObjectContext. It makes objects for
// stored rows (faults, one per ID: uniquing), tracks what changed, and saves all of it in one
// engine transaction (Context+Save.swift) or forgets it (rollback).
//
// Invariants:
//   C1  `registry` holds every live object of this context by key, unretained; an object
//       removes itself when it is released (ManagedObject.deinit), so there is at most one
//       object per key and none is kept alive by the registry.
//   C2  `changed` retains every inserted, updated or deleted object until save or rollback, so
//       pending changes are never lost to deallocation.
//   C3  `committed[key]` holds an object's values as last saved, taken before its first change
//       (rollback, changedValues, committedValues and index maintenance read it).
//
// A context is not Sendable: it and its objects stay in the isolation domain that made them.

import Foundation
import Synchronization
internal import DocStoreEngine

/// Numbers contexts in this process: a context's saves carry its number so that it does not
/// merge them back.
private let contextSerials = Atomic<UInt64>(0)

/// A context: where objects are inserted, fetched, changed, deleted and saved.
///
/// ```swift
/// let context = Context(store: store)
/// let folder = try context.insertObject(forEntityName: "Folder")
/// folder["name"] = "Inbox"
/// try context.save()
/// ```
///
/// ## Topics
/// - ``insert(_:)``
/// - ``insertObject(forEntityName:)``
/// - ``object(with:)``
/// - ``existingObject(with:)``
/// - ``delete(_:)``
/// - ``save()``
/// - ``rollback()``
/// - ``reset()``
/// - ``refresh(_:mergeChanges:)``
public final class Context {
    /// The store this context reads from and saves to.
    public let store: Store
    /// The context a child context saves into (Context+Child.swift); nil for a context of the
    /// store.
    public let parent: Context?
    /// A name for the context, shown in history and descriptions.
    public var name: String?
    /// How this context's objects reach it (ContextLink): set at the end of the initializers,
    /// cleared first thing in deinit.
    let link = ContextLink()

    // Exclusivity checked statically only, as ManagedObject's fields (a Context is not
    // Sendable; only its own code touches these, with no access open across a call out).
    @exclusivity(unchecked) var registry = ObjectRegistry()
    @exclusivity(unchecked) var changed: ChangedObjects = [:]
    @exclusivity(unchecked) var committed: [UInt64: [StoredValue]] = [:]
    /// Set while delete rules run: links of objects being deleted may still change.
    var isPropagatingDelete = false
    /// The objects the last fetch with prefetching made on its way down its key paths (not the
    /// last level): held so that what was loaded for them stays loaded (Context+Prefetch P3).
    var prefetchedObjects: [ManagedObject] = []
    /// Open while a delete runs: the states it replaced, put back if it fails (Context+Delete.swift).
    /// Unchecked exclusivity, as `changed`: only the context's own code touches it, on the
    /// context's isolation, with no access open across a call out.
    @exclusivity(unchecked) var journal: UndoGroup?
    /// The last delete's journal, emptied, for the next delete to fill.
    var spareJournal = UndoGroup()
    /// The to-many states logging their changes for `journal` (ToManyState.changeLog).
    @exclusivity(unchecked) var journaledStates: [ToManyState] = []
    /// The undo manager, if any (UndoManager.swift).
    var undo: UndoManager?

    /// The author history records for this context's saves (Core Data's `transactionAuthor`):
    /// say who changed the store — "import", "sync", "app" — so a history reader can skip its
    /// own changes.
    public var transactionAuthor: String?
    /// This context's number in the process (HistoryTransaction.origin).
    let serial = contextSerials.add(1, ordering: .relaxed).newValue
    /// Keys changed since changes were last processed, kept while anyone observes the context
    /// (Context+Events.swift).
    @exclusivity(unchecked) var unprocessed: Set<UInt64> = []
    /// Unsaved inserts already reported to observers: deleted before the save, they are reported
    /// as deleted (Context+Events.swift). Emptied with the changes.
    var reportedInserts: Set<UInt64> = []
    /// Set while changes are processed, so that an observer that fetches does not re-enter.
    var isProcessingChanges = false
    /// Observers inside the context's domain (a results controller), by registration number.
    var changeHandlers: [(id: Int, handler: (ObjectsDidChange) -> Void)] = []
    var nextHandlerID = 0
    /// Observers as AsyncSequences.
    let changeChannel = EventChannel<ObjectsDidChange>()
    let didSaveChannel = EventChannel<HistoryTransaction>()
    /// Other contexts' saves not merged yet, while automatic merging is on (Context+Merge.swift).
    var inbox: ContextInbox?
    /// Asks the context's domain to process pending changes soon (set for the main context and
    /// background contexts); `scheduled` is true while such a request is outstanding.
    var scheduler: (@Sendable () -> Void)?
    var scheduled = false
    /// The merge policy (Context+Conflicts.swift).
    var policy: MergePolicy = .error
    /// The snapshot the context reads while pinned to a query generation (Context+Generation.swift).
    var pinnedSnapshot: ReadTransaction?
    /// A batch operation's write transaction, which this (private, empty) context's queries
    /// and reads see instead of a snapshot (Batch/BatchWriter.swift); nil otherwise.
    var batchTransaction: WriteTransaction?
    /// Set while sync applies the server's changes (Sync/Store+RemoteChanges.swift): the save
    /// skips validation (the server's state is what it is, V1 ran on the device that made it)
    /// and runs `alsoWrite` in its transaction, so sync's own bookkeeping commits with it.
    var remoteApply: RemoteApply?
    /// A save puts a tree's gathered entries once they take this many bytes (WriteBatch.runBytes;
    /// tests lower it so that small saves take that path), and counts the runs it put so.
    var saveRunBytes = WriteBatch.runBytes
    var saveRunsPut = 0
    /// The commit every row this context has read is current at, while no one else committed
    /// since (Context+Conflicts K6): the store's settled commit when it was made, then each of
    /// its own saves made on top of it. Nil once that no longer holds (and in a child).
    var readsCurrentAt: StoreMoment?
    /// Plans of the fetches made here, by predicate shape (PlanCache.swift).
    var planCache = PlanCache()

    /// A context on `store`.
    public init(store: Store, name: String? = nil) {
        self.store = store
        self.name = name
        self.parent = nil
        self.readsCurrentAt = store.settledMoment
        link.context = self
    }

    /// A child context of `parent` (Core Data's `parent` context): it reads the parent's objects
    /// as the parent has them, unsaved changes included, and its ``save()`` hands its changes to
    /// the parent rather than the store — the parent's save makes them durable. A scratch pad
    /// for an editing sheet: save to keep the edits, drop the context to forget them.
    /// It lives in the parent's isolation domain (both are not Sendable).
    public init(parent: Context, name: String? = nil) {
        self.store = parent.store
        self.name = name
        self.parent = parent
        link.context = self
    }

    deinit {
        link.context = nil   // ContextLink L1, L2: first, before any field is released
    }

    // MARK: - Change sets

    /// Whether anything was inserted, changed or deleted since the last save.
    public var hasChanges: Bool { !changed.isEmpty }
    /// Objects inserted and not saved yet.
    public var insertedObjects: Set<ManagedObject> { Set(changed.values.filter { $0.isInserted && !$0.isDeleted }) }
    /// Objects changed and not saved yet (not the inserted ones).
    public var updatedObjects: Set<ManagedObject> { Set(changed.values.filter { $0.isUpdated && !$0.isInserted && !$0.isDeleted }) }
    /// Objects deleted and not saved yet (not the inserted ones, which a delete simply drops).
    public var deletedObjects: Set<ManagedObject> { Set(changed.values.filter { $0.isDeleted && !$0.isInserted }) }
    /// Every object this context currently has (faults included).
    public var registeredObjects: Set<ManagedObject> { Set(registry.map { $0.value.takeUnretainedValue() }) }

    // MARK: - Registry (C1)

    /// Called by an object's deinit.
    func forget(_ key: UInt64) { registry.removeValue(forKey: key) }

    /// The context's object for `key`: the registered one, or a new fault (uniquing).
    func materialize(_ key: UInt64) throws(DocStoreError) -> ManagedObject {
        if let existing = registry[key] { return existing.takeUnretainedValue() }
        guard let entity = store.model.entity(ofKey: key) else {
            throw DocStoreError(.corrupt, "a reference names key \(key), whose entity ID \(PrimaryKey.entity(of: key)) the store does not have")
        }
        return materialize(key, entity)
    }

    /// The context's object for `key` of `entity` (its entity already known): the registered
    /// one, or a new fault of the entity's class.
    func materialize(_ key: UInt64, _ entity: EntityInfo) -> ManagedObject {
        registry.object(forKey: key) {
            let token = _$FaultToken(entity: entity, key: key, context: self)
            return FaultMaking.run { entity.objectClass.init(_$fault: token) }
        }
    }

    /// Checks that `object` belongs to this context.
    func check(_ object: ManagedObject, _ what: @autoclosure () -> String) throws(DocStoreError) {
        // By the link (one per context, L1): no context is retained to compare it.
        guard object.contextLink === link, object.key != 0 else {
            throw DocStoreError(.wrongContext, "\(what()): \(object) belongs to \(object.context == nil ? "no context" : "another context")", entity: object.entityInfo?.name)
        }
    }

    // MARK: - Insert

    /// Inserts a new object of the entity `entityName` (Core Data's
    /// `NSEntityDescription.insertNewObject(forEntityName:into:)`); it has its permanent
    /// ``ObjectID`` at once and its attributes' default values.
    ///
    /// - Throws: ``DocStoreError/Code/unknownProperty`` if the schema has no such entity, or
    ///   it is abstract.
    @discardableResult
    public func insertObject(forEntityName entityName: String) throws(DocStoreError) -> ManagedObject {
        try undoable { () throws(DocStoreError) in try insertNewObject(entityName) }
    }

    private func insertNewObject(_ entityName: String) throws(DocStoreError) -> ManagedObject {
        guard let entity = store.model.entity(named: entityName), !entity.description.isAbstract else {
            throw DocStoreError(.unknownProperty, "the schema has no concrete entity \"\(entityName)\"", entity: entityName)
        }
        let object = entity.objectClass.init(_$fault: _$FaultToken(entity: entity, key: 0, context: self))
        attachNew(object, entity)
        return object
    }

    /// Inserts an object made with its class's initializer.
    ///
    /// - Throws: ``DocStoreError/Code/wrongContext`` if it is in another context;
    ///   ``DocStoreError/Code/unknownProperty`` if its class is not in the store's schema.
    public func insert(_ object: ManagedObject) throws(DocStoreError) {
        try undoable { () throws(DocStoreError) in try insertObject(object) }
    }

    private func insertObject(_ object: ManagedObject) throws(DocStoreError) {
        if object.contextLink === link, object.key != 0 {
            if object.isDeleted, object.isInserted == false { undelete(object) }
            return
        }
        guard object.isUnattached else {
            throw DocStoreError(.wrongContext, "\(object) already belongs to another context", entity: object.entityInfo?.name)
        }
        guard let entity = object.entityInfo ?? store.model.entity(ofClass: type(of: object)),
              !entity.description.isAbstract else {
            let className = object.entityInfo?.name ?? String(describing: type(of: object))
            throw DocStoreError(.unknownProperty, "the store's schema has no concrete entity \"\(className)\"", entity: className)
        }
        guard entity.objectClass == type(of: object) else {
            throw DocStoreError(.typeMismatch, "entity \(entity.name) is made of \(entity.objectClass), not \(type(of: object)); open the store with the model class", entity: entity.name)
        }
        object.context = self
        attachNew(object, entity)
        try attachLinks(of: object)
    }

    /// Relationships set before insert: inserts their unattached targets, then links them
    /// through the context, so both sides are kept.
    private func attachLinks(of object: ManagedObject) throws(DocStoreError) {
        guard let links = object.unattachedLinks, let entity = object.entityInfo else { return }
        object.unattachedLinks = nil
        for (slot, targets) in links.sorted(by: { $0.key < $1.key }) where slot < entity.properties.count {
            for target in targets where target.isUnattached { try insertObject(target) }
            let p = entity.properties[slot]
            if p.isToOne { try setToOne(targets.first, of: object, p) } else { try setToMany(targets, of: object, p) }
        }
    }

    /// `key`: an ID handed out before (a child's insert reaching its parent); `awake`: whether
    /// awakeFromInsert runs (it ran in the child).
    func attachNew(_ object: ManagedObject, _ entity: EntityInfo, key: UInt64? = nil, awake: Bool = true) {
        object.entityInfo = entity
        object.context = self
        object.key = key ?? store.nextKey(for: entity)
        object.flags = [.inserted, .recordChanged]
        // Each slot the object left unset takes the entity's default, in place (`init()` makes
        // one value per slot; an object made otherwise is brought to that first).
        let defaults = entity.defaults
        if object.values.count != defaults.count {
            let given = object.values
            object.values = (0..<defaults.count).map { $0 < given.count ? given[$0] : .null }
        }
        for slot in 0..<defaults.count where object.values[slot].isNull && !defaults[slot].isNull {
            object.values[slot] = defaults[slot]
        }
        var states = ToManyStates(capacity: entity.toManyCount)
        for p in entity.properties where p.isToMany {
            let state = ToManyState()
            state.load(stored: [])
            state.isNew = true
            states[p.slot] = state
        }
        object.toMany = states
        registry[object.key] = Unmanaged.passUnretained(object)
        changed[object.key] = object
        if observesChanges { noteChange(object.key) }
        recordForUndo(object, isNew: true)
        if awake { object.awakeFromInsert() }
    }

    private func undelete(_ object: ManagedObject) {
        object.flags.remove(.deleted)
        changed.noteUndeleted(object)
        // The links its deletion nullified stay removed (their inverses are): its marks become
        // values, saved as a change of its record.
        if object.nulledSlots != 0 {
            if committed[object.key] == nil { committed[object.key] = object.values }
            object.values = object.visibleValues
            object.nulledSlots = 0
            object.flags.insert(.recordChanged)
        }
    }

    // MARK: - Objects by ID

    /// The object with `id`, as a fault if it is not registered yet. It does not check that the
    /// row exists: reading a fault whose row is gone marks it invalidated (see
    /// ``existingObject(with:)`` to check).
    ///
    /// - Throws: ``DocStoreError/Code/invalidObjectID`` for an ID of another store or an entity
    ///   this store does not have.
    public func object(with id: ObjectID) throws(DocStoreError) -> ManagedObject {
        guard id.storeIdentifier == store.identifier else {
            throw DocStoreError(.invalidObjectID, "\(id) belongs to store \(id.storeIdentifier), not \(store.identifier)")
        }
        guard let entity = store.model.entity(named: id.entityName), PrimaryKey.entity(of: id.primaryKey) == entity.id else {
            throw DocStoreError(.invalidObjectID, "\(id) names an entity this store does not have", entity: id.entityName)
        }
        return try materialize(id.primaryKey)
    }

    /// The object whose URI (``ObjectID/uriRepresentation``) is `uri`.
    ///
    /// - Throws: ``DocStoreError/Code/invalidObjectID`` for a malformed URI or one of another store.
    public func object(withURI uri: URL) throws(DocStoreError) -> ManagedObject {
        guard uri.scheme == "docstore", let host = uri.host, let storeID = UUID(uuidString: host),
              let key = store.model.key(ofName: uri.path.dropFirst()), let entity = store.model.entity(ofKey: key) else {
            throw DocStoreError(.invalidObjectID, "\(uri) is not a DocStore object URI (docstore://<store>/<Entity>/<number>) of this store's entities")
        }
        return try object(with: ObjectID(store: storeID, entity: entity.name, key: key))
    }

    /// The object with `id`, its values loaded; throws if no such object is stored.
    ///
    /// - Throws: ``DocStoreError/Code/objectNotFound``, ``DocStoreError/Code/invalidObjectID``,
    ///   ``DocStoreError/Code/storage``.
    public func existingObject(with id: ObjectID) throws(DocStoreError) -> ManagedObject {
        let object = try object(with: id)
        try fulfill(object)
        if object.isInvalidated || (object.isDeleted && !object.isInserted && object.flags.contains(.invalidated)) {
            throw DocStoreError(.objectNotFound, "no object \(id) is stored", entity: id.entityName)
        }
        return object
    }

    // MARK: - Faulting

    /// Loads a fault's values from the store. A row that is gone leaves the object invalidated
    /// with its attributes' defaults. `caching` false: a record read from the store is not kept
    /// in the row cache (a delete's, which the save removes from it anyway).
    func fulfill(_ object: ManagedObject, caching: Bool = true) throws(DocStoreError) {
        guard object.flags.contains(.fault), let entity = object.entityInfo else { return }
        if let parent, let state = try parent.currentState(of: object.key) {    // CC1
            object.values = state.values
            object.rowVersion = state.rowVersion
            object.flags.remove(.fault)
            if state.isDeleted { object.flags.insert(.deleted) }
            object.awakeFromFetch()
            return
        }
        if let ahead = object.readAhead {
            object.readAhead = nil
            if ahead.generation == store.rows.generation, pinnedSnapshot == nil, batchTransaction == nil {
                try load(object, entity, from: ahead.record)
                object.awakeFromFetch()
                return
            }
        }
        try load(object, entity, from: try storedRecord(object.key, entity, caching: caching))
        object.awakeFromFetch()
    }

    /// The stored record of `key`, from the row cache or else the store (then cached, unless
    /// not `caching`); nil when the store has none.
    func storedRecord(_ key: UInt64, _ entity: EntityInfo, caching: Bool = true) throws(DocStoreError) -> [UInt8]? {
        // G2: the row cache holds the latest rows, not the pinned snapshot's (nor a batch's).
        if let direct = batchTransaction as Transaction? ?? pinnedSnapshot {
            do { return try direct.get(PrimaryKey.bytes(key), in: entity.recordsTree) } catch { throw Store.storageError(error) }
        }
        if let bytes = store.rows.row(key) { return bytes }
        let generation = store.rows.generation
        let bytes = try readStore { txn in try txn.get(PrimaryKey.bytes(key), in: entity.recordsTree) }
        if caching, let bytes { store.rows.insert([(key, bytes)], readAt: generation) }
        return bytes
    }

    func load(_ object: ManagedObject, _ entity: EntityInfo, from bytes: [UInt8]?) throws(DocStoreError) {
        guard let bytes else {
            object.values = entity.defaults
            object.flags.remove(.fault)
            object.flags.insert(.invalidated)
            return
        }
        // A damaged record throws here and leaves the object a fault, as it was; a sound one is
        // kept as it is (the row cache's bytes, shared) and decoded as properties are read.
        let rowVersion = try RecordCoding.withRaw(bytes) { (raw) throws(DocStoreError) in try RecordCoding.validate(raw, key: object.key) }
        fill(object, record: bytes, rowVersion: rowVersion)
    }

    /// Gives a fault the values of its record (read at `rowVersion`): it is a fault no longer.
    func fill(_ object: ManagedObject, _ values: [StoredValue], rowVersion: UInt64) {
        object.readAhead = nil
        object.values = values
        object.rowVersion = rowVersion
        object.flags.remove(.fault)
    }

    /// Gives a fault its record, checked whole (`RecordCoding.validate`), to decode from as its
    /// properties are read: it is a fault no longer.
    func fill(_ object: ManagedObject, record: [UInt8], rowVersion: UInt64) {
        object.readAhead = nil
        object.decodedValues = []
        object.record = record
        object.rowVersion = rowVersion
        object.flags.remove(.fault)
    }

    // MARK: - Forgetting changes

    /// Discards every unsaved change: inserted objects leave the context (invalidated), deleted
    /// ones come back, changed values return to their saved state.
    public func rollback() {
        undo?.removeAllActions()
        var event = ObjectsDidChange()
        let objects = changed
        changed = [:]
        reportedInserts = []
        for (key, object) in objects {
            if object.isInserted {
                if observesChanges, let id = object.objectID { event.invalidatedObjectIDs.insert(id) }
                object.flags = [.invalidated]
                object.toMany = nil
                registry.removeValue(forKey: key)
                object.key = 0
                object.context = nil
                continue
            }
            if observesChanges, let id = object.objectID {
                event.refreshedObjectIDs.insert(id)
                event.changedKeys[id] = Set(changedValues(of: object).keys)
            }
            if let saved = committed[key] { object.values = saved }
            object.flags.subtract([.updated, .deleted, .recordChanged])
            object.nulledSlots = 0
            object.toMany = nil
            object.rejectedValues = nil
        }
        // Unchanged objects may hold links to rolled-back ones in loaded to-many sets.
        for (_, ref) in registry { ref.takeUnretainedValue().toMany = nil }
        committed = [:]
        unprocessed = []
        post(event)
    }

    /// Forgets every object: all become invalid for this context, unsaved changes are lost.
    public func reset() {
        undo?.removeAllActions()
        for (_, ref) in registry {
            let object = ref.takeUnretainedValue()
            object.willTurnIntoFault()
            object.context = nil
            object.readAhead = nil
            object.flags.insert(.invalidated)
        }
        registry = ObjectRegistry()
        changed = [:]
        reportedInserts = []
        committed = [:]
        prefetchedObjects = []
        unprocessed = []
        var event = ObjectsDidChange()
        event.invalidatedAllObjects = true
        post(event)
    }

    /// Turns `object` back into a fault, freeing its values, or with `mergeChanges` reloads
    /// its saved values and keeps its unsaved changes on top. An unchanged object is always
    /// turned into a fault.
    public func refresh(_ object: ManagedObject, mergeChanges: Bool) {
        guard object.contextLink === link, object.key != 0, !object.isInserted else { return }
        if object.hasChanges && mergeChanges {
            guard let entity = object.entityInfo, !object.isDeleted, let bytes = try? storedRecord(object.key, entity) else { return }
            var fresh = entity.defaults
            guard let version = try? RecordCoding.decode(bytes, key: object.key, into: &fresh, slotForField: entity.slotForField) else { return }
            if committed[object.key] == nil { committed[object.key] = object.values }
            adoptStoredValues(object, entity, stored: fresh, rowVersion: version)
            // Changed links reload on next use; unsaved additions and removals stay.
            for (_, state) in object.toMany ?? ToManyStates() { state.rebase() }
            return
        }
        object.willTurnIntoFault()
        changed.removeValue(forKey: object.key)
        committed.removeValue(forKey: object.key)
        object.values = []
        object.toMany = nil
        object.rejectedValues = nil
        object.readAhead = nil
        object.flags = [.fault]
        object.nulledSlots = 0
    }

    /// Refreshes every registered object (``refresh(_:mergeChanges:)`` with `mergeChanges: true`
    /// for changed ones, faulting the others).
    public func refreshAllObjects() {
        for object in registeredObjects { refresh(object, mergeChanges: true) }
    }
}
