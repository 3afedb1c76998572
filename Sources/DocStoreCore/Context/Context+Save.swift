// Context+Save: validation and the one engine transaction that stores a context's changes.
//
//   V1  save first calls willSave on every changed object, then validates every inserted and
//       updated object (required values, types, ranges, lengths, patterns, relationship counts,
//       values rejected when set by key, validateForInsert/Update) and every deleted one
//       (D1: a deny rule still reaching an object that is not deleted; validateForDelete). All
//       problems are collected into one error; nothing is written.
//   W1  everything is written in one engine write transaction: records, index entries, links,
//       key sequences. Any failure (a unique constraint, a storage error) rolls it back whole.
//   W2  index entries are removed for every changed object before any is added, so values that
//       swap between objects in one save do not collide.
//   W3  an object whose to-many links changed gets its next row version (its record is
//       rewritten with the same values), so concurrent link changes are conflicts (K1).
//   S1  the context changes only after the transaction committed; a failed save leaves every
//       change in place, to fix and save again.
// Implements Format/record.md (records, links, index keys).

import Foundation
internal import DocStoreEngine

extension Context {
    /// Saves every insert, change and delete in one transaction: all of it or none.
    ///
    /// - Throws: ``DocStoreError/Code/validation`` listing every problem;
    ///   ``DocStoreError/Code/deleteDenied``; ``DocStoreError/Code/uniqueConstraint``;
    ///   ``DocStoreError/Code/storage``. After an error the context keeps all its changes.
    public func save() throws(DocStoreError) {
        processPendingChanges()
        guard hasChanges else { return }
        for object in Array(changed.values) where !object.isInvalidated { object.willSave() }
        if remoteApply == nil { try validatePendingChanges() }
        if parent != nil { return try pushChangesToParent() }     // Context+Child CC4
        // K2: each attempt that meets conflicts resolves all it met, or throws; the store may
        // change again before the next, so the attempts are bounded.
        for attempt in 1...Self.saveAttempts {
            switch try commitPendingChanges() {
            case .saved:
                if pinnedSnapshot != nil { try repin() }     // G3: see what it saved
                return
            case .stale(let stale):
                try resolve(stale)
            case .clashes(let clashes):
                try resolve(clashes)
            }
            guard hasChanges else { return }
            if attempt < Self.saveAttempts, remoteApply == nil { try validatePendingChanges() }
        }
        throw DocStoreError(.mergeConflict, "the store changed under this save \(Self.saveAttempts) times in a row; its changes are kept, save again")
    }

    static let saveAttempts = 8

    /// What one attempt to commit the pending changes came to.
    enum SaveOutcome {
        case saved
        case stale([StaleObject])
        case clashes([UniqueClash])
    }

