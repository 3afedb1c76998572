// HistoryCoding: the bytes of a history transaction (Format/history.md) — what a save appends to
// the tree `docstore.history`, keyed by its commit LSN, in the same engine transaction as its
// records, so history survives a crash exactly as the data does.
//
//   HC1  a transaction is one or more chunks, keys LSN (u64 BE) ‖ chunk number (u16 BE); chunk 0
//        carries the header; a chunk is closed once it passes `chunkBytes`, so a large import
//        writes many bounded values rather than one huge one.
//   HC2  decoding checks every length against the bytes and throws `.corrupt` naming the
//        transaction and offset; it never traps.
//   HC3  format 2 (written while the store records change values: a synced store) follows
//        every change with the values it saved and the to-many links it added and removed;
//        format 1 is written otherwise, byte for byte as before, and both are read.

import Foundation
internal import DocStoreEngine

/// One object's change as the file holds it: by primary key and field IDs.
struct RecordedChange: Sendable, Equatable {
    enum Kind: UInt8, Sendable { case insert = 1, update = 2, delete = 3 }
    var kind: Kind
    var key: UInt64
    /// Updates: the field IDs of the changed properties, ascending.
    var fields: [UInt32] = []
    /// Deletes: the preserved attributes' values, by field ID ascending.
    var tombstone: [(fieldID: UInt32, value: StoredValue)] = []
    /// Format 2, inserts and updates: the saved values of the attributes and to-one
    /// relationships it set (inserts: every non-nil one), by field ID ascending (HC3).
    var values: [(fieldID: UInt32, value: StoredValue)] = []
    /// Format 2: the to-many links it added (`present`) and removed, by field ID (HC3).
    var links: [RecordedLink] = []

    static func == (a: RecordedChange, b: RecordedChange) -> Bool {
        a.kind == b.kind && a.key == b.key && a.fields == b.fields
            && a.tombstone.map(\.fieldID) == b.tombstone.map(\.fieldID) && a.tombstone.map(\.value) == b.tombstone.map(\.value)
            && a.values.map(\.fieldID) == b.values.map(\.fieldID) && a.values.map(\.value) == b.values.map(\.value)
            && a.links == b.links
    }
}

/// A to-many link a save added or removed (history format 2).
struct RecordedLink: Sendable, Hashable {
    var fieldID: UInt32
    var target: UInt64
    var present: Bool
}

/// A transaction as the file holds it.
struct RecordedTransaction: Sendable, Equatable {
    var timestamp: Date
    var author: String?
    var contextName: String?
    var changes: [RecordedChange]
    /// Whether its changes carry their values and links (format 2, HC3).
    var hasValues = false
}

enum HistoryCoding {
    static let tree = "docstore.history"
    static let formatVersion: UInt8 = 1
    /// The format of transactions whose changes carry values and links (HC3).
    static let valuesFormatVersion: UInt8 = 2
    /// Format 2's tag for a value set to nil (records never hold one: a nil field is absent).
    static let nullTag: UInt8 = 0
    /// A chunk is closed once it holds this many bytes (HC1).
    static let chunkBytes = 16 << 10

