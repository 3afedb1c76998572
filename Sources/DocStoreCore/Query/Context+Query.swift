// Context+Query: running fetch requests — fetch, count(for:) and explain — on the plans of
// QueryPlanner.
//
//   F1  Candidates come from the plan's source; each is tested against the predicate with the
//       values the request asks for (unsaved ones by default). A stored candidate from an index
//       is tested only against the conjuncts its ranges do not answer (QueryPlan.storedPredicate:
//       none when the index answers the predicate exactly, F4's case); an unsaved one against
//       the whole predicate. Objects are made only for the results, after the window is cut.
//   F2  With pending changes included, the context's inserted and changed objects of the entity
//       are tested with their unsaved values instead of their stored ones, and its deleted
//       objects are left out — whatever the source said.
//   F3  Results are ordered by the sort keys, then by primary key (so ties and unsorted fetches
//       are deterministic); the window (offset, limit) is applied last. A walk of the index of
//       the one sort key yields that order, either way, once each run of ties is put in key
//       order as it ends; every source yields key order, so an unsorted fetch sorts nothing.
//   F4  count(for:) reads only index entries when the plan's index answers the predicate alone
//       and no unsaved object of the entity could change the answer.
//   F6  Keys in the order of one indexed sort key, with no predicate or one that index answers
//       alone (a results controller's list): the index is walked alone — no record read, no
//       sort — unless unsaved objects of the entity join the result.
//   F7  fetchKeys of an unsorted, unwindowed request reads only the index when it answers the
//       predicate alone (as F4's count does).
//   F5  Keyset pagination (`fetchAfter`): only matches whose sort values, then primary key, come
//       after the anchor's in the request's order count — tested as candidates arrive, so an
//       index walk in sort order still stops once the window is full; the walk starts at the
//       anchor's value.
//   F8  A fetch that fills its objects gives each its record instead of decoded values, when
//       the rows need no sorting here: the record is checked whole first (a damaged one fails
//       the fetch, as a decode did), and the object decodes a property as it is read.

import Foundation
internal import DocStoreEngine