    /// One attempt: checks the stored row versions (K1) and the unique constraints, then
    /// writes everything in one transaction (W1), or writes nothing and says what stood in the
    /// way.
    private func commitPendingChanges() throws(DocStoreError) -> SaveOutcome {
        let objects = changed.sortedByKey()
        // A record is written when its values differ from the saved ones (setting a value and
        // back again leaves it, its row version and its index entries alone) — and, with the
        // same values and its next row version, when only its to-many links changed (W3), so
        // that another context's save over those links meets a conflict.
        // Both by position in `objects` (a Set of keys was asked six times per object).
        let valuesChanged = objects.map { o in
            !o.isDeleted && (o.isInserted || (o.flags.contains(.recordChanged) && self.committed[o.key] != o.values))
        }
        var rewritten = valuesChanged
        for (i, o) in objects.enumerated() where !o.isDeleted && !valuesChanged[i] && (o.toMany?.contains { $0.state.hasChanges } ?? false) {
            if o.isFault { try fulfill(o) }
            if committed[o.key] == nil { committed[o.key] = o.values }   // its version is checked (K1)
            rewritten[i] = true
        }
        let history = recordedChanges(objects, rewritten: valuesChanged)
        let touched = objects.indices.compactMap { i in objects[i].isDeleted || rewritten[i] ? objects[i].key : nil }
        var inserted = Set<UInt32>()
        let store = self.store
        let origin = serial
        var stale: [StaleObject] = []
        var clashes: [UniqueClash] = []
        var trusted = false
        let token: HistoryToken?
        do {
            // Nothing to record is nothing to write: objects changed back, inserted and deleted.
            token = history.changes.isEmpty ? nil : try store.write(onCommit: { lsn in
                // H1, under the writer lock: the row cache forgets what changed before anyone
                // hears of the commit, and commits are announced in their order.
                store.rows.invalidate(touched)
                store.historyTreeCommitted()
                store.changeHub.publish(history, lsn: lsn.rawValue, origin: origin, model: store.model, storeID: store.identifier)
            }) { txn in
                // Phase 0, K1: nothing is written if a row moved on since it was read (K6: no
                // row this context read can have, when nothing committed since).
                trusted = readsAreCurrent(txn)
                stale = try staleObjects(objects, rewritten: rewritten, readsAreCurrent: trusted, txn)
                if !stale.isEmpty { throw DocStoreError(.mergeConflict, "stale objects") }
                // Phase 1, reads and deletes. W2: old index entries out first (every delete is
                // made before any put: `batch` makes them in key order, per tree).
                var batch = WriteBatch()
                var doomed: [(key: [UInt8], tree: String)] = []
                for (i, o) in objects.enumerated() where !o.isInserted {
                    guard let entity = o.entityInfo, o.isDeleted || valuesChanged[i] else { continue }
                    try IndexEntries.remove(key: o.key, entity, values: committed[o.key] ?? o.valuesLeavingRecord(onlyReadOnDeletion: true), txn,
                                            deleter: { doomed.append(($0, $1)) })
                    for d in doomed { try batch.delete(d.key, in: d.tree, txn) }
                    doomed.removeAll(keepingCapacity: true)
                }
                let schemaVersion = store.catalog.schemaVersion
                for (i, o) in objects.enumerated() {
                    guard let entity = o.entityInfo else { continue }
                    if o.isDeleted {
                        if o.isInserted { continue }
                        try batch.delete(PrimaryKey.bytes(o.key), in: entity.recordsTree, txn)
                        for p in entity.properties where p.isToMany {
                            // K6: the links its delete rules loaded are the stored ones; else
                            // they are found in the tree.
                            if trusted, !p.isOrdered, let links = o.toMany?[p.slot]?.linksAsLoaded {
                                for target in links { try batch.delete(linkKey(o.key, target), in: p.linkTree, txn) }
                            } else {
                                try deleteLinks(of: o.key, p, txn, &batch)
                            }
                        }
                        continue
                    }
                    if rewritten[i] {
                        batch.putRecord(o.values, of: entity, key: o.key, rowVersion: o.rowVersion + 1, schemaVersion: schemaVersion)
                    }
                    if valuesChanged[i] {
                        IndexEntries.add(key: o.key, entity, values: o.values, to: &batch)
                        if o.isInserted { inserted.insert(entity.id) }
                    }
                    for (slot, state) in o.toMany ?? ToManyStates() where state.hasChanges {
                        try writeLinks(of: o, entity.properties[slot], state, txn, &batch)
                    }
                    saveRunsPut += try batch.putLargeRuns(txn, over: saveRunBytes)
                }
                for id in inserted {
                    batch.put(Catalog.sequenceValue(store.highestSequence(of: id)),
                              for: Catalog.sequenceKey(id), in: Catalog.tree)
                }
                // Phase 2, writes grouped by tree, so each tree's puts are applied sorted (a large
                // save made its runs of a few megabytes as it went, `putLargeRuns`).
                try batch.applyDeletes(txn)
                clashes = try batch.uniqueClashes(txn)
                if !clashes.isEmpty { throw clashes[0].error }
                try batch.apply(txn)
                // Phase 3, the history transaction (Format/history.md), in the same commit.
                try store.appendHistory(history, txn)
                try remoteApply?.alsoWrite(txn)
                return HistoryToken(txn.commitLSN.rawValue)
            }
        } catch {
            if !stale.isEmpty { return .stale(stale) }
            if !clashes.isEmpty { return .clashes(clashes) }
            throw error
        }

        // S1: the transaction committed; now the context catches up. K6: its reads are current
        // at its own commit only if they were at the one it saved on.
        if let token, let moment = readsCurrentAt {
            readsCurrentAt = trusted ? StoreMoment(reopenings: moment.reopenings, lsn: token.value) : nil
        }
        settle(objects, rewritten: rewritten)
        unprocessed.removeAll()
        for o in objects where !o.isDeleted { o.didSave() }
        if let token, didSaveChannel.hasSubscribers {
            didSaveChannel.send(HistoryTransaction(history, lsn: token.value, origin: serial, model: store.model, storeID: store.identifier))
        }
        return .saved
    }

    /// A deleted object leaves the context: it is deleted and invalidated, with no context.
    func detachDeleted(_ o: ManagedObject) {
        registry.removeValue(forKey: o.key)
        o.flags = [.deleted, .invalidated]
        o.toMany = nil
        o.readAhead = nil
        o.context = nil
    }

    /// After a save (to the store or a parent): the saved changes are the objects' baseline now.
    /// Deleted objects leave the context; rewritten records (`rewritten[i]` for `objects[i]`;
    /// nil: none) moved to their next row version.
    func settle(_ objects: [ManagedObject], rewritten: [Bool]?) {
        undo?.removeAllActions()
        changed = [:]
        reportedInserts = []
        committed = [:]
        for (i, o) in objects.enumerated() {
            if o.isDeleted {
                detachDeleted(o)
                continue
            }
            if rewritten?[i] == true { o.rowVersion += 1 }
            o.flags.subtract([.inserted, .updated, .recordChanged])
            for (_, state) in o.toMany ?? ToManyStates() {
                state.isNew = false
                state.added = []
                state.removed = []
                state.orderChanged = false
            }
        }
    }

