// Store+Load: a new store from a dump (Format/dump.md) — the other half of `Store.dump(to:)`,
// and what `docstore load` runs. Dumping a store and loading the dump gives an equal store:
// the same schema and IDs, the same objects with the same numbers, values and relationships
// (in their order), and the same identity; its history starts empty.
//
//   SL1 the input is read as it comes, line by line, and written in chunks (StoreBuilder SB3):
//       memory does not grow with the dump.
//   SL2 every line is checked before it is written: its shape (unknown keys refused), the
//       object's name (a concrete entity of the schema, a number not seen before), each value
//       against its attribute's type and rules, each relationship's targets (of the
//       destination entity or a sub-entity of it, none twice). The first 100 problems are
//       reported, each naming its line; nothing is left behind (StoreBuilder SB1).
//   SL3 a dump without its last line (cut off) or whose count disagrees is refused.
//   SL4 the schema comes from the header's catalog, checked as a store's is when it opens
//       (Catalog.decode, Schema.validate).

import Foundation
internal import DocStoreEngine

extension Store {
    /// Makes a new store at `url` from the dump `input` gives (what ``dump(to:)`` or
    /// `docstore dump` wrote); returns the number of objects loaded. Open the new store with
    /// `Store(url:…)` as any other; it keeps the dumped store's identity, so object IDs and
    /// URIs are the same.
    ///
    /// ```swift
    /// let dump = try FileHandle(forReadingFrom: URL(fileURLWithPath: "notes.jsonl"))
    /// let count = try Store.load(from: dump, to: URL(fileURLWithPath: "Copy.docstore"))
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/invalidDump`` naming the line of each problem (SL2, SL3);
    ///   ``DocStoreError/Code/uniqueConstraint`` for two objects with one unique value;
    ///   ``DocStoreError/Code/storage`` when something exists at `url` already, or for an I/O
    ///   error. Nothing is left at `url` when it throws.
    @discardableResult
    public static func load(from input: FileHandle, to url: URL) throws(DocStoreError) -> Int {
        var reader = JSONLinesReader(input: input)
        let decoder = JSONDecoder()
        let (header, catalog) = try readHeader(&reader, decoder)
        guard !FileManager.default.fileExists(atPath: url.filePath) else {
            throw DocStoreError(.storage, "a file exists at \(url.filePath) already; a store is loaded into a new path")
        }
        do {
            return try StoreFileSwap.build(url.filePath, FoundationFileSystem(), pageSize: EngineOptions().pageSize,
                                           continuing: (header.store, LSN(header.lastLSN))) { engine in
                try loadObjects(&reader, decoder, header, catalog, into: StoreBuilder(engine: engine, catalog: catalog))
            }
        } catch {
            throw storageError(error)
        }
    }

    /// The object lines and the trailer (SL1–SL3), written by `builder`; returns the count.
    private static func loadObjects(_ reader: inout JSONLinesReader, _ decoder: JSONDecoder, _ header: DumpHeader, _ catalog: Catalog,
                                    into builder: StoreBuilder) throws(DocStoreError) -> Int {
        var loader = DumpLoader(model: builder.model)
        var trailer: (line: Int, count: Int)?
        while let line = try reader.next() {
            if line.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { continue }
            if let trailer { throw DocStoreError(.invalidDump, "line \(reader.lineNumber): nothing may follow the last line (line \(trailer.line))") }
            let parsed: DumpLine
            do { parsed = try decoder.decode(DumpLine.self, from: Data(line)) } catch {
                try loader.problem(line: reader.lineNumber, entity: nil, property: nil, Self.brief(error))
                continue
            }
            switch parsed {
            case .trailer(let t): trailer = (reader.lineNumber, t.objects)
            case .object(let object):
                if let (key, entity, values, toMany) = try loader.resolve(object, line: reader.lineNumber), loader.problems.isEmpty {
                    try builder.add(key, entity, values: values, toMany: toMany)
                }
            }
        }
        try loader.finish()
        guard let trailer else {
            throw DocStoreError(.invalidDump, "the dump ends at line \(reader.lineNumber) without its last line ({\"end\":\"docstore\",\"objects\":…}): it was cut off; nothing was loaded")
        }
        guard trailer.count == loader.count else {
            throw DocStoreError(.invalidDump, "line \(trailer.line): the dump says it holds \(trailer.count) objects, but \(loader.count) came before it")
        }
        var sequences: [UInt32: UInt64] = [:]
        for (name, n) in header.sequences {
            if let id = catalog.entityIDs[name] { sequences[id] = n }
        }
        let problems = try builder.finish(sequences: sequences)
        guard problems.isEmpty else {
            throw DocStoreError(.invalidDump, "the objects' relationships disagree (\(problems.count) problem\(problems.count == 1 ? "" : "s")): \(problems[0])",
                                problems: problems.prefix(100).map { DocStoreError.Problem(entity: "graph", $0) })
        }
        return loader.count
    }

