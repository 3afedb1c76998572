// UndoManager: undo and redo of a context's unsaved changes (Foundation's UndoManager does not
// exist on Linux). Changes are grouped per event — every public change (setting a property,
// insert, delete with its delete rules) is one group — or per explicit group between
// beginUndoGrouping() and endUndoGrouping() (or inside `group { }`).
//
// A group remembers, for each object it touched, the object's state before its first change in
// the group (values, life-cycle flags, to-many state, whether the context held it as changed);
// undo puts those states back and keeps the states it replaced, which redo puts back in turn.
// Inverses and delete-rule effects are undone with the change that caused them, because they
// touched their objects inside the same group.
//
// Scope: undo covers changes not yet saved. A save, a rollback or a reset clears both stacks
// (so nothing can be undone into a state the store no longer matches).

/// Undo and redo for a ``Context``'s unsaved changes.
///
/// ```swift
/// context.undoManager = UndoManager()
/// note.title = "Draft"
/// context.undoManager?.undo()      // title is back
/// context.undoManager?.redo()      // "Draft" again
/// ```
public final class UndoManager {
    /// Whether each public change forms its own group when no explicit group is open.
    public var groupsByEvent = true
    /// The most groups kept (0: no limit).
    public var levelsOfUndo = 0

    var undoStack: [UndoGroup] = []
    var redoStack: [UndoGroup] = []
    var open: UndoGroup?
    var explicitDepth = 0
    /// The context's link (ContextLink): the context is reached without being kept alive.
    var contextLink: ContextLink?
    var context: Context? {
        get { contextLink?.context }
        set { contextLink = newValue?.link }
    }

    public init() {}

    /// Whether there is a change to undo.
    public var canUndo: Bool { !undoStack.isEmpty || !(open?.isEmpty ?? true) }
    /// Whether there is an undone change to redo.
    public var canRedo: Bool { !redoStack.isEmpty }

    /// Opens a group: every change until the matching ``endUndoGrouping()`` undoes at once.
    public func beginUndoGrouping() {
        if explicitDepth == 0 { open = open ?? UndoGroup() }
        explicitDepth += 1
    }

    /// Closes the group opened by ``beginUndoGrouping()``.
    public func endUndoGrouping() {
        guard explicitDepth > 0 else { return }
        explicitDepth -= 1
        if explicitDepth == 0 { closeGroup() }
    }

    /// Runs `body` as one undo group.
    public func group<R>(_ body: () throws -> R) rethrows -> R {
        beginUndoGrouping()
        defer { endUndoGrouping() }
        return try body()
    }

    /// Undoes the last group of changes; nothing if there is none.
    public func undo() {
        if explicitDepth == 0 { closeGroup() }
        guard let context, let group = undoStack.popLast() else { return }
        redoStack.append(context.apply(group))
    }

    /// Redoes the last undone group; nothing if there is none.
    public func redo() {
        guard let context, let group = redoStack.popLast() else { return }
        undoStack.append(context.apply(group))
    }

    /// Forgets everything that could be undone or redone.
    public func removeAllActions() {
        undoStack = []
        redoStack = []
        open = explicitDepth > 0 ? UndoGroup() : nil
    }

    func closeGroup() {
        guard let group = open else { return }
        open = nil
        guard !group.isEmpty else { return }
        undoStack.append(group)
        redoStack = []
        if levelsOfUndo > 0, undoStack.count > levelsOfUndo { undoStack.removeFirst(undoStack.count - levelsOfUndo) }
    }
}

/// The states of the objects one group of changes touched, before it touched them.
struct UndoGroup {
    struct State {
        var object: ManagedObject
        var key: UInt64
        /// The values as the object held them: decoded, or (`record` not nil) not yet — a
        /// record is kept as it is, not decoded to be put aside.
        var values: [StoredValue]
        var record: [UInt8]? = nil
        var flags: ObjectFlags
        var nulledSlots: UInt16 = 0
        var toMany: ToManyStates?
        var registered: Bool
        var changed: Bool
        var committed: [StoredValue]?
    }
    var states: [UInt64: State] = [:]
    var order: [UInt64] = []
    var isEmpty: Bool { states.isEmpty }

    /// Empties the group, keeping its storage when it is small (a delete's journal, reused by
    /// the next delete) and letting a large one go.
    mutating func removeAll() {
        let keep = states.capacity <= 64
        states.removeAll(keepingCapacity: keep)
        order.removeAll(keepingCapacity: keep)
    }
}

extension Context {
    /// The undo manager recording this context's changes; nil (the default) records nothing.
    public var undoManager: UndoManager? {
        get { undo }
        set {
            undo = newValue
            newValue?.context = self
        }
    }

    /// Runs a public change as one undo group (when grouping by event and no group is open).
    func undoable<R>(_ body: () throws(DocStoreError) -> R) throws(DocStoreError) -> R {
        guard let undo, undo.open == nil, undo.explicitDepth == 0, undo.groupsByEvent else { return try body() }
        undo.open = UndoGroup()
        defer { undo.closeGroup() }
        return try body()
    }

    /// Records `o`'s state before its first change in the open undo group.
    func recordForUndo(_ o: ManagedObject, isNew: Bool = false) {
        guard let undo else { return }
        recordState(o, in: &undo.open, isNew: isNew)
    }

    /// Records `o`'s state in `group` (an undo group, or a delete's failure journal) unless the
    /// group already has it.
    func recordState(_ o: ManagedObject, in group: inout UndoGroup?, isNew: Bool = false) {
        guard group != nil, group?.states[o.key] == nil else { return }
        group?.states[o.key] = state(of: o, isNew: isNew)
        group?.order.append(o.key)
    }

    private func state(of o: ManagedObject, isNew: Bool = false) -> UndoGroup.State {
        if isNew {
            return UndoGroup.State(object: o, key: o.key, values: [], flags: [.invalidated], toMany: nil,
                                   registered: false, changed: false, committed: nil)
        }
        return UndoGroup.State(object: o, key: o.key, values: o.decodedValues, record: o.record, flags: o.flags,
                               nulledSlots: o.nulledSlots, toMany: o.toMany?.copied(),
                               registered: registry[o.key] != nil, changed: changed[o.key] != nil,
                               committed: committed[o.key])
    }

    /// Puts back the states of `group`; returns the states it replaced (the inverse group).
    func apply(_ group: UndoGroup) -> UndoGroup {
        var inverse = UndoGroup()
        for key in group.order.reversed() {
            guard let s = group.states[key] else { continue }
            inverse.states[key] = state(of: s.object)
            inverse.order.append(key)
            let o = s.object
            o.values = s.values
            if let record = s.record { o.record = record }
            o.flags = s.flags
            o.nulledSlots = s.nulledSlots
            o.readAhead = nil    // a fault put back reads the store when it fires
            o.toMany = s.toMany?.copied()
            if s.registered { registry[key] = Unmanaged.passUnretained(o) } else { registry.removeValue(forKey: key) }
            if s.changed { changed[key] = o } else { changed.removeValue(forKey: key) }
            if let c = s.committed { committed[key] = c } else { committed.removeValue(forKey: key) }
        }
        inverse.order.reverse()
        return inverse
    }
}