    /// What a save records in history (H2): an insert, an update with the properties whose
    /// saved value changed, or a delete with its tombstone, per object in key order. An object
    /// changed and changed back records nothing. `rewritten[i]`: `objects[i]`'s values changed.
    func recordedChanges(_ objects: [ManagedObject], rewritten: [Bool]) -> RecordedTransaction {
        var changes: [RecordedChange] = []
        changes.reserveCapacity(objects.count)
        let withValues = store.recordsChangeValues.load(ordering: .acquiring)
        for (i, o) in objects.enumerated() {
            guard let entity = o.entityInfo else { continue }
            if o.isDeleted {
                if o.isInserted { continue }
                var change = RecordedChange(kind: .delete, key: o.key)
                let kept = entity.tombstoneSlots
                let values = kept.isEmpty ? [] : committed[o.key] ?? o.valuesLeavingRecord(onlyReadOnDeletion: true)
                for slot in kept where slot < values.count && !values[slot].isNull {
                    change.tombstone.append((entity.properties[slot].fieldID, values[slot]))
                }
                changes.append(change)
            } else if o.isInserted {
                var change = RecordedChange(kind: .insert, key: o.key)
                if withValues {
                    for slot in entity.recordSlots where slot < o.values.count && !o.values[slot].isNull {
                        change.values.append((entity.properties[slot].fieldID, o.values[slot]))
                    }
                    change.links = recordedLinks(of: o, entity)
                }
                changes.append(change)
            } else {
                var fields: [UInt32] = []
                if rewritten[i] {
                    let saved = committed[o.key]
                    for slot in entity.recordSlots where saved.map({ slot >= $0.count || $0[slot] != o.values[slot] }) ?? true {
                        fields.append(entity.properties[slot].fieldID)
                    }
                }
                for (slot, state) in o.toMany ?? ToManyStates() where state.hasChanges {
                    fields.append(entity.properties[slot].fieldID)
                }
                guard !fields.isEmpty else { continue }
                var change = RecordedChange(kind: .update, key: o.key, fields: fields.sorted())
                if withValues {
                    for slot in entity.recordSlots where rewritten[i] && slot < o.values.count {
                        let fieldID = entity.properties[slot].fieldID
                        if change.fields.contains(fieldID) { change.values.append((fieldID, o.values[slot])) }
                    }
                    change.links = recordedLinks(of: o, entity)
                }
                changes.append(change)
            }
        }
        return RecordedTransaction(timestamp: Date(), author: transactionAuthor, contextName: name, changes: changes, hasValues: withValues)
    }

    /// The to-many links a save of `o` adds and removes (history format 2, HC3), by field ID.
    private func recordedLinks(of o: ManagedObject, _ entity: EntityInfo) -> [RecordedLink] {
        var links: [RecordedLink] = []
        for (slot, state) in o.toMany ?? ToManyStates() where state.hasChanges {
            let fieldID = entity.properties[slot].fieldID
            if state.isNew {
                for target in state.members ?? [] { links.append(RecordedLink(fieldID: fieldID, target: target, present: true)) }
            } else {
                for target in state.added.sorted() { links.append(RecordedLink(fieldID: fieldID, target: target, present: true)) }
                for target in state.removed.sorted() { links.append(RecordedLink(fieldID: fieldID, target: target, present: false)) }
            }
        }
        return links.sorted { ($0.fieldID, $0.target) < ($1.fieldID, $1.target) }
    }

    // MARK: - Validation (V1)

