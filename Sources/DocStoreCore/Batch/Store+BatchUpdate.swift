// Store+BatchUpdate: running a BatchUpdateRequest — the matching objects' records rewritten
// with new values in one write transaction, without managed objects (BatchWriter B1–B5).
//
//   BU1 objects are chosen inside the write transaction, by their saved values, with the
//       fetch planner (an index serves the predicate when it can): nothing can change between
//       choosing and writing.
//   BU2 a value is a constant, a QueryExpression evaluated with the object's saved values
//       (numbers widen to the attribute's type: `views + 1` on a Double), or for a to-one
//       relationship a target, whose inverse is kept in step (B2, B5). To-many relationships
//       are refused before anything is read: a batch sets values, a context edits memberships.
//   BU3 new values are validated as a save validates them; one bad object refuses the batch,
//       listing the problems (the first 100).
//   BU4 an object whose values come out the same is not rewritten, counted or recorded; a
//       changed one gets its next row version, and only the indexes whose slots changed are
//       rewritten (IndexEntries IE3).
//   BU5 a record is read and rewritten in part: unless an expression needs the whole object,
//       only the updated slots and those of the indexes they are in are decoded, and the new
//       record copies the other fields' bytes (RecordCoding.patch).

import Foundation
internal import DocStoreEngine

extension Store {
    /// Updates the matching objects in one transaction and records it in history.
    ///
    /// - Throws: ``DocStoreError/Code/unknownProperty`` for an unknown entity or property;
    ///   ``DocStoreError/Code/typeMismatch`` for a constant that does not fit its attribute or
    ///   a to-many relationship; ``DocStoreError/Code/invalidQuery`` for a predicate or
    ///   expression that does not fit the schema; ``DocStoreError/Code/validation`` listing
    ///   the objects whose new values break the entity's rules;
    ///   ``DocStoreError/Code/uniqueConstraint``; ``DocStoreError/Code/storage``. Nothing is
    ///   written when it throws.
    public func execute(_ request: BatchUpdateRequest, transactionAuthor: String? = nil) throws(DocStoreError) -> BatchResult {
        try executeUpdate(request, author: transactionAuthor, contextName: nil, origin: 0)
    }

    /// A new value of one property (BU2).
    private enum NewValue {
        case constant(StoredValue)
        case expression(QueryExpression, AttributeType)
        case target(Any?)
    }

