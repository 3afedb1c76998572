// Store+Dump: writes every object of a store as JSON Lines (Format/dump.md, DumpFormat DF1–DF3)
// — what `docstore dump` prints and `Store.load(from:to:)` reads back into an equal store.
//
//   SD1 the dump reads one snapshot: it is the store as of one commit, whatever other contexts
//       save meanwhile (they are never blocked).
//   SD2 the header carries the catalog exactly as stored (every schema version the store has
//       had, and every ID), so the loaded store keeps object numbers, field IDs and its
//       migration history.
//   SD3 objects come entity by entity in the schema's order, each in object-number order;
//       a to-many lists its targets in its order (an ordered one's), or by object for an
//       unordered one.
//   SD4 output is buffered and written in pieces: memory does not grow with the store.

import Foundation
internal import DocStoreEngine

extension Store {
    /// Writes every object of the store, as of now, to `output` as JSON Lines: a header with
    /// the schema, one line per object, and a trailer (Format/dump.md). Returns the number of
    /// objects written. The store stays usable meanwhile.
    ///
    /// ```swift
    /// FileManager.default.createFile(atPath: "notes.jsonl", contents: nil)
    /// let file = try FileHandle(forWritingTo: URL(fileURLWithPath: "notes.jsonl"))
    /// let count = try store.dump(to: file)
    /// ```
    ///
    /// - Throws: ``DocStoreError/Code/storage`` when reading the store or writing `output`
    ///   fails; ``DocStoreError/Code/corrupt`` for a record that does not decode.
    @discardableResult
    public func dump(to output: FileHandle) throws(DocStoreError) -> Int {
        let model = self.model
        let storeID = identifier
        return try read { txn in
            var writer = DumpWriter(output: output)
            guard let catalogBytes = try txn.get(Catalog.catalogKey, in: Catalog.tree) else {
                throw DocStoreError(.corrupt, "the store has no catalog (tree \(Catalog.tree), key \"catalog\")")
            }
            let catalog = try JSONDecoder().decode(JSONValue.self, from: Data(catalogBytes))
            var sequences: [String: UInt64] = [:]
            for entity in model.entities {
                sequences[entity.name] = Catalog.sequence(from: try txn.get(Catalog.sequenceKey(entity.id), in: Catalog.tree))
            }
            try writer.write(DumpHeader(store: storeID, lastLSN: txn.lsn.rawValue, catalog: catalog, sequences: sequences))
            var count = 0
            for entity in model.entities where !entity.description.isAbstract {
                try txn.forEachRecord(of: entity) { key, bytes in
                    try writer.write(try Self.dumpObject(key, bytes, entity, model, txn))
                    count += 1
                }
            }
            try writer.write(DumpTrailer(objects: count))
            try writer.flush()
            return count
        }
    }

    /// One object's line (SD3).
    private static func dumpObject(_ key: UInt64, _ bytes: [UInt8], _ entity: EntityInfo, _ model: StoreModel,
                                   _ txn: Transaction) throws -> DumpObject {
        let id = model.name(ofKey: key)
        let values = try entity.values(ofRecord: bytes, key: key).values
        var attributes: [String: JSONValue] = [:]
        var relationships: [String: JSONValue] = [:]
        for p in entity.properties {
            switch p.kind {
            case .attribute:
                guard let json = DumpValue.json(values[p.slot]) else {
                    throw DocStoreError(.corrupt, "\(id).\(p.name) holds a Codable value that is not UTF-8 JSON text", entity: entity.name, property: p.name)
                }
                attributes[p.name] = json
            case .toOne:
                if case .reference(let target) = values[p.slot] {
                    relationships[p.name] = .string(model.name(ofKey: target))
                } else {
                    relationships[p.name] = .null
                }
            case .toMany:
                var targets: [JSONValue] = []
                if try txn.treeExists(p.linkTree) {
                    let prefix = PrimaryKey.bytes(key)
                    var cursor = try txn.cursor(in: p.linkTree)
                    var entry = try cursor.seek(to: prefix)
                    while let (k, v) = entry, k.starts(with: prefix) {
                        if let target = p.isOrdered ? PrimaryKey.read(v) : PrimaryKey.read(k, at: 8) {
                            targets.append(.string(model.name(ofKey: target)))
                        }
                        entry = try cursor.next()
                    }
                }
                relationships[p.name] = .array(targets)
            }
        }
        return DumpObject(id: id, values: attributes, relationships: relationships.isEmpty ? nil : relationships)
    }
}

/// Encodes lines and writes them to a file handle in pieces (SD4).
struct DumpWriter {
    let output: FileHandle
    private var buffer = Data()
    private let encoder: JSONEncoder

    init(output: FileHandle) {
        self.output = output
        encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]     // DF3
        buffer.reserveCapacity(Self.pieceBytes + 4096)
    }

    mutating func write(_ line: some Encodable) throws {
        buffer.append(try encoder.encode(line))
        buffer.append(0x0A)
        if buffer.count >= Self.pieceBytes { try flush() }
    }

    mutating func flush() throws {
        guard !buffer.isEmpty else { return }
        do { try output.write(contentsOf: buffer) } catch {
            throw DocStoreError(.storage, "writing the dump failed: \(error.localizedDescription)")
        }
        buffer.removeAll(keepingCapacity: true)
    }

    static let pieceBytes = 1 << 20
}