    func validatePendingChanges() throws(DocStoreError) {
        var problems: [DocStoreError.Problem] = []
        var denied: [DocStoreError.Problem] = []
        for o in changed.sortedByKey() {
            guard let entity = o.entityInfo else { continue }
            var name: String { "\(entity.name)/\(o.key & PrimaryKey.sequenceMask)" }
            if o.isDeleted {
                // An object inserted here and deleted before the save is denied too: the notes
                // still reaching it would otherwise be saved pointing at a row never written.
                if let (p, target) = try denyingRelationship(of: o) {
                    denied.append(.init(entity: name, property: p.name, "cannot be deleted while \(p.name) still reaches \(target) (delete rule deny)"))
                }
                if o.isInserted { continue }
                do { try o.validateForDelete() } catch { problems.append(.init(entity: name, String(describing: error))) }
                continue
            }
            for (key, message) in (o.rejectedValues ?? [:]).sorted(by: { $0.key < $1.key }) {
                problems.append(.init(entity: name, property: key, "a value set by key was refused: \(message)"))
            }
            // A fault changed only in its to-many links keeps the record it was saved with; the
            // others' values are taken once. What each property needs checked is read from its
            // PropertyInfo, not from its description: binding a relationship's description out of
            // `kind` copied it (its strings retained and released) for every property of every
            // object — with the values read through `values` each time, three fifths of this.
            let isFault = o.isFault
            let values = isFault ? [] : o.values
            for p in entity.properties {
                if let rules = p.rules {
                    if !isFault, let message = Self.check(values, p.slot, against: rules) {
                        problems.append(.init(entity: name, property: p.name, message))
                    }
                } else if p.requiresTarget {
                    if !isFault, values[p.slot].isNull {
                        problems.append(.init(entity: name, property: p.name, Self.missingTarget))
                    }
                } else if let bounds = p.countBounds, let message = Self.check(count: try members(of: o, p).count, against: bounds) {
                    problems.append(.init(entity: name, property: p.name, message))
                }
            }
            do {
                if o.isInserted { try o.validateForInsert() } else { try o.validateForUpdate() }
            } catch {
                problems.append(.init(entity: name, String(describing: error)))
            }
        }
        if !denied.isEmpty {
            throw DocStoreError(.deleteDenied, "save refused: \(denied.count) deletion\(denied.count == 1 ? " is" : "s are") denied", entity: denied[0].entity, property: denied[0].property, problems: denied + problems)
        }
        if !problems.isEmpty {
            throw DocStoreError(.validation, "save refused: \(problems.count) validation problem\(problems.count == 1 ? "" : "s")", entity: problems.count == 1 ? problems[0].entity : nil, property: problems.count == 1 ? problems[0].property : nil, problems: problems)
        }
    }

    /// What is wrong with `values[slot]` for the attribute whose rules are `rules`, or nil when
    /// it is valid: as `check(_:against:)`, with the value read in place when the rules ask only
    /// for presence and type (StoredValue.isAcceptable) — no copy of a string per attribute of
    /// every object a save, a batch or a load checks.
    @inline(__always)
    static func check(_ values: [StoredValue], _ slot: Int, against rules: AttributeRules) -> String? {
        if rules.checksOnlyPresenceAndType && values[slot].isAcceptable(to: rules.type, optional: rules.isOptional) { return nil }
        return check(values[slot], against: rules)
    }

    /// What a save says of a required to-one relationship with no object.
    static let missingTarget = "is required (a to-one relationship with no object)"

    /// What is wrong with a to-many relationship of `count` members for its `bounds`
    /// (`PropertyInfo.countBounds`), or nil when the count is within them.
    static func check(count: Int, against bounds: (minimum: Int, maximum: Int?)) -> String? {
        if count < bounds.minimum { return "has \(count) object\(count == 1 ? "" : "s"); at least \(bounds.minimum) required" }
        if let hi = bounds.maximum, count > hi { return "has \(count) objects; at most \(hi) allowed" }
        return nil
    }

    /// What is wrong with `value` for the attribute whose rules are `a`, or nil when it is valid.
    static func check(_ value: StoredValue, against a: AttributeRules) -> String? {
        if value.isNull { return a.isOptional ? nil : "is required" }
        guard value.fits(a.type) else { return "holds \(value), which is not a \(a.type)" }
        if a.minimum != nil || a.maximum != nil {
            let number: Double? = switch value {
            case .int(let v): Double(v)
            case .double(let v): v
            case .float(let v): Double(v)
            case .decimal(let v): NSDecimalNumber(decimal: v).doubleValue
            case .date(let v): v.timeIntervalSinceReferenceDate
            default: nil
            }
            if let number {
                if let lo = a.minimum, number < lo { return "\(value) is below the minimum \(lo)" }
                if let hi = a.maximum, number > hi { return "\(value) is above the maximum \(hi)" }
            }
        }
        if a.minLength != nil || a.maxLength != nil {
            let length: Int? = switch value {
            case .string(let s): s.count      // characters: O(n), so only when limited
            case .data(let d): d.count
            default: nil
            }
            if let length {
                if let lo = a.minLength, length < lo { return "is \(length) long; at least \(lo) required" }
                if let hi = a.maxLength, length > hi { return "is \(length) long; at most \(hi) allowed" }
            }
        }
        if let pattern = a.pattern, case .string(let s) = value {
            guard let regex = a.regex else { return "the pattern \(pattern) is invalid" }
            if regex.firstMatch(in: s, range: NSRange(s.startIndex..., in: s)) == nil {
                return "\(String(reflecting: s)) does not match the pattern \(pattern)"
            }
        }
        return nil
    }

    // MARK: - Records, indexes, links (W1)