    /// The header line and the catalog it holds (SL4).
    private static func readHeader(_ reader: inout JSONLinesReader, _ decoder: JSONDecoder) throws(DocStoreError) -> (DumpHeader, Catalog) {
        guard let line = try reader.next() else { throw DocStoreError(.invalidDump, "the dump is empty") }
        let header: DumpHeader
        do { header = try decoder.decode(DumpHeader.self, from: Data(line)) } catch {
            throw DocStoreError(.invalidDump, "line 1 is not a DocStore dump's header: \(brief(error))")
        }
        guard header.dump == DumpHeader.magic else {
            throw DocStoreError(.invalidDump, "line 1 is not a DocStore dump's header: \"dump\" is \"\(header.dump)\", not \"\(DumpHeader.magic)\"")
        }
        guard header.format == 1 else {
            throw DocStoreError(.invalidDump, "the dump has format \(header.format); this DocStore reads format 1")
        }
        let catalog: Catalog
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            catalog = try Catalog.decode(Array(try encoder.encode(header.catalog)))
            try catalog.schema.validate()
        } catch let error as DocStoreError {
            throw DocStoreError(.invalidDump, "line 1: the dump's catalog does not hold a valid schema: \(error.message)", problems: error.problems)
        } catch {
            throw DocStoreError(.invalidDump, "line 1: the dump's catalog does not encode: \(error)")
        }
        return (header, catalog)
    }

    private static func brief(_ error: any Error) -> String {
        switch error {
        case let e as DocStoreError: e.message
        case let e as DecodingError: e.brief
        default: "\(error)"
        }
    }
}

/// Checks each object line against the schema (SL2).
struct DumpLoader {
    let model: StoreModel
    private(set) var problems: [DocStoreError.Problem] = []
    private(set) var count = 0
    private var seen = Set<UInt64>()

    init(model: StoreModel) {
        self.model = model
    }

    /// Records a problem; throws once there are 100 (SL2).
    mutating func problem(line: Int, entity: String?, property: String?, _ message: String) throws(DocStoreError) {
        problems.append(.init(entity: "line \(line)" + (entity.map { " (\($0))" } ?? ""), property: property, message))
        if problems.count >= Self.problemLimit { try finish() }
    }

    /// Throws the problems found, if any.
    func finish() throws(DocStoreError) {
        guard let first = problems.first else { return }
        let more = problems.count >= Self.problemLimit ? " (reading stopped at the first \(Self.problemLimit))" : ""
        throw DocStoreError(.invalidDump, "the dump does not load: \(problems.count) problem\(problems.count == 1 ? "" : "s")\(more); the first: \(first); nothing was loaded",
                            entity: first.entity, property: first.property, problems: problems)
    }

    static let problemLimit = 100

    /// The object's key, entity, values by slot and to-many targets, or nil when the line has
    /// problems (recorded).
    mutating func resolve(_ object: DumpObject, line: Int) throws(DocStoreError)
        -> (UInt64, EntityInfo, [StoredValue], [(slot: Int, targets: [UInt64])])? {
        count += 1
        guard let key = model.key(ofName: object.id), let entity = model.entity(ofKey: key) else {
            try problem(line: line, entity: object.id, property: nil, "is not an object of this schema (Entity/number, with an entity the schema has and a number from 1)")
            return nil
        }
        guard !entity.description.isAbstract else {
            try problem(line: line, entity: object.id, property: nil, "\(entity.name) is abstract: its objects belong to a concrete sub-entity")
            return nil
        }
        guard seen.insert(key).inserted else {
            try problem(line: line, entity: object.id, property: nil, "appears twice")
            return nil
        }
        let before = problems.count
        var values = entity.defaults
        for (name, json) in object.values.sorted(by: { $0.key < $1.key }) {
            guard let p = entity.property(named: name), case .attribute(let a) = p.kind else {
                try problem(line: line, entity: object.id, property: name, entity.property(named: name) == nil
                            ? "\(entity.name) has no attribute \(name)" : "is a relationship: it belongs under \"relationships\"")
                continue
            }
            switch DumpValue.stored(json, as: a.type) {
            case .success(let value): values[p.slot] = value
            case .failure(let failure): try problem(line: line, entity: object.id, property: name, failure.message)
            }
        }
        var toMany: [(slot: Int, targets: [UInt64])] = []
        for (name, json) in (object.relationships ?? [:]).sorted(by: { $0.key < $1.key }) {
            guard let p = entity.property(named: name), p.relationship != nil else {
                try problem(line: line, entity: object.id, property: name, entity.property(named: name) == nil
                            ? "\(entity.name) has no relationship \(name)" : "is an attribute: it belongs under \"values\"")
                continue
            }
            let destination = model.entities[p.destination]
            func target(_ json: JSONValue) throws(DocStoreError) -> UInt64? {
                guard case .string(let text) = json, let key = model.key(ofName: text) else {
                    try problem(line: line, entity: object.id, property: name, "\(json.kind) is not an object's name (Entity/number)")
                    return nil
                }
                guard destination.kindIDs.contains(PrimaryKey.entity(of: key)) else {
                    try problem(line: line, entity: object.id, property: name, "leads to \(text), not a \(destination.name)")
                    return nil
                }
                return key
            }
            if p.isToOne {
                if case .null = json { continue }
                if let key = try target(json) { values[p.slot] = .reference(key) }
            } else {
                guard case .array(let items) = json else {
                    try problem(line: line, entity: object.id, property: name, "is to-many: \(json.kind) is not an array of objects' names")
                    continue
                }
                var targets: [UInt64] = []
                var distinct = Set<UInt64>()
                for item in items {
                    guard let key = try target(item) else { continue }
                    if distinct.insert(key).inserted { targets.append(key) } else {
                        try problem(line: line, entity: object.id, property: name, "lists \(model.name(ofKey: key)) twice")
                    }
                }
                if !targets.isEmpty { toMany.append((p.slot, targets)) }
            }
        }
        for p in entity.properties {
            if let rules = p.rules, let message = Context.check(values, p.slot, against: rules) {
                try problem(line: line, entity: object.id, property: p.name, message)
            } else if p.requiresTarget, values[p.slot].isNull {
                try problem(line: line, entity: object.id, property: p.name, Context.missingTarget)
            }
        }
        return problems.count == before ? (key, entity, values, toMany) : nil
    }
}