extension Context {
    /// The objects `request` describes, ordered and windowed.
    ///
    /// ```swift
    /// let request = FetchRequest<Note>(predicate: try QueryPredicate(format: "folder.name == %@", "Inbox"),
    ///                                  sortDescriptors: [SortKey("createdAt", ascending: false)], fetchLimit: 20)
    /// let latest = try context.fetch(request)
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/invalidQuery`` before reading anything when a key path
    ///   or variable does not resolve; ``DocStoreError/Code/unknownProperty`` for an unknown
    ///   entity; ``DocStoreError/Code/storage``, ``DocStoreError/Code/corrupt``.
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>) throws(DocStoreError) -> [T] {
        let (plan, evaluator) = try prepare(request)
        let filling = request.includesPropertyValues && !request.returnsObjectsAsFaults
        var rows = try matches(plan, evaluator, request, ordered: true, wholeRecords: filling)
        var out: [T] = []
        out.reserveCapacity(rows.count)
        registry.reserveCapacity(registry.count + rows.count)
        for i in rows.indices {
            let object = try materialize(rows[i].key)
            if filling, object.isFault {
                // Moved out, not copied: the record is not touched until a property is read.
                if let record = rows[i].record.take() {
                    fill(object, record: record, rowVersion: rows[i].rowVersion)
                    object.awakeFromFetch()
                } else if let values = rows[i].values {
                    fill(object, values, rowVersion: rows[i].rowVersion)
                    object.awakeFromFetch()
                }
            }
            if let typed = object as? T { out.append(typed) }
        }
        // Faults with their records at hand, read ahead for when they fire (R5).
        if request.returnsObjectsAsFaults && request.includesPropertyValues { try readAhead(out.filter(\.isFault)) }
        if !request.relationshipKeyPathsForPrefetching.isEmpty {
            try prefetch(request.relationshipKeyPathsForPrefetching, from: out, entity: plan.entity)
        }
        return out
    }

    /// The objects `request` describes, made and filled `batchSize` at a time as the result is
    /// indexed: the fetch itself keeps only their keys, so a list of a million objects stays
    /// small in memory.
    public func fetch<T: ManagedObject>(_ request: FetchRequest<T>, batchSize: Int) throws(DocStoreError) -> FetchResultsCollection<T> {
        let (plan, evaluator) = try prepare(request)
        let rows = try matches(plan, evaluator, request, ordered: true, wholeRecords: false)
        let keys = rows.compactMap { row in store.model.entity(ofKey: row.key).map { (key: row.key, entity: $0) } }
        return FetchResultsCollection(context: self, keys: keys, batchSize: batchSize)
    }

    /// The object IDs of the objects `request` describes, in its order, without making objects
    /// (Core Data's object-ID result type, SwiftData's `fetchIdentifiers`).
    public func fetchIdentifiers<T: ManagedObject>(_ request: FetchRequest<T>) throws(DocStoreError) -> [ObjectID] {
        let (plan, evaluator) = try prepare(request)
        let rows = try matches(plan, evaluator, request, ordered: true, wholeRecords: false)
        return rows.compactMap { row in
            store.model.entity(ofKey: row.key).map { ObjectID(store: store.identifier, entity: $0.name, key: row.key) }
        }
    }

    /// The primary keys of what `request` describes, in its order (a results controller keeps
    /// only these: no object IDs made for a million rows).
    /// Ordered by one indexed key and unfiltered, they come from walking the index alone (F6).
    /// F7: unsorted and unwindowed, with an index that answers the predicate alone and no
    /// unsaved object that could change the answer, the keys come from the index entries alone
    /// (a batch update or delete by an indexed date reads no record to choose its objects).
    func fetchKeys<T: ManagedObject>(_ request: FetchRequest<T>) throws(DocStoreError) -> [UInt64] {
        let (plan, evaluator) = try prepare(request, keysOnly: true)
        if plan.sourceIsExact, let (reader, ranges) = plan.source.indexRead, request.fetchAfter == nil,
           request.sortDescriptors.isEmpty, request.fetchLimit == 0, request.fetchOffset == 0,
           !(request.includesPendingChanges && hasPendingObjects(of: plan.kinds)) {
            var keys: [UInt64] = []
            try readStore { txn in
                for range in ranges {
                    try walk(range, of: reader, descending: false, txn) { _, key in
                        if plan.kinds.contains(PrimaryKey.entity(of: key)) { keys.append(key) }
                        return true
                    }
                }
            }
            keys.sort()     // F3: primary-key order
            var unique: [UInt64] = []
            unique.reserveCapacity(keys.count)
            for key in keys where unique.last != key { unique.append(key) }
            return unique
        }
        return try matching(plan, evaluator, request, ordered: true, wholeRecords: false, countOnly: false, keysOnly: true).rows.map(\.key)
    }

    /// How many objects `request` would fetch (its window included), without making them.
    public func count<T: ManagedObject>(for request: FetchRequest<T>) throws(DocStoreError) -> Int {
        try counted(request).count
    }

    /// The count, with how many records it read (F4: none when the index answers alone).
    func counted<T: ManagedObject>(_ request: FetchRequest<T>) throws(DocStoreError) -> (count: Int, recordsRead: Int) {
        let (plan, evaluator) = try prepare(request)
        if plan.sourceIsExact, let (reader, ranges) = plan.source.indexRead, request.fetchAfter == nil,
           !(request.includesPendingChanges && hasPendingObjects(of: plan.kinds)) {
            var n = 0
            try readStore { txn in
                for range in ranges {
                    try walk(range, of: reader, descending: false, txn) { _, key in
                        if plan.kinds.contains(PrimaryKey.entity(of: key)) { n += 1 }
                        return true
                    }
                }
            }
            n = max(0, n - request.fetchOffset)
            return (request.fetchLimit > 0 ? min(n, request.fetchLimit) : n, 0)
        }
        var n = try matching(plan, evaluator, request, ordered: false, wholeRecords: false, countOnly: true).count
        n = max(0, n - request.fetchOffset)
        return (request.fetchLimit > 0 ? min(n, request.fetchLimit) : n, evaluator.recordsRead)
    }

    /// The plan `fetch` would follow for `request`, in words: the source of candidates (which
    /// index and bounds, which relationship, or a scan), the filter, how the order is made, the
    /// window and the unsaved objects considered.
    ///
    /// With `analyze`, the fetch also runs (making no objects) and a last line says what it read:
    /// index entries, records, and how many objects matched — SQL's EXPLAIN ANALYZE.
    public func explain<T: ManagedObject>(_ request: FetchRequest<T>, analyze: Bool = false) throws(DocStoreError) -> String {
        let (plan, evaluator) = try prepare(request)
        let pending = request.includesPendingChanges ? try pendingObjects(of: plan.kinds, source: plan.source).live.count : nil
        var text = plan.explanation(limit: request.fetchLimit, offset: request.fetchOffset, pendingCandidates: pending)
        if analyze {
            let rows = try matches(plan, evaluator, request, ordered: true, wholeRecords: false)
            text += "\n  read: \(evaluator.entriesRead) index entr\(evaluator.entriesRead == 1 ? "y" : "ies"), \(evaluator.recordsRead) record\(evaluator.recordsRead == 1 ? "" : "s"); \(rows.count) result\(rows.count == 1 ? "" : "s")"
        }
        return text
    }

    // MARK: - Running a plan

    /// A match: its key, its values as tested (nil when the object in the context already has
    /// them) and the row version they were read at.
    struct QueryRow {
        let key: UInt64
        let values: [StoredValue]?
        let rowVersion: UInt64
        /// A stored match's whole record, checked (`RecordCoding.validate`) but not decoded:
        /// what a fetch that fills its objects keeps instead of `values`.
        var record: [UInt8]? = nil
    }

    /// `keysOnly`: only keys are wanted, so an index in the sort's order is worth walking even
    /// without a window.
    func prepare<T: ManagedObject>(_ request: FetchRequest<T>, keysOnly: Bool = false) throws(DocStoreError) -> (QueryPlan, QueryEvaluator) {
        if let error = request.deferredError { throw error }
        if inbox != nil || !unprocessed.isEmpty { processPendingChanges() }
        // The class's entity found by the class (not its name hashed again), unless named.
        let known = request.entityName == nil ? store.model.entity(ofClass: T.self) : nil
        let name = request.entityName ?? known?.name ?? _typeName(T.self, qualified: false)
        guard let entity = known ?? store.model.entity(named: name) else {
            throw DocStoreError(.unknownProperty, "the schema has no entity \"\(name)\"", entity: name)
        }
        let limit = keysOnly ? Int.max : request.fetchLimit
        // A fetch of a shape planned before follows that plan with its own constants (PlanCache).
        let plan: QueryPlan
        if let known = planCache.plan(entity: entity, includesSubentities: request.includesSubentities,
                                      predicate: request.predicate, sorts: request.sortDescriptors, limit: limit) {
            plan = known
        } else {
            plan = try QueryPlanner.plan(entity: entity, includesSubentities: request.includesSubentities,
                                         predicate: request.predicate, sorts: request.sortDescriptors, limit: limit, model: store.model)
            planCache.keep(plan, includesSubentities: request.includesSubentities, sorts: request.sortDescriptors, limit: limit)
        }
        return (plan, QueryEvaluator(context: self, includesPendingChanges: request.includesPendingChanges))
    }

    /// The unsaved objects of `kinds` a fetch tests with their unsaved values (F2): this
    /// context's that are not deleted (found per kind, not by walking every changed object),
    /// and in a child context its ancestors' as this context sees them (CC3). `shadowed` says
    /// whether a stored row's key is one of these or of a deleted unsaved object: the store's
    /// values of it do not count.
    /// With an equality on an indexed attribute as the source, only the unsaved objects that
    /// hold one of its values are tested (looked up by a hash of the value's index encoding: an
    /// object whose value shares the hash is tested too, and fails the predicate).
    private func pendingObjects(of kinds: Set<UInt32>, source: QuerySource? = nil) throws(DocStoreError) -> (live: [ManagedObject], shadowed: (UInt64) -> Bool) {
        var out: [ManagedObject]
        if case .index(let p, let ranges)? = source, kinds.count == 1, let kind = kinds.first, !ranges.isEmpty,
           ranges.allSatisfy({ $0.isPoint && $0.lower != nil }),
           let properties = store.model.entity(id: kind)?.properties, p.slot < properties.count, properties[p.slot].name == p.name {
            for object in changed.objectsToEncode(kind: kind, slot: p.slot) { try fulfill(object) }
            out = changed.liveObjects(of: kind, slot: p.slot, encodedAs: ranges.compactMap(\.lower))
        } else {
            out = changed.liveObjects(of: kinds)
        }
        guard let parent else { return (out, { [changed] in changed[$0] != nil }) }
        let mirrored = parent.pendingKeys(of: kinds)
        for key in mirrored where changed[key] == nil {
            let mirror = try materialize(key)
            try fulfill(mirror)      // a deletion in the parent shows once it is read
            if !mirror.isDeleted { out.append(mirror) }
        }
        return (out, { [changed] in changed[$0] != nil || mirrored.contains($0) })
    }

    private func hasPendingObjects(of kinds: Set<UInt32>) -> Bool {
        changed.containsAny(of: kinds) || !(parent?.pendingKeys(of: kinds).isEmpty ?? true)
    }

    /// The matches of a plan, ordered (`ordered`, or whenever a window is cut) and windowed.
    /// With `wholeRecords` false (a count, IDs), matches keep only the values the plan read.
    func matches<T>(_ plan: QueryPlan, _ evaluator: QueryEvaluator, _ request: FetchRequest<T>, ordered: Bool,
                    wholeRecords: Bool, windowed: Bool = true) throws(DocStoreError) -> [QueryRow] {
        try matching(plan, evaluator, request, ordered: ordered, wholeRecords: wholeRecords, windowed: windowed, countOnly: false).rows
    }

    /// The matches, or with `countOnly` only how many there are (no rows kept, no window cut:
    /// a count needs neither).
    private func matching<T>(_ plan: QueryPlan, _ evaluator: QueryEvaluator, _ request: FetchRequest<T>, ordered: Bool,
                             wholeRecords: Bool, windowed: Bool = true, countOnly: Bool,
                             keysOnly: Bool = false) throws(DocStoreError) -> (rows: [QueryRow], count: Int) {
        let counters = MatchCounters()
        /// Whether `rows` are already in the request's order: a walk of the index of its one sort
        /// key, either way, with each run of ties put in key order (F3).
        var inSortOrder = false
        let limit = windowed ? request.fetchLimit : 0
        let offset = windowed ? request.fetchOffset : 0
        let (pending, shadowed) = evaluator.includesPendingChanges ? try pendingObjects(of: plan.kinds, source: plan.source) : ([], { _ in false })
        let noPending = !evaluator.includesPendingChanges || (parent == nil && !changed.containsAny(of: plan.kinds))
        var rows: [QueryRow] = []

        // F5: the anchor's sort values, and whether a match comes after it.
        let anchor = try request.fetchAfter.map { (id) throws(DocStoreError) in try anchorValues(id, plan, evaluator) }
        func isAfterAnchor(_ key: UInt64, _ values: [StoredValue]) throws(DocStoreError) -> Bool {
            guard let anchor else { return true }
            return Self.compare(try sortValues(plan, evaluator, key, values), key, anchor.values, anchor.key, plan) > 0
        }

        /// Whether a stored candidate is of the fetched kinds and not replaced by an unsaved
        /// object (no hashing in the usual case of one kind and no pending changes).
        let onlyKind: UInt32? = plan.kinds.count == 1 ? plan.kinds.first : nil
        func isWanted(_ key: UInt64) -> Bool {
            let id = PrimaryKey.entity(of: key)
            if let onlyKind { guard id == onlyKind else { return false } } else if !plan.kinds.contains(id) { return false }
            return noPending || !shadowed(key)
        }

        // An index that answers the predicate exactly yields only matches: its stored candidates
        // are not tested again (unsaved objects still are, F2). Nor are the conjuncts its ranges
        // answer: stored candidates are tested against the rest.
        let testsStored = !(plan.sourceIsExact && plan.source.indexRead != nil)
        let storedPredicate = testsStored ? plan.storedPredicate : nil
        // A fetch that fills its objects keeps each match's record, checked, for its object to
        // decode property by property — unless the rows are sorted here, which needs their values.
        let walksInSortOrder = ordered && plan.indexOrder != nil && plan.sorts.count == 1 && plan.source.indexRead != nil
        let keepsRecords = wholeRecords && (plan.sorts.isEmpty || walksInSortOrder)
        // The common predicate shape, compiled to slots (QuerySlotFilter); else the evaluator.
        let slotFilter = storedPredicate.flatMap { QuerySlotFilter($0, entity: plan.entity) }
        // Per entity: how its candidates are read (CandidateReading); the last entity is kept
        // at hand, as candidates mostly share one.
        var perEntity: [UInt32: CandidateReading] = [:]
        var lastEntity: CandidateReading?
        func entity(of key: UInt64) -> CandidateReading? {
            let id = PrimaryKey.entity(of: key)
            if let lastEntity, lastEntity.entity.id == id { return lastEntity }
            if let known = perEntity[id] {
                lastEntity = known
                return known
            }
            guard let entity = store.model.entity(id: id) else { return nil }
            // F5's anchor compares decoded sort values: with an anchor, decode first.
            let reading = CandidateReading(entity, plan, wholeRecords: wholeRecords, filter: anchor == nil ? slotFilter : nil,
                                           testsPredicate: storedPredicate != nil, evaluator)
            perEntity[id] = reading
            lastEntity = reading
            return reading
        }
        // One decode buffer for every candidate: only a kept match copies it.
        var scratch: [StoredValue] = []
        var scratchEntity = UInt32.max

        // Counted here and added to the evaluator's once: not its property written per record.
        defer { evaluator.recordsRead += counters.recordsRead }

        /// Tests one stored candidate (F1), wanted (`isWanted`) and read as `reading` says.
        func consider(_ key: UInt64, _ reading: CandidateReading, bytes record: UnsafeRawBufferPointer) throws(DocStoreError) {
            counters.recordsRead += 1
            if let filter = reading.filter {
                // Decided on the bytes; a match is decoded only when it is kept.
                guard try filter.matches(record, key: key) else { return }
                if countOnly {
                    counters.tally += 1
                    return
                }
                if keepsRecords {
                    rows.append(try QueryRow(key: key, checked: record))
                    return
                }
                let entity = reading.entity, partial = reading.partial
                var values = entity.defaults
                let rowVersion = try RecordCoding.decode(record, key: key, into: &values,
                                                         slotForField: wholeRecords ? entity.slotForField : partial?.table ?? entity.slotForField,
                                                         partial: !wholeRecords && partial != nil)
                rows.append(QueryRow(key: key, values: values, rowVersion: rowVersion))
                return
            }
            // Nothing to test: a fetch that fills its objects keeps the record as it is.
            if keepsRecords && anchor == nil && storedPredicate == nil {
                rows.append(try QueryRow(key: key, checked: record))
                return
            }
            let entity = reading.entity, partial = reading.partial
            if let partial, scratchEntity == entity.id {
                for (slot, decoded) in partial.slots.enumerated() where decoded { scratch[slot] = entity.defaults[slot] }
            } else {
                scratch = entity.defaults
                scratchEntity = partial == nil ? .max : entity.id
            }
            var rowVersion = try RecordCoding.decode(record, key: key, into: &scratch, slotForField: partial?.table ?? entity.slotForField,
                                                     partial: partial != nil)
            let matched: Bool
            if let slotFilter {
                matched = try slotFilter.matches(scratch, evaluator)
            } else if let p = storedPredicate {
                matched = try evaluator.test(p, key: key, values: scratch, available: partial?.slots)
            } else {
                matched = true
            }
            guard matched, try isAfterAnchor(key, scratch) else { return }
            if countOnly {
                counters.tally += 1
                return
            }
            if keepsRecords {
                rows.append(try QueryRow(key: key, checked: record))
                return
            }
            var values = scratch
            if partial != nil && wholeRecords {
                values = entity.defaults
                rowVersion = try RecordCoding.decode(record, key: key, into: &values, slotForField: entity.slotForField)
            }
            rows.append(QueryRow(key: key, values: values, rowVersion: rowVersion))
        }

        switch plan.source {
        case .scan:
            try readStore { txn in
                for id in plan.kinds.sorted() {
                    guard let kind = store.model.entity(id: id) else { continue }
                    try txn.forEachRecordInPlace(of: kind) { key, raw in
                        guard isWanted(key), let reading = entity(of: key) else { return }
                        try consider(key, reading, bytes: raw)
                    }
                }
            }
        case .index where plan.indexOrder != nil && ordered, .compound where plan.indexOrder != nil && ordered:
            guard let (reader, planned) = plan.source.indexRead else { break }
            let ascending = plan.indexOrder ?? true
            let needed = limit > 0 ? offset + limit : Int.max
            // F5: the walk starts at the anchor's value (its ties included, the filter drops them).
            var ranges = planned
            if let anchor, let first = anchor.values.first, let start = try anchorBound(first, plan.source) {
                let from = ascending ? IndexRange(lower: start, meaning: .words("after")) : IndexRange(upper: start, meaning: .words("after"))
                ranges = ranges.map { QueryPlanner.intersect($0, from) }
            }
            var boundary: [UInt8]?
            inSortOrder = plan.sorts.count == 1
            // F3 orders ties by primary key; the walk meets them in entry order, which is that
            // only ascending with nothing but the primary key after the sort value. Otherwise the
            // rows of each run of one sort value are put in key order as the run ends.
            let orderTies = reader.mayHaveTies && !(ascending && reader.ascendingTiesInKeyOrder)
            var tieStart = rows.count
            var tieValue: [UInt8] = []
            func endTies() {
                if rows.count - tieStart > 1 { rows[tieStart...].sort { $0.key < $1.key } }
                tieStart = rows.count
            }
            try readStore { txn in
                var lookup = RecordLookup(txn)
                for range in ascending ? ranges : ranges.reversed() {
                    var stop = false
                    try walk(range, of: reader, descending: !ascending, txn, counting: evaluator) { entryKey, key in
                        if orderTies {
                            let n = try reader.sortValueLength(entryKey)
                            let value = UnsafeRawBufferPointer(rebasing: entryKey[..<n])
                            if compareBytes(value, tieValue) != 0 {
                                endTies()
                                tieValue.removeAll(keepingCapacity: true)
                                tieValue.append(contentsOf: value)
                            }
                        }
                        // Past the window, read on only through the ties of its last value.
                        if let boundary { if try reader.sortValue(Array(entryKey)) != boundary { stop = true; return false } }
                        if keysOnly && storedPredicate == nil && anchor == nil {
                            if isWanted(key) { rows.append(QueryRow(key: key, values: nil, rowVersion: 0)) }   // F6
                        } else if isWanted(key), let reading = entity(of: key) {
                            _ = try lookup.visitRecord(key, reading.entity) { raw in try consider(key, reading, bytes: raw) }
                        }
                        if boundary == nil, rows.count >= needed { boundary = try reader.sortValue(Array(entryKey)) }
                        return true
                    }
                    if stop { break }
                }
            }
            if orderTies { endTies() }
        default:
            // The candidates' records are read in one transaction, in key order (RecordLookup).
            // One range of an index with one entry per object yields each key once.
            let unique: Bool = switch plan.source {
            case .index(_, let ranges): ranges.count == 1
            case .compound(let index, _, let ranges): ranges.count == 1 && !index.isMultiValued
            default: false
            }
            // One snapshot for the candidates and their records.
            try readStore { txn in
                var seen = Set<UInt64>()
                // Filtered in place: a range of an index can hold most of an entity's objects.
                var keys = try candidates(plan.source, entity: plan.entity, evaluator, in: txn)
                var kept = 0
                for key in keys where isWanted(key) && (unique || seen.insert(key).inserted) {
                    keys[kept] = key
                    kept += 1
                }
                keys.removeLast(keys.count - kept)
                keys.sort()
                var lookup = RecordLookup(txn)
                var n = 0
                while n < keys.count {
                    let key = keys[n]
                    guard let reading = entity(of: key) else {
                        n += 1
                        continue
                    }
                    // A count whose byte test is made counts the rest of the entity's candidates
                    // in one loop (CandidateReading.countPassing), as `consider` would.
                    if countOnly, let filter = reading.madeFilter {
                        let (passed, read, end) = try reading.countPassing(keys, from: n, filter: filter, txn)
                        counters.tally += passed
                        counters.recordsRead += read
                        n = end
                        continue
                    }
                    _ = try lookup.visitRecord(key, reading.entity) { raw in try consider(key, reading, bytes: raw) }
                    n += 1
                }
            }
        }

        // F2: unsaved objects, with their unsaved values.
        let storedRows = rows.count
        for object in pending where !object.isDeleted {
            try fulfill(object)
            if try plan.predicate.map({ (p) throws(DocStoreError) in try evaluator.test(p, key: object.key, values: object.values) }) ?? true,
               try isAfterAnchor(object.key, object.values) {
                if countOnly { counters.tally += 1 } else { rows.append(QueryRow(key: object.key, values: nil, rowVersion: object.rowVersion)) }
            }
        }
        if countOnly { return ([], counters.tally) }

        // F3: order, then the window.
        if ordered || offset > 0 || limit > 0 {
            if (inSortOrder || plan.sorts.isEmpty) && rows.count == storedRows {
                // F6: already in order (with no sort keys, every source reads in key order).
            } else if inSortOrder && (rows.count - storedRows) * 64 < storedRows {
                rows = try mergingPending(rows, storedCount: storedRows, plan, evaluator)
            } else {
                rows = try sorted(rows, plan, evaluator)
            }
        }
        if offset > 0 { rows = Array(rows.dropFirst(offset)) }
        if limit > 0, rows.count > limit { rows = Array(rows.prefix(limit)) }
        return (rows, rows.count)
    }

    /// Stored rows already in order, then a few unsaved ones: each unsaved row finds its place by
    /// binary search (reading log n stored records), instead of sorting every row (F6).
    private func mergingPending(_ rows: [QueryRow], storedCount: Int, _ plan: QueryPlan, _ evaluator: QueryEvaluator) throws(DocStoreError) -> [QueryRow] {
        func keys(_ row: QueryRow) throws(DocStoreError) -> [StoredValue] {
            try sortValues(plan, evaluator, row.key, try values(of: row, evaluator, carried: false))
        }
        var placed: [(position: Int, keys: [StoredValue], row: QueryRow)] = []
        for row in rows[storedCount...] {
            let mine = try keys(row)
            var lo = 0, hi = storedCount
            while lo < hi {
                let mid = (lo + hi) / 2
                if Self.compare(try keys(rows[mid]), rows[mid].key, mine, row.key, plan) < 0 { lo = mid + 1 } else { hi = mid }
            }
            placed.append((lo, mine, row))
        }
        placed.sort { a, b in a.position != b.position ? a.position < b.position : Self.compare(a.keys, a.row.key, b.keys, b.row.key, plan) < 0 }
        var out: [QueryRow] = []
        out.reserveCapacity(rows.count)
        var next = 0
        for p in placed {
            out.append(contentsOf: rows[next..<p.position])
            out.append(p.row)
            next = p.position
        }
        out.append(contentsOf: rows[next..<storedCount])
        return out
    }

    private func sorted(_ rows: [QueryRow], _ plan: QueryPlan, _ evaluator: QueryEvaluator) throws(DocStoreError) -> [QueryRow] {
        guard !plan.sorts.isEmpty else { return rows.sorted { $0.key < $1.key } }
        var keyed: [(row: QueryRow, keys: [StoredValue])] = []
        keyed.reserveCapacity(rows.count)
        for row in rows {
            keyed.append((row, try sortValues(plan, evaluator, row.key, try values(of: row, evaluator))))
        }
        keyed.sort { a, b in Self.compare(a.keys, a.row.key, b.keys, b.row.key, plan) < 0 }
        return keyed.map(\.row)
    }

    /// A row's values: those it carries (unless `carried` is false: a stored row of a count or
    /// key fetch carries only the values its predicate read), else its record's, else its object's.
    private func values(of row: QueryRow, _ evaluator: QueryEvaluator, carried: Bool = true) throws(DocStoreError) -> [StoredValue] {
        if carried, let values = row.values { return values }
        guard let entity = store.model.entity(ofKey: row.key) else { return [] }
        if let record = row.record { return try entity.values(ofRecord: record, key: row.key).values }
        return try evaluator.objectValues(row.key, entity)
    }

    /// An object's values of the plan's sort keys (the first of many, nil for none).
    func sortValues(_ plan: QueryPlan, _ evaluator: QueryEvaluator, _ key: UInt64, _ values: [StoredValue]) throws(DocStoreError) -> [StoredValue] {
        var keys: [StoredValue] = []
        keys.reserveCapacity(plan.sorts.count)
        for s in plan.sorts {
            switch try evaluator.value(s.expression, key: key, values: values) {
            case .scalar(let v): keys.append(v)
            case .collection(let vs): keys.append(vs.first ?? .null)
            }
        }
        return keys
    }

    /// The request's order (F3) between two objects, by their sort values and then their keys:
    /// -1, 0 or 1.
    static func compare(_ a: [StoredValue], _ aKey: UInt64, _ b: [StoredValue], _ bKey: UInt64, _ plan: QueryPlan) -> Int {
        for (i, s) in plan.sorts.enumerated() {
            let c = sortOrder(a[i], b[i], s.key.options)
            if c != 0 { return s.key.ascending ? c : -c }
        }
        return aKey < bKey ? -1 : aKey == bKey ? 0 : 1
    }

    /// The anchor of keyset pagination: its key and sort values, as this fetch sees them.
    private func anchorValues(_ id: ObjectID, _ plan: QueryPlan, _ evaluator: QueryEvaluator) throws(DocStoreError) -> (key: UInt64, values: [StoredValue]) {
        guard id.storeIdentifier == store.identifier, let entity = store.model.entity(ofKey: id.primaryKey) else {
            throw DocStoreError(.invalidQuery, "the object to fetch after, \(id), is not of this store", entity: id.entityName)
        }
        guard plan.kinds.contains(entity.id) else {
            throw DocStoreError(.invalidQuery, "the object to fetch after, \(id), is not a \(plan.entity.name): it has no place in this order", entity: id.entityName)
        }
        let stored = registry[id.primaryKey] != nil ? nil : try storedRecord(id.primaryKey, entity)
        guard registry[id.primaryKey] != nil || stored != nil else {
            throw DocStoreError(.objectNotFound, "the object to fetch after, \(id), is not stored", entity: id.entityName)
        }
        let values = try evaluator.objectValues(id.primaryKey, entity)
        return (id.primaryKey, try sortValues(plan, evaluator, id.primaryKey, values))
    }

    /// Where an index walk in sort order starts for an anchor whose first sort value is `value`:
    /// the value's encoding (after the fixed elements of a compound index); nil when unknown.
    private func anchorBound(_ value: StoredValue, _ source: QuerySource) throws(DocStoreError) -> [UInt8]? {
        guard let component = Self.indexComponent(value) else { return nil }
        switch source {
        case .index: return KeyEncoding.encode([component])
        case .compound(let index, let fixed, let ranges):
            guard fixed > 0 else { return KeyEncoding.encode([component]) }
            guard let lower = ranges.first?.lower else { return nil }
            do {
                return Array(lower.prefix(try KeyEncoding.prefixLength(lower, components: fixed))) + KeyEncoding.encode([component])
            } catch {
                throw DocStoreError(.corrupt, "a bound of index \(index.tree) is not a valid key (\(error))", property: index.propertyList)
            }
        default: return nil
        }
    }

    /// Sort order: nil first, then values by QueryValueSemantics (values that do not order
    /// with each other — NaN, different kinds — are taken as equal).
    static func sortOrder(_ a: StoredValue, _ b: StoredValue, _ options: QueryStringOptions) -> Int {
        switch (a.isNull, b.isNull) {
        case (true, true): return 0
        case (true, false): return -1
        case (false, true): return 1
        default: return QueryValueSemantics.order(a, b, options) ?? 0
        }
    }

    // MARK: - Sources

    /// The candidate keys of a source other than a scan (which the caller streams).
    /// `txn`: the read transaction to walk in (one of its own when nil).
    private func candidates(_ source: QuerySource, entity: EntityInfo, _ evaluator: QueryEvaluator,
                            in txn: Transaction? = nil) throws(DocStoreError) -> [UInt64] {
        func reading(_ body: (Transaction) throws -> Void) throws(DocStoreError) {
            if let txn {
                do { try body(txn) } catch { throw Store.storageError(error) }
            } else {
                try readStore(body)
            }
        }
        switch source {
        case .empty: return []
        case .keys(let keys): return keys
        case .scan:
            var keys: [UInt64] = []
            try reading { txn in
                for id in entity.kindIDs.sorted() {
                    guard let kind = store.model.entity(id: id) else { continue }
                    try txn.forEachRecordKey(of: kind) { key in keys.append(key) }
                }
            }
            return keys
        case .index, .compound:
            guard let (reader, ranges) = source.indexRead else { return [] }
            var keys: [UInt64] = []
            try reading { txn in
                for range in ranges {
                    try walk(range, of: reader, descending: false, txn, counting: evaluator) { _, key in
                        keys.append(key)
                        return true
                    }
                }
            }
            return keys
        case .union(let sources):
            var keys: [UInt64] = []
            for s in sources { keys += try candidates(s, entity: entity, evaluator, in: txn) }
            return keys
        case .related(_, let inverse, let targets, let destination, let filter):
            var keys: [UInt64] = []
            var seen = Set<UInt64>()
            var targetKeys = try candidates(targets, entity: destination, evaluator, in: txn)
            // Unsaved targets may match the filter with their unsaved values (given targets have none).
            if filter != nil, evaluator.includesPendingChanges {
                targetKeys += try pendingObjects(of: destination.kindIDs).live.map(\.key)
            }
            for target in targetKeys where seen.insert(target).inserted {
                guard let targetEntity = store.model.entity(ofKey: target),
                      inverse.slot < targetEntity.properties.count else { continue }
                if let filter {
                    let values = try evaluator.objectValues(target, targetEntity)
                    guard try evaluator.test(filter, key: target, values: values) else { continue }
                }
                keys += try linked(from: target, targetEntity, inverse, evaluator)
            }
            return keys
        }
    }

    /// The objects the target's inverse relationship reaches: its links, or its to-one value.
    private func linked(from target: UInt64, _ entity: EntityInfo, _ inverse: PropertyInfo, _ evaluator: QueryEvaluator) throws(DocStoreError) -> [UInt64] {
        if inverse.isToMany { return try evaluator.members(of: target, inverse) }
        if case .reference(let k) = try evaluator.objectValues(target, entity)[inverse.slot] { return [k] }
        return []
    }

    /// Walks the entries of an index range, in key order or backwards, calling `body` with each
    /// entry's key (in place in its page: valid only inside `body`) and the object's primary key
    /// until it returns false.
    func walk(_ range: IndexRange, of reader: IndexReader, descending: Bool, _ txn: Transaction, counting counter: QueryEvaluator? = nil,
              _ body: (UnsafeRawBufferPointer, UInt64) throws -> Bool) throws {
        let tree = reader.tree
        guard try txn.treeExists(tree) else { return }
        var cursor = try txn.cursor(in: tree)
        var more: Bool
        if descending {
            if let upper = range.upper {
                let end = range.upperInclusive ? KeyEncoding.prefixEnd(upper) : upper
                if let end {
                    let found = try cursor.seek(atOrBefore: end)
                    more = found != nil
                    if let e = found, compareBytes(e.key, end) >= 0 { more = try cursor.previous() != nil }
                } else {
                    more = try cursor.last() != nil
                }
            } else {
                more = try cursor.last() != nil
            }
        } else {
            more = if let lower = range.lower { try cursor.move(to: lower) } else { try cursor.first() != nil }
        }
        // Counted here and added once: not a class property written per entry.
        var entries = 0
        defer { counter?.entriesRead += entries }
        // Walking up, the lower bound is compared only until an entry lies above it: the rest
        // follow that one.
        var belowPossible = range.lower != nil
        while more {
            // Whether the walk goes on past this entry (skipping it when it is out of the range).
            var goesOn = false
            let atEntry = try cursor.visitCurrent { (k, v) throws in
                if descending {
                    if range.isBelow(k) { return }
                } else {
                    if range.isAbove(k) { return }
                    if belowPossible {
                        if range.isBelow(k) { goesOn = true; return }   // an exclusive lower bound: skip its own value
                        belowPossible = false
                    }
                }
                let key = reader.primaryKeyInValue ? PrimaryKey.read(v)
                    : k.count >= 8 ? PrimaryKey.read(UnsafeRawBufferPointer(rebasing: k[(k.count - 8)...])) : nil
                guard let key else {
                    throw DocStoreError(.corrupt, "an entry of index \(tree) does not hold a primary key", property: reader.propertyName)
                }
                entries += 1
                goesOn = try body(k, key)
            }
            guard atEntry, goesOn else { return }
            more = try descending ? cursor.previous() != nil : cursor.advance()
        }
    }
}

extension Context.QueryRow {
    /// A stored match kept as its record, checked whole now so that reading it later cannot fail.
    init(key: UInt64, checked bytes: UnsafeRawBufferPointer) throws(DocStoreError) {
        let rowVersion = try RecordCoding.validate(bytes, key: key)
        self.init(key: key, values: nil, rowVersion: rowVersion, record: Array(bytes))
    }
}

/// A fetch's running counts of its stored candidates (records read, and matches when it only
/// counts), bumped once per candidate. A class with unchecked exclusivity, not captured local
/// `var`s: the per-candidate closures capture those in boxes whose every access is checked at
/// run time (5% of a count). Safe: one fetch makes and uses it, on one thread, and no access to
/// it overlaps another.
private final class MatchCounters {
    @exclusivity(unchecked) var recordsRead = 0
    @exclusivity(unchecked) var tally = 0
}