    static func indexKey(_ value: StoredValue, unique: Bool, key: UInt64) -> [UInt8]? {
        if unique, value.isNull { return nil }
        guard let component = indexComponent(value) else { return nil }
        // One array, made at the size of the key: a number's, a date's or a UUID's with the
        // primary key, or a string's or bytes' with their escapes' room (as KeyEncoding
        // reserves it) and the primary key.
        var out: [UInt8] = []
        out.reserveCapacity(Self.indexKeyCapacity(component))
        KeyEncoding.append(component, to: &out)
        if !unique { PrimaryKey.appendBytes(key, to: &out) }
        return out
    }

    /// Room for `component`'s encoding followed by a primary key (KeyEncoding.append reserves
    /// a string's or bytes' room itself; this is the whole key's, so nothing grows).
    static func indexKeyCapacity(_ component: KeyComponent) -> Int {
        switch component {
        case .string(let s): 1 + s.utf8.count + s.utf8.count / 8 + 2 + 8
        case .bytes(let b): 1 + b.count + b.count / 8 + 2 + 8
        default: 32
        }
    }

    /// A value as every index key of it begins (nil for a document): an equality's bound, and
    /// what unsaved objects are looked up by (ChangedObjects).
    /// (One array, at its size: no array of one component made to encode.)
    static func indexValue(_ value: StoredValue) -> [UInt8]? {
        guard let component = indexComponent(value) else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(indexKeyCapacity(component))
        KeyEncoding.append(component, to: &out)
        return out
    }

    /// A value as an index holds it (Format/record.md § Index keys); nil for a document.
    static func indexComponent(_ value: StoredValue) -> KeyComponent? {
        switch value {
        case .null: .null
        case .bool(let v): .bool(v)
        case .int(let v): .int(v)
        // −0 is stored as +0: one key for the two zeros, as they are one value to `==`.
        case .double(let v): .double(v == 0 ? 0 : v)
        case .float(let v): .double(v == 0 ? 0 : Double(v))
        case .decimal(let v): .double({ $0 == 0 ? 0 : $0 }(NSDecimalNumber(decimal: v).doubleValue))
        case .string(let v): .string(nfc(v))
        case .date(let v): .date(v)
        case .uuid(let v): .uuid(v)
        case .url(let v): .string(nfc(v.absoluteString))
        case .data(let v): .bytes(Array(v))
        case .reference(let v): .uint(v)
        case .document: nil
        }
    }

    /// The entry of an object in a compound index (Format/record.md § Compound index keys): the
    /// elements' values in order, then the primary key — except in a uniqueness constraint when
    /// no element is nil, where the values alone are the key (so a second object with the same
    /// values is found by one lookup). The value of a compound entry is the primary key.
    static func compoundEntries(_ values: [StoredValue], _ index: CompoundIndex, key: UInt64) -> [(key: [UInt8], checksUniqueness: Bool)] {
        var entries: [(key: [UInt8], checksUniqueness: Bool)] = []
        forEachCompoundEntry(values, index, key: key) { entries.append(($0, $1)) }
        return entries
    }

    /// `compoundEntries`, handed to `body` one by one: a save's single entry per object and
    /// index costs no array of entries.
    static func forEachCompoundEntry(_ values: [StoredValue], _ index: CompoundIndex, key: UInt64,
                                     _ body: (_ key: [UInt8], _ checksUniqueness: Bool) throws -> Void) rethrows {
        // One value per element (no document field): one entry, encoded straight from the slots
        // (no array of the elements' values).
        if !index.isMultiValued {
            guard index.slots.allSatisfy({ $0 < values.count }),
                  let entry = compoundEntry(elements: index.slots.lazy.map { values[$0] }, isUnique: index.isUnique, key: key) else { return }
            try body(entry.key, entry.checksUniqueness)
            return
        }
        for entry in multiValuedEntries(values, index, key: key) { try body(entry.key, entry.checksUniqueness) }
    }

    /// The entries of an index with a document field, one per combination of its elements'
    /// values (see `compoundEntries`).
    private static func multiValuedEntries(_ values: [StoredValue], _ index: CompoundIndex, key: UInt64) -> [(key: [UInt8], checksUniqueness: Bool)] {
        // Each element's values: one, or for a document field one per array item (none for an
        // object); then one entry per combination.
        var combinations: [[StoredValue]] = [[]]
        for (i, element) in index.elements.enumerated() {
            guard element.slot < values.count else { return [] }
            let path = index.documentPaths[i]
            let choices = path.isEmpty ? [values[element.slot]] : documentIndexValues(values[element.slot], path)
            combinations = combinations.flatMap { prefix in choices.map { prefix + [$0] } }
        }
        var seen = Set<[UInt8]>()
        return combinations.compactMap { compoundEntry(elements: $0, isUnique: index.isUnique, key: key) }.filter { seen.insert($0.key).inserted }
    }

