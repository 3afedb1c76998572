// Store+BatchInsert: running a BatchInsertRequest — rows to records, index entries and links in
// one write transaction, without managed objects (BatchWriter B1–B5).
//
//   BI1 each row gets the next primary key of its entity, as a context's insert does; keys of a
//       batch that fails are not reused (a gap, as for an insert never saved).
//   BI2 every row is resolved and validated (BatchRow BR1–BR3, the save's checks); one bad row
//       refuses the batch, listing the problems of every row (the first 100, and how many more).
//   BI3 a row's relationships are written on both sides: a to-one's field in the record and
//       the target's to-many link (or its to-one, B5); a to-many's links in both trees. The
//       targets get their next row version and an update in history (B2).
//   BI4 the entity's key sequence is saved with the batch.
//   BI5 the rows' puts are applied to the trees every `flushEvery` rows, not all at the end:
//       a million rows' keys and values held at once cost more in cache misses than the
//       sorted runs save. Nothing commits before the batch ends (B1).

import Foundation
internal import DocStoreEngine

extension Store {
    /// Inserts the request's rows in one transaction and records it in history.
    ///
    /// - Parameter transactionAuthor: the author history records (``Context/transactionAuthor``).
    /// - Throws: ``DocStoreError/Code/unknownProperty`` for an unknown or abstract entity;
    ///   ``DocStoreError/Code/validation`` listing every row's problems (unknown properties,
    ///   values of the wrong type, missing required values, targets that do not exist, …);
    ///   ``DocStoreError/Code/uniqueConstraint``; ``DocStoreError/Code/typeMismatch`` for a
    ///   `Codable` value that is not a keyed object; what a handler throws;
    ///   ``DocStoreError/Code/storage``. Nothing is written when it throws.
    public func execute(_ request: BatchInsertRequest, transactionAuthor: String? = nil) throws(DocStoreError) -> BatchResult {
        try executeInsert(request, author: transactionAuthor, contextName: nil, origin: 0)
    }

    func executeInsert(_ request: BatchInsertRequest, author: String?, contextName: String?, origin: UInt64) throws(DocStoreError) -> BatchResult {
        let entity: EntityInfo
        if let name = request.entityName {
            guard let e = model.entity(named: name) else {
                throw DocStoreError(.unknownProperty, "the schema has no entity \"\(name)\"", entity: name)
            }
            entity = e
        } else if let type = request.objectClass, let e = model.entity(ofClass: type) {
            entity = e
        } else {
            let name = request.objectClass.map { _typeName($0, qualified: false) } ?? "?"
            throw DocStoreError(.unknownProperty, "the store's schema has no entity for the class \(name)", entity: name)
        }
        guard !entity.description.isAbstract else {
            throw DocStoreError(.unknownProperty, "\(entity.name) is abstract: insert objects of a concrete sub-entity", entity: entity.name)
        }
        let reader = BatchRowReader(entity: entity, model: model, storeID: identifier)
        let scratchContext = Context(store: self)
        return try runBatch(author: author, contextName: contextName, origin: origin, resultType: request.resultType) { writer in
            var inserter = BatchInserter(store: self, entity: entity, reader: reader, writer: writer)
            switch request.source {
            case .dictionaries(let rows):
                for fields in rows { try inserter.insert(fields) }
            case .encodables(let values):
                for value in values { try inserter.insert(try RowEncoder.row(value)) }
            case .dictionaryHandler(let handler):
                var fields: [String: Any] = [:]
                while true {
                    fields.removeAll(keepingCapacity: true)
                    if try handler(&fields) { break }
                    try inserter.insert(fields)
                }
            case .objectHandler(let handler):
                let scratch = entity.objectClass.init(_$fault: _$FaultToken(entity: entity, key: 0, context: scratchContext))
                while true {
                    scratch.context = nil
                    scratch.flags = []
                    scratch.values = entity.defaults
                    scratch.unattachedLinks = nil
                    scratch.rejectedValues = nil
                    if try handler(scratch) { break }
                    try inserter.insert(scratch)
                }
            }
            try inserter.finish()
            return inserter.keys
        }
    }
}

/// Inserts rows one at a time into a batch (BI1–BI4).
struct BatchInserter {
    let store: Store
    let entity: EntityInfo
    let reader: BatchRowReader
    let writer: BatchWriter
    private(set) var keys: [UInt64] = []
    private var problems: [DocStoreError.Problem] = []
    private var rowNumber = 0
    private var badRows = 0
    private var names = RowNames()