    /// The key of chunk `chunk` of the transaction committed at `lsn`.
    static func key(lsn: UInt64, chunk: UInt16) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 10)
        out.withUnsafeMutableBytes { raw in
            raw.storeBytes(of: lsn.bigEndian, toByteOffset: 0, as: UInt64.self)
            raw.storeBytes(of: chunk.bigEndian, toByteOffset: 8, as: UInt16.self)
        }
        return out
    }

    /// The LSN and chunk number of a key; nil if it is not 10 bytes.
    static func parseKey(_ key: [UInt8]) -> (lsn: UInt64, chunk: UInt16)? {
        guard key.count == 10 else { return nil }
        var lsn: UInt64 = 0
        for i in 0..<8 { lsn = lsn << 8 | UInt64(key[i]) }
        return (lsn, UInt16(key[8]) << 8 | UInt16(key[9]))
    }

    /// The chunks of a transaction (HC1).
    static func encode(_ t: RecordedTransaction) -> [[UInt8]] {
        var chunks: [[UInt8]] = []
        var body: [UInt8] = []
        var count = 0
        func header() -> [UInt8] {
            var out: [UInt8] = [t.hasValues ? valuesFormatVersion : formatVersion]
            if chunks.isEmpty {
                let ms = Int64((t.timestamp.timeIntervalSince1970 * 1000).rounded())
                out.appendU64(UInt64(bitPattern: ms))
                appendString(t.author, to: &out)
                appendString(t.contextName, to: &out)
            }
            out.appendVarint(UInt64(count))
            return out
        }
        for change in t.changes {
            body.append(change.kind.rawValue)
            PrimaryKey.appendBytes(change.key, to: &body)
            switch change.kind {
            case .insert: break
            case .update:
                body.appendVarint(UInt64(change.fields.count))
                for id in change.fields { body.appendVarint(UInt64(id)) }
            case .delete:
                body.appendVarint(UInt64(change.tombstone.count))
                for (id, value) in change.tombstone {
                    body.appendVarint(UInt64(id))
                    RecordCoding.appendValue(value, to: &body)
                }
            }
            if t.hasValues {
                body.appendVarint(UInt64(change.values.count))
                for (id, value) in change.values {
                    body.appendVarint(UInt64(id))
                    // A value set to nil is tag 0 here (records leave nil fields out instead).
                    if value.isNull { body.append(nullTag) } else { RecordCoding.appendValue(value, to: &body) }
                }
                body.appendVarint(UInt64(change.links.count))
                for link in change.links {
                    body.appendVarint(UInt64(link.fieldID))
                    body.append(link.present ? 1 : 0)
                    PrimaryKey.appendBytes(link.target, to: &body)
                }
            }
            count += 1
            if body.count >= chunkBytes {
                chunks.append(header() + body)
                body = []
                count = 0
            }
        }
        if count > 0 || chunks.isEmpty { chunks.append(header() + body) }
        return chunks
    }

    private static func appendString(_ s: String?, to out: inout [UInt8]) {
        let bytes = Array((s ?? "").utf8)
        out.appendVarint(UInt64(bytes.count))
        out.append(contentsOf: bytes)
    }

    /// The timestamp in a transaction's first chunk (purging by date reads no further).
    static func decodeHeader(_ chunk: [UInt8], lsn: UInt64) throws(DocStoreError) -> Date {
        try RecordCoding.withRaw(chunk) { (raw) throws(DocStoreError) in
            var r = RecordReader(bytes: raw, key: lsn)
            r.subject = "history transaction \(lsn) chunk 0"
            let version = try r.byte()
            guard version == formatVersion || version == valuesFormatVersion else { throw r.corrupt("format \(version) is not 1 or 2", at: 0) }
            return Date(timeIntervalSince1970: Double(Int64(bitPattern: try r.fixed(UInt64.self))) / 1000)
        }
    }

    /// Decodes the chunks of the transaction committed at `lsn`, in chunk order (HC2).
    static func decode(_ chunks: [[UInt8]], lsn: UInt64) throws(DocStoreError) -> RecordedTransaction {
        var t = RecordedTransaction(timestamp: Date(timeIntervalSince1970: 0), changes: [])
        for (n, chunk) in chunks.enumerated() {
            try RecordCoding.withRaw(chunk) { (raw) throws(DocStoreError) in
                var r = RecordReader(bytes: raw, key: lsn)
                r.subject = "history transaction \(lsn) chunk \(n)"
                let version = try r.byte()
                guard version == formatVersion || version == valuesFormatVersion else { throw r.corrupt("format \(version) is not 1 or 2", at: 0) }
                if n == 0 {
                    t.hasValues = version == valuesFormatVersion
                } else if t.hasValues != (version == valuesFormatVersion) {
                    throw r.corrupt("format \(version) differs from chunk 0's", at: 0)
                }
                if n == 0 {
                    let ms = Int64(bitPattern: try r.fixed(UInt64.self))
                    t.timestamp = Date(timeIntervalSince1970: Double(ms) / 1000)
                    let author = try r.string()
                    let name = try r.string()
                    t.author = author.isEmpty ? nil : author
                    t.contextName = name.isEmpty ? nil : name
                }
                let count = try r.varint()
                guard count <= UInt64(raw.count) else { throw r.corrupt("\(count) changes cannot fit", at: r.offset) }
                for _ in 0..<count {
                    let at = r.offset
                    guard let kind = RecordedChange.Kind(rawValue: try r.byte()) else { throw r.corrupt("unknown change kind", at: at) }
                    var key: UInt64 = 0
                    for _ in 0..<8 { key = key << 8 | UInt64(try r.byte()) }
                    var change = RecordedChange(kind: kind, key: key)
                    switch kind {
                    case .insert: break
                    case .update:
                        let m = try r.varint()
                        guard m <= UInt64(raw.count) else { throw r.corrupt("\(m) fields cannot fit", at: r.offset) }
                        for _ in 0..<m { change.fields.append(UInt32(truncatingIfNeeded: try r.varint())) }
                    case .delete:
                        let m = try r.varint()
                        guard m <= UInt64(raw.count) else { throw r.corrupt("\(m) fields cannot fit", at: r.offset) }
                        for _ in 0..<m {
                            let id = UInt32(truncatingIfNeeded: try r.varint())
                            change.tombstone.append((id, try r.value()))
                        }
                    }
                    if t.hasValues {
                        let m = try r.varint()
                        guard m <= UInt64(raw.count) else { throw r.corrupt("\(m) values cannot fit", at: r.offset) }
                        for _ in 0..<m {
                            let id = UInt32(truncatingIfNeeded: try r.varint())
                            if r.offset < raw.count, raw[r.offset] == nullTag {
                                r.offset += 1
                                change.values.append((id, .null))
                            } else {
                                change.values.append((id, try r.value()))
                            }
                        }
                        let l = try r.varint()
                        guard l <= UInt64(raw.count) else { throw r.corrupt("\(l) links cannot fit", at: r.offset) }
                        for _ in 0..<l {
                            let id = UInt32(truncatingIfNeeded: try r.varint())
                            let flagAt = r.offset
                            let flag = try r.byte()
                            guard flag <= 1 else { throw r.corrupt("link flag \(flag) is not 0 or 1", at: flagAt) }
                            var target: UInt64 = 0
                            for _ in 0..<8 { target = target << 8 | UInt64(try r.byte()) }
                            change.links.append(RecordedLink(fieldID: id, target: target, present: flag == 1))
                        }
                    }
                    t.changes.append(change)
                }
                guard r.atEnd else { throw r.corrupt("\(raw.count - r.offset) bytes after the last change", at: r.offset) }
            }
        }
        return t
    }
}