    func executeUpdate(_ request: BatchUpdateRequest, author: String?, contextName: String?, origin: UInt64) throws(DocStoreError) -> BatchResult {
        guard let entity = model.entity(named: request.entityName) else {
            throw DocStoreError(.unknownProperty, "the schema has no entity \"\(request.entityName)\"", entity: request.entityName)
        }
        var updates: [(slot: Int, value: NewValue)] = []
        for (name, given) in request.propertiesToUpdate.sorted(by: { $0.key < $1.key }) {
            guard let p = entity.property(named: name) else {
                throw DocStoreError(.unknownProperty, "\(entity.name) has no property \"\(name)\"", entity: entity.name, property: name)
            }
            let value = BatchRowReader.unwrapped(given)
            switch p.kind {
            case .attribute(let a):
                if let e = value as? QueryExpression {
                    updates.append((p.slot, .expression(e, a.type)))
                } else if let stored = StoredValue.converting(value, to: a.type) {
                    updates.append((p.slot, .constant(stored)))
                } else {
                    throw DocStoreError(.typeMismatch, "the value \(value.map { String(describing: $0) } ?? "nil") does not fit \(a.type) attribute \(name)", entity: entity.name, property: name)
                }
            case .toOne:
                updates.append((p.slot, .target(value)))
            case .toMany:
                throw DocStoreError(.typeMismatch, "a batch update sets attributes and to-one relationships; \(entity.name).\(name) is to-many (change its members in a context)", entity: entity.name, property: name)
            }
        }
        let reader = BatchRowReader(entity: entity, model: model, storeID: identifier)
        let context = Context(store: self)
        return try runBatch(author: author, contextName: contextName, origin: origin, resultType: request.resultType) { writer in
            context.batchTransaction = writer.txn
            defer { context.batchTransaction = nil }
            // To-one targets are resolved once, against the store.
            var targets: [Int: StoredValue] = [:]
            var problems: [DocStoreError.Problem] = []
            for (slot, value) in updates {
                guard case .target(let given) = value else { continue }
                guard let given else { targets[slot] = .null; continue }
                switch try reader.target(given, for: entity.properties[slot], writer: writer) {
                case .key(let key): targets[slot] = .reference(key)
                case .problem(let message): problems.append(.init(entity: entity.name, property: entity.properties[slot].name, message))
                }
            }
            if !problems.isEmpty {
                throw DocStoreError(.validation, "batch update refused: \(problems[0].property ?? "a relationship") names no object it can take", entity: entity.name, property: problems[0].property, problems: problems)
            }

            var fetch = FetchRequest<ManagedObject>(entityName: entity.name, predicate: request.predicate)
            fetch.includesPendingChanges = false
            fetch.includesSubentities = request.includesSubentities
            let keys = try context.fetchKeys(fetch)
            let evaluator = QueryEvaluator(context: context, includesPendingChanges: false)
            var updated: [UInt64] = []
            var badObjects = 0
            // BU5: without expressions, only the slots the update and its indexes read are decoded.
            let updatedSlots = Set(updates.map(\.slot))
            let decodesAll = updates.contains { if case .expression = $0.value { true } else { false } }
            /// What updating an object of one entity needs, made once per entity: the fields
            /// decoded (BU5), whether an index reads an updated slot (when none does, no
            /// object's index entries are looked at), the fields a record keeps.
            struct Plan {
                let readMap: [Int]
                let touchesIndexes: Bool
                let slotForField: [Int]
            }
            var plans: [UInt32: Plan] = [:]
            func plan(_ objectEntity: EntityInfo) -> Plan {
                if let known = plans[objectEntity.id] { return known }
                let touches = objectEntity.properties.contains { $0.indexTree != nil && updatedSlots.contains($0.slot) }
                    || objectEntity.compoundIndexes.contains { $0.elements.contains { updatedSlots.contains($0.slot) } }
                let made = Plan(readMap: decodesAll ? objectEntity.slotForField : Self.slotsRead(by: updatedSlots, in: objectEntity),
                                touchesIndexes: touches, slotForField: objectEntity.slotForField)
                plans[objectEntity.id] = made
                return made
            }
            // The records are read through one cursor, in key order (the keys come sorted): no
            // descent from the root each. The batch's puts reach the records tree only when it
            // flushes; the cursor is made again after one. Each record is copied into one
            // buffer, patched into another and its key written into a third, all reused: a
            // batch of 500 000 objects made three arrays for each.
            var lookup = RecordLookup(writer.txn)
            var flushesSeen = writer.flushes
            var bytes: [UInt8] = []
            var patched: [UInt8] = []
            var keyBytes = [UInt8](repeating: 0, count: 8)
            var changes: [(fieldID: UInt32, value: StoredValue)] = []
            // The history's field list of the last object, shared with the next one that
            // changed the same fields (most do).
            var lastFields: (slots: [Int], fields: [UInt32]) = ([], [])
            // The object's stored values (those the plan decodes) and its new values by slot
            // (a few, sorted), both buffers reused: the old and new values were two arrays of
            // every slot per object.
            var old: [StoredValue] = []
            var newValues: [(slot: Int, value: StoredValue)] = []
            for key in keys {
                if writer.flushes != flushesSeen {
                    lookup = RecordLookup(writer.txn)
                    flushesSeen = writer.flushes
                }
                guard let objectEntity = model.entity(ofKey: key),
                      try lookup.visitRecord(key, objectEntity, { raw in
                          bytes.removeAll(keepingCapacity: true)
                          bytes.append(contentsOf: raw)
                      }) else { continue }
                let plan = plan(objectEntity)
                old.removeAll(keepingCapacity: true)
                old.append(contentsOf: objectEntity.defaults)
                let version = try RecordCoding.decode(bytes, key: key, into: &old, slotForField: plan.readMap, partial: !decodesAll)
                newValues.removeAll(keepingCapacity: true)
                let before = problems.count
                func problem(_ slot: Int, _ message: String) {
                    problems.append(.init(entity: "\(objectEntity.name)/\(key & PrimaryKey.sequenceMask)", property: objectEntity.properties[slot].name, message))
                }
                for (slot, update) in updates {
                    let new: StoredValue
                    switch update {
                    case .constant(let v): new = v
                    case .target: new = targets[slot] ?? .null
                    case .expression(let e, let type):
                        let result = try evaluator.value(e, key: key, values: old)
                        guard case .scalar(let v) = result, let fitted = v.widened(to: type) else {
                            problem(slot, "the expression \(e) gives \(result.elements.map(\.description).joined(separator: ", ")), which does not fit \(type)")
                            continue
                        }
                        new = fitted
                    }
                    // (Each slot is updated once: the updates come from a dictionary.)
                    if new != old[slot] { newValues.append((slot, new)) }
                }
                newValues.sort { $0.slot < $1.slot }
                for (slot, value) in newValues {
                    let p = objectEntity.properties[slot]
                    if let rules = p.rules, let message = Context.check(value, against: rules) { problem(slot, message) }
                    if p.requiresTarget, value.isNull { problem(slot, Context.missingTarget) }
                }
                if problems.count > before {
                    badObjects += 1
                    if problems.count > 100 { problems.removeLast(problems.count - 100) }
                    continue
                }
                guard !newValues.isEmpty, problems.isEmpty else { continue }     // BU4, BU3
                if plan.touchesIndexes {
                    var values = old
                    for (slot, value) in newValues { values[slot] = value }
                    let changed = Set(newValues.map(\.slot))
                    try IndexEntries.remove(key: key, objectEntity, values: old, writer.txn, affected: { $0.intersects(changed) })
                    IndexEntries.add(key: key, objectEntity, values: values, to: &writer.batch, affected: { $0.intersects(changed) })
                }
                changes.removeAll(keepingCapacity: true)
                for (slot, value) in newValues { changes.append((objectEntity.properties[slot].fieldID, value)) }
                changes.sort { $0.fieldID < $1.fieldID }
                try RecordCoding.patch(bytes, key: key, schemaVersion: catalog.schemaVersion, rowVersion: version + 1, changes: changes, into: &patched) { field in
                    Int(field) < plan.slotForField.count && plan.slotForField[Int(field)] >= 0
                }
                keyBytes.withUnsafeMutableBytes { $0.storeBytes(of: key.bigEndian, as: UInt64.self) }
                writer.batch.put(patched, for: keyBytes, in: objectEntity.recordsTree)
                for (slot, value) in newValues where objectEntity.properties[slot].isToOne {
                    let p = objectEntity.properties[slot]
                    if case .reference(let oldTarget) = old[slot] { try writer.removeInverse(of: p, target: oldTarget, source: key) }
                    if case .reference(let newTarget) = value { try writer.addInverse(of: p, target: newTarget, source: key) }
                }
                if !lastFields.slots.elementsEqual(newValues.lazy.map(\.slot)) || plans.count > 1 {
                    let slots = newValues.map(\.slot)
                    lastFields = (slots, slots.map { objectEntity.properties[$0].fieldID }.sorted())
                }
                writer.changes.append(RecordedChange(kind: .update, key: key, fields: lastFields.fields))
                updated.append(key)
            }
            if !problems.isEmpty {
                throw DocStoreError(.validation, "batch update refused: the new values of \(badObjects) object\(badObjects == 1 ? "" : "s") break \(entity.name)'s rules; nothing was changed",
                                    entity: entity.name, property: problems.count == 1 ? problems[0].property : nil, problems: problems)
            }
            return updated
        }
    }
}