    /// The values a document field is indexed under (Format/record.md § Compound index keys):
    /// numbers as doubles, strings, booleans; nil when the field or a document on the way is
    /// missing or nil; each item of an array (objects in it left out); nothing for an object.
    static func documentIndexValues(_ value: StoredValue, _ path: [String]) -> [StoredValue] {
        guard case .document(let data) = value, var json = try? JSONDecoder().decode(JSONValue.self, from: data) else { return [.null] }
        for name in path {
            guard case .object(let fields) = json else { return [.null] }
            json = fields[name] ?? .null
        }
        func scalar(_ v: JSONValue) -> StoredValue? {
            switch v {
            case .null: .null
            case .bool(let b): .bool(b)
            case .int(let i): .double(Double(i))
            case .double(let d): .double(d)
            case .string(let s): .string(s)
            case .array, .object: nil
            }
        }
        switch json {
        case .object: return []
        case .array(let items):
            var out: [StoredValue] = []
            for item in items { if let v = scalar(item), !out.contains(v) { out.append(v) } }
            return out
        default: return scalar(json).map { [$0] } ?? []
        }
    }

    /// A compound entry from the elements' values in order.
    static func compoundEntry<Elements: Collection>(elements: Elements, isUnique: Bool, key: UInt64) -> (key: [UInt8], checksUniqueness: Bool)?
    where Elements.Element == StoredValue {
        var out: [UInt8] = []
        out.reserveCapacity(16 * elements.count)
        var hasNull = false
        for value in elements {
            guard let component = indexComponent(value) else { return nil }
            if case .null = component { hasNull = true }
            KeyEncoding.append(component, to: &out)
        }
        let checks = isUnique && !hasNull
        if !checks { PrimaryKey.appendBytes(key, to: &out) }
        return (out, checks)
    }

    /// A string in Unicode normalization form C, as index keys hold strings (Format/record.md
    /// § Index keys): canonically equivalent strings are one key, as they are one value to `==`.
    static func nfc(_ s: String) -> String {
        s.utf8.allSatisfy { $0 < 0x80 } ? s : s.precomposedStringWithCanonicalMapping
    }

    /// Deletes every link of `key` in `p`, through `batch`.
    private func deleteLinks(of key: UInt64, _ p: PropertyInfo, _ txn: WriteTransaction, _ batch: inout WriteBatch) throws {
        for k in try Self.links(of: key, in: p.linkTree, txn) { try batch.delete(k, in: p.linkTree, txn) }
    }

    /// The keys of every link whose source is `key` in the links tree `tree` (its 8-byte prefix).
    static func links(of key: UInt64, in tree: String, _ txn: WriteTransaction) throws -> [[UInt8]] {
        let prefix = PrimaryKey.bytes(key)
        var keys: [[UInt8]] = []
        var cursor = try txn.cursor(in: tree)
        var entry = try cursor.seek(to: prefix)
        while let (k, _) = entry, k.starts(with: prefix) {
            keys.append(k)
            entry = try cursor.next()
        }
        return keys
    }

    private func writeLinks(of o: ManagedObject, _ p: PropertyInfo, _ state: ToManyState, _ txn: WriteTransaction,
                            _ batch: inout WriteBatch) throws {
        if p.isOrdered {
            try deleteLinks(of: o.key, p, txn, &batch)
            let members = try state.members ?? members(of: o, p)
            for (i, target) in members.enumerated() {
                var k = PrimaryKey.bytes(o.key)
                PrimaryKey.appendBytes(UInt64(i + 1) << 16, to: &k)
                batch.put(PrimaryKey.bytes(target), for: k, in: p.linkTree)
            }
            return
        }
        if state.isNew {
            for target in state.members ?? [] { batch.putLink(o.key, target, in: p.linkTree) }
            return
        }
        for target in state.removed {
            try batch.delete(linkKey(o.key, target), in: p.linkTree, txn)
        }
        for target in state.added {
            batch.putLink(o.key, target, in: p.linkTree)
        }
    }
}

/// The key of an unordered link: source key ‖ target key, big-endian (Format/record.md § Links).
func linkKey(_ source: UInt64, _ target: UInt64) -> [UInt8] {
    var key = [UInt8](repeating: 0, count: 16)
    key.withUnsafeMutableBytes { raw in
        raw.storeBytes(of: source.bigEndian, toByteOffset: 0, as: UInt64.self)
        raw.storeBytes(of: target.bigEndian, toByteOffset: 8, as: UInt64.self)
    }
    return key
}