    init(store: Store, entity: EntityInfo, reader: BatchRowReader, writer: BatchWriter) {
        self.store = store
        self.entity = entity
        self.reader = reader
        self.writer = writer
    }

    /// Inserts the row given by property name.
    mutating func insert(_ fields: [String: Any]) throws {
        rowNumber += 1
        var row = BatchRow(values: entity.defaults)
        let before = problems.count
        var position = 0
        for (name, value) in fields {
            let property = names.property(name, at: position, in: entity)
            position += 1
            try reader.set(property, name, value, in: &row, rowNumber: rowNumber, writer: writer, problems: &problems)
        }
        try insert(row, problemsBefore: before)
    }

    /// Inserts what the scratch object of a `managedObjectHandler` holds.
    mutating func insert(_ object: ManagedObject) throws {
        rowNumber += 1
        var row = BatchRow(values: object.values.count == entity.defaults.count ? object.values : entity.defaults)
        let before = problems.count
        for (name, message) in (object.rejectedValues ?? [:]).sorted(by: { $0.key < $1.key }) {
            problems.append(.init(entity: "\(entity.name) row \(rowNumber)", property: name, "a value set by key was refused: \(message)"))
        }
        for (slot, targets) in (object.unattachedLinks ?? [:]).sorted(by: { $0.key < $1.key }) where slot < entity.properties.count {
            let p = entity.properties[slot]
            let value: Any? = p.isToMany ? targets as [Any] : targets.first
            try reader.set(p.name, value, in: &row, rowNumber: rowNumber, writer: writer, problems: &problems)
        }
        try insert(row, problemsBefore: before)
    }

    private mutating func insert(_ row: BatchRow, problemsBefore before: Int) throws {
        reader.validate(row, rowNumber: rowNumber, problems: &problems)
        if problems.count > before {
            badRows += 1
            if problems.count > 100 { problems.removeLast(problems.count - 100) }
            return
        }
        guard problems.isEmpty else { return }     // BI2: nothing more is written once a row failed
        let key = store.nextKey(for: entity)
        keys.append(key)
        writer.batch.putRecord(row.values, of: entity, key: key, rowVersion: 1, schemaVersion: store.catalog.schemaVersion)
        IndexEntries.add(key: key, entity, values: row.values, to: &writer.batch)
        for slot in entity.recordSlots {
            guard case .reference(let target) = row.values[slot] else { continue }
            try writer.addInverse(of: entity.properties[slot], target: target, source: key)
        }
        for (slot, targets) in row.toMany {
            let p = entity.properties[slot]
            for (i, target) in targets.enumerated() {
                writer.putOwnLink(key, p, target, position: i)
                try writer.addInverse(of: p, target: target, source: key)
            }
        }
        writer.changes.append(RecordedChange(kind: .insert, key: key))
        // BI5: the batch's puts go to the tree in chunks, so what waits stays small and warm.
        if keys.count % Self.flushEvery == 0 { try writer.flush() }
    }

    /// Rows between two flushes of the batch's puts (BI5). Each flush of an index tree with
    /// scattered keys reaches most of its leaves, which the transaction has written out past
    /// its spill limit: since a sorted run spills as it goes (session 18), fewer flushes pay —
    /// 1 000 000 notes in 5.29–5.55 s at 20 000, 4.82–4.92 s at 50 000, 4.66–4.83 s at 100 000
    /// (peak 599, 621, 652 MB of the whole benchmark process; 1 000 000: 5.5–5.7 s, 1.19 GB).
    static let flushEvery = 50_000

    /// Throws the rows' problems (BI2), or saves the key sequence (BI4).
    func finish() throws {
        if !problems.isEmpty {
            let more = badRows > 0 && problems.count >= 100 ? " (the first 100 problems are listed)" : ""
            throw DocStoreError(.validation, "batch insert refused: \(badRows) of \(rowNumber) row\(rowNumber == 1 ? "" : "s") \(badRows == 1 ? "has" : "have") problems\(more); nothing was inserted",
                                entity: entity.name, property: problems.count == 1 ? problems[0].property : nil, problems: problems)
        }
        guard !keys.isEmpty else { return }
        writer.batch.put(Catalog.sequenceValue(store.highestSequence(of: entity.id)),
                         for: Catalog.sequenceKey(entity.id), in: Catalog.tree)
    }
}