extension Store {
    /// `entity.slotForField` keeping only the slots a batch update of `slots` reads (BU5): those
    /// slots, and every slot of an index that reads one of them (its old entries are removed
    /// and new ones added); the others are -1, stepped over undecoded.
    static func slotsRead(by slots: Set<Int>, in entity: EntityInfo) -> [Int] {
        var read = slots
        for index in entity.compoundIndexes where index.elements.contains(where: { slots.contains($0.slot) }) {
            for element in index.elements { read.insert(element.slot) }
        }
        return entity.slotForField(reading: read)
    }
}

extension StoredValue {
    /// This value as an attribute of `type` holds it: itself when it fits, a number widened
    /// or narrowed exactly (an Int to a Double, a whole Double to an Int) otherwise; nil when
    /// it cannot be (BU2).
    func widened(to type: AttributeType) -> StoredValue? {
        if fits(type) { return self }
        switch (self, type) {
        case (.int(let v), .double): return .double(Double(v))
        case (.int(let v), .float): return .float(Float(v))
        case (.int(let v), .decimal): return .decimal(Decimal(v))
        case (.double(let v), .float): return .float(Float(v))
        case (.double(let v), .decimal): return .decimal(Decimal(v))
        case (.float(let v), .double): return .double(Double(v))
        case (.double(let v), _) where type.integerRange != nil:
            guard let exact = Int64(exactly: v), type.integerRange?.contains(exact) ?? false else { return nil }
            return .int(exact)
        default: return nil
        }
    }
}