extension WriteBatch {
    /// Puts `source`'s link to `target` in the to-many `p`'s tree: `source ‖ target` when
    /// unordered, `source ‖ position → target` when ordered (`position` 0, 1, 2 … becomes the
    /// multiples of 65 536 of Format/record.md § Links).
    mutating func putLink(_ source: UInt64, _ p: PropertyInfo, _ target: UInt64, position: Int) {
        if p.isOrdered {
            var k = PrimaryKey.bytes(source)
            PrimaryKey.appendBytes(UInt64(position + 1) << 16, to: &k)
            put(PrimaryKey.bytes(target), for: k, in: p.linkTree)
        } else {
            putLink(source, target, in: p.linkTree)
        }
    }
}

/// The puts of a save, grouped by tree (W1): the engine applies consecutive puts to one tree
/// sorted, so a save writes each tree's entries in one ordered run rather than interleaving
/// records, links and index entries. Unique index entries are checked against the store and
/// against each other before anything is put. Deletes are grouped by tree too and made in key
/// order, a few thousand at a time (WriteTransaction.delete(_:in:), packed in DeleteKeys),
/// before any put.
struct WriteBatch {
    /// Deletes by tree not made yet: at most `deleteChunk` per tree (then they are made), so a
    /// save of many deletions does not hold all their keys.
    private var deletes: [String: DeleteKeys] = [:]
    static let deleteChunk = 8_192

    /// Puts by tree, in the order the trees were first named (a save names a handful of trees,
    /// and consecutive puts mostly go to the same one: `last` finds it without a search).
    /// Entries are packed (PutEntries): a save of 100 000 notes puts about a million, and as
    /// two arrays each they outweighed the bytes they held.
    private var puts: [(tree: String, entries: PutEntries)] = []
    private var treeIndex: [String: Int] = [:]
    private var last = 0
    private var uniques: [String: [[UInt8]: (owner: UInt64, what: UniqueOwner)]] = [:]
    /// Two objects of this save that want one unique entry.
    private var clashes: [UniqueClash] = []

    /// Deletes `key` from `tree` — now, with the others of its chunk, or in `applyDeletes`.
    mutating func delete(_ key: [UInt8], in tree: String, _ txn: WriteTransaction) throws {
        deletes[tree, default: DeleteKeys()].append(key)
        if deletes[tree]?.count ?? 0 >= Self.deleteChunk, let keys = deletes.removeValue(forKey: tree) {
            try txn.delete(keys, in: tree)
        }
    }

    /// A tree's gathered puts taking more than this many bytes are made by `putLargeRuns`.
    static let runBytes = 4 << 20

    /// Makes the puts gathered for each tree whose entries passed `runBytes`, after that tree's
    /// deletes not made yet, and frees them: so a large save holds a few megabytes of encoded
    /// records and links at a time, not all of them beside the pages they become. Only for a
    /// caller that never asks to delete a key after putting it in the same batch (a save asks
    /// for every delete of a key it also puts before that put: old index entries first, an
    /// ordered relationship's links before its new ones); unique entries wait for `apply`.
    /// Returns how many runs it put.
    @discardableResult
    mutating func putLargeRuns(_ txn: WriteTransaction, over runBytes: Int = WriteBatch.runBytes) throws -> Int {
        guard puts.contains(where: { $0.entries.footprint >= runBytes }) else { return 0 }
        // Everything gathered will be put (or the transaction aborts): when that cannot be
        // logged, the log is given up before this run is copied into it.
        txn.expectPuts(puts.map(\.entries))
        var made = 0
        for i in puts.indices where puts[i].entries.footprint >= runBytes {
            let tree = puts[i].tree
            if let keys = deletes.removeValue(forKey: tree) { try txn.delete(keys, in: tree) }
            let entries = puts[i].entries
            puts[i].entries = PutEntries()
            try txn.put(entries: entries, in: tree)
            made += 1
        }
        return made
    }

    /// Makes the deletes not made yet: before `uniqueClashes` and `apply`, which must see them.
    mutating func applyDeletes(_ txn: WriteTransaction) throws {
        for tree in deletes.keys.sorted() {
            guard let keys = deletes.removeValue(forKey: tree) else { continue }
            try txn.delete(keys, in: tree)
        }
    }

    mutating func put(_ value: [UInt8], for key: [UInt8], in tree: String) {
        select(tree)
        puts[last].entries.append(key: key, value: value)
    }

    /// Puts the primary key `value` (its 8 bytes, as `PrimaryKey.bytes`) under `key`, without
    /// an array for it: a compound index entry's value.
    mutating func put(primaryKey value: UInt64, for key: [UInt8], in tree: String) {
        select(tree)
        puts[last].entries.append(key: key, valueCapacity: 8) { PrimaryKey.appendBytes(value, to: &$0) }
    }

    /// Puts the unordered link `source → target` (key `linkKey(source, target)`, no value)
    /// without making an array for its key (a save of 100 000 notes puts half a million).
    mutating func putLink(_ source: UInt64, _ target: UInt64, in tree: String) {
        select(tree)
        puts[last].entries.append(keyOf: source, target)
    }

    /// Puts the record of `values` under `key` in its entity's records tree, encoded straight
    /// into the batch (no array per record).
    mutating func putRecord(_ values: [StoredValue], of entity: EntityInfo, key: UInt64, rowVersion: UInt64, schemaVersion: UInt32) {
        select(entity.recordsTree)
        withUnsafeBytes(of: key.bigEndian) { keyBytes in   // PrimaryKey.bytes, with no array
            puts[last].entries.append(rawKey: keyBytes, valueCapacity: entity.recordCapacity(values)) { out in
                entity.appendRecord(values, rowVersion: rowVersion, schemaVersion: schemaVersion, to: &out)
            }
        }
    }

    /// Makes `tree`'s entries the ones `last` names.
    private mutating func select(_ tree: String) {
        guard last >= puts.count || puts[last].tree != tree else { return }
        // A save's puts go to a few trees in turn (a record, its indexes, its links), named by
        // the same Strings each time: comparing the names, equal by their bits, finds the tree
        // sooner than hashing its name (SipHash per put was a thirtieth of a batch insert).
        if puts.count <= 16, let i = puts.firstIndex(where: { $0.tree == tree }) {
            last = i
            return
        }
        if let i = treeIndex[tree] {
            last = i
        } else {
            puts.append((tree, PutEntries()))
            last = puts.count - 1
            treeIndex[tree] = last
        }
    }

    mutating func putUnique(_ owner: UInt64, for key: [UInt8], in tree: String, _ what: UniqueOwner) {
        if let other = uniques[tree]?[key], other.owner != owner {
            clashes.append(UniqueClash(
                constraint: what.constraint, owner: owner, other: other.owner,
                error: DocStoreError(.uniqueConstraint, "\(what.subject), and \(what.valueText) is given to both \(what.entity)/\(other.owner & PrimaryKey.sequenceMask) and \(what.entity)/\(owner & PrimaryKey.sequenceMask)", entity: what.entity, property: what.property)))
            return
        }
        uniques[tree, default: [:]][key] = (owner, what)
    }

    /// Every unique entry that two objects of the save want, or that another stored object
    /// already has; empty when the save keeps every constraint.
    func uniqueClashes(_ txn: WriteTransaction) throws -> [UniqueClash] {
        var out = clashes
        for tree in uniques.keys.sorted() {
            for (key, u) in uniques[tree] ?? [:] {
                if let stored = try txn.get(key, in: tree), let other = PrimaryKey.read(stored), other != u.owner {
                    out.append(UniqueClash(
                        constraint: u.what.constraint, owner: u.owner, other: other,
                        error: DocStoreError(.uniqueConstraint, "\(u.what.subject), and \(u.what.valueText) is already used by \(u.what.entity)/\(other & PrimaryKey.sequenceMask)", entity: u.what.entity, property: u.what.property)))
                }
            }
        }
        return out
    }

    /// Whether the batch holds no entry (as after `apply`).
    var isEmpty: Bool { uniques.isEmpty && deletes.isEmpty && puts.allSatisfy { $0.entries.isEmpty } }

    /// Puts everything (after `uniqueClashes` found none), and empties the batch as it goes:
    /// each tree's entries are freed once they are in its pages and the log, so a large save
    /// does not hold every tree's entries while the last tree's pages are made.
    mutating func apply(_ txn: WriteTransaction) throws {
        try applyDeletes(txn)      // nothing when the caller made them already
        for tree in uniques.keys.sorted() {
            for (key, u) in uniques[tree] ?? [:] { try txn.put(PrimaryKey.bytes(u.owner), for: key, in: tree) }
        }
        uniques = [:]
        txn.expectPuts(puts.map(\.entries))
        for i in puts.indices.sorted(by: { puts[$0].tree < puts[$1].tree }) {
            let entries = puts[i].entries
            puts[i].entries = PutEntries()
            try txn.put(entries: entries, in: puts[i].tree)
        }
        puts = []
        treeIndex = [:]
        last = 0
    }
}

/// What a unique index entry is for: the constraint and the values, put into words only when
/// a save breaks it (not for every object saved).
struct UniqueOwner {
    let entity: String
    /// The attribute, or a constraint's properties (`folder, title`).
    let property: String
    /// A uniqueness constraint over several properties.
    let together: Bool
    let values: [StoredValue]

    /// `Tag.name` or `Note(folder, title)`.
    var constraint: String { together ? "\(entity)(\(property))" : "\(entity).\(property)" }
    var subject: String { together ? "\(entity)(\(property)) must be unique together" : "\(entity).\(property) must be unique" }
    var valueText: String {
        together ? "(" + values.map { "\($0)" }.joined(separator: ", ") + ")" : values.map { "\($0)" }.joined()
    }
}
