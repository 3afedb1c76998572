// RecordCoding: an object's record — the value stored under its primary key in its entity's
// records tree. Implements Format/record.md:
//
//   record := format u8 (= 1) | entityID varint | schemaVersion varint | rowVersion varint | field*
//   field  := fieldID varint | tag u8 | payload
//
// Fields are written in ascending field-ID order; a null value is not written at all, so a field
// the record lacks reads as null (or its default), and adding an attribute rewrites nothing.
// Decoding never traps: a truncated or malformed record throws `.corrupt` naming the key and
// byte offset.

import Foundation
internal import DocStoreEngine

/// The type tags of Format/record.md § Type tags.
enum RecordTag: UInt8 {
    case boolFalse = 1, boolTrue = 2, int = 3, double = 4, float = 5, decimal = 6, string = 7
    case date = 8, uuid = 9, url = 10, data = 11, document = 12, reference = 13
}

/// A decoded record: its header and its fields by field ID.
struct DecodedRecord {
    var entityID: UInt32
    var schemaVersion: UInt32
    var rowVersion: UInt64
    var fields: [(fieldID: UInt32, value: StoredValue)]
}

enum RecordCoding {
    static let formatVersion: UInt8 = 1

    /// Encodes a record. `fields` must be in ascending field-ID order; nulls are skipped.
    static func encode(entityID: UInt32, schemaVersion: UInt32, rowVersion: UInt64,
                       fields: [(fieldID: UInt32, value: StoredValue)]) -> [UInt8] {
        // The exact size up front: a record grown by doubling kept about 1.7 times its bytes
        // until the save was over (53 MB for 100 000 notes of 300 bytes).
        var size = headerCapacity
        for (_, value) in fields where !value.isNull { size += fieldCapacity(value) }
        var out: [UInt8] = []
        out.reserveCapacity(size)
        appendHeader(entityID: entityID, schemaVersion: schemaVersion, rowVersion: rowVersion, to: &out)
        for (id, value) in fields { appendField(id, value, to: &out) }
        return out
    }

    /// The most bytes a record's header takes.
    static let headerCapacity = 1 + 5 + 5 + 10

    /// The most bytes a field of `value` takes (an estimate for a decimal or URL: see
    /// `encodedSize`).
    static func fieldCapacity(_ value: StoredValue) -> Int { 5 + encodedSize(of: value) }

    /// Appends a record's header: what `encode` writes before the fields.
    static func appendHeader(entityID: UInt32, schemaVersion: UInt32, rowVersion: UInt64, to out: inout [UInt8]) {
        out.append(formatVersion)
        out.appendVarint(UInt64(entityID))
        out.appendVarint(UInt64(schemaVersion))
        out.appendVarint(rowVersion)
    }

    /// Appends one field (nothing for a null), after the fields of lower IDs.
    static func appendField(_ id: UInt32, _ value: StoredValue, to out: inout [UInt8]) {
        if case .null = value { return }
        out.appendVarint(UInt64(id))
        appendValue(value, to: &out)
    }

    /// The bytes `appendValue` writes for `value` (tag and payload): exact, except that a
    /// decimal or URL, whose text is made only when written, is counted as its usual size.
    static func encodedSize(of value: StoredValue) -> Int {
        switch value {
        case .null: return 0
        case .bool: return 1
        case .int, .reference: return 1 + 10
        case .double, .date: return 1 + 8
        case .float: return 1 + 4
        case .uuid: return 1 + 16
        case .string(let v): return 1 + 5 + v.utf8.count
        case .data(let v), .document(let v): return 1 + 5 + v.count
        case .decimal, .url: return 1 + 5 + 40
        }
    }

    static func appendValue(_ value: StoredValue, to out: inout [UInt8]) {
        switch value {
        case .null: break
        case .bool(let v): out.append(v ? RecordTag.boolTrue.rawValue : RecordTag.boolFalse.rawValue)
        case .int(let v):
            out.append(RecordTag.int.rawValue)
            out.appendVarint(UInt64(bitPattern: (v << 1) ^ (v >> 63)))
        case .double(let v):
            out.append(RecordTag.double.rawValue)
            out.appendU64(v.bitPattern)
        case .float(let v):
            out.append(RecordTag.float.rawValue)
            out.appendU32(v.bitPattern)
        case .decimal(let v):
            out.append(RecordTag.decimal.rawValue)
            out.appendLengthPrefixed(Array(v.description.utf8))
        case .string(let v):
            out.append(RecordTag.string.rawValue)
            out.appendVarint(UInt64(v.utf8.count))
            // A native string's UTF-8 in place; a bridged or lazy one through its view.
            if v.utf8.withContiguousStorageIfAvailable({ out.append(contentsOf: $0) }) == nil {
                out.append(contentsOf: v.utf8)
            }
        case .date(let v):
            out.append(RecordTag.date.rawValue)
            out.appendU64(v.timeIntervalSinceReferenceDate.bitPattern)
        case .uuid(let v):
            out.append(RecordTag.uuid.rawValue)
            withUnsafeBytes(of: v.uuid) { out.append(contentsOf: $0) }
        case .url(let v):
            out.append(RecordTag.url.rawValue)
            out.appendLengthPrefixed(Array(v.absoluteString.utf8))
        case .data(let v):
            out.append(RecordTag.data.rawValue)
            out.appendLengthPrefixed(Array(v))
        case .document(let v):
            out.append(RecordTag.document.rawValue)
            out.appendLengthPrefixed(Array(v))
        case .reference(let v):
            out.append(RecordTag.reference.rawValue)
            out.appendVarint(v)
        }
    }

    /// Decodes a record; `key` names it in errors.
    static func decode(_ bytes: [UInt8], key: UInt64) throws(DocStoreError) -> DecodedRecord {
        var fields: [(fieldID: UInt32, value: StoredValue)] = []
        let header = try withRaw(bytes) { (raw) throws(DocStoreError) in
            try forEachField(raw, key: key) { id, value in fields.append((id, value)) }
        }
        return DecodedRecord(entityID: header.entityID, schemaVersion: header.schemaVersion, rowVersion: header.rowVersion, fields: fields)
    }

    /// Decodes a record's fields straight into an object's values by slot (fields the entity
    /// does not have are skipped, rule 3); returns the row version.
    /// Fields whose slot is -1 in `slotForField` (a removed attribute) are read and checked but
    /// not kept. With `partial`, they are only stepped over (bounds checked, no values made): a
    /// query reads just the fields its predicate uses this way, and decodes its matches whole.
    static func decode(_ bytes: [UInt8], key: UInt64, into values: inout [StoredValue], slotForField: [Int],
                       partial: Bool = false) throws(DocStoreError) -> UInt64 {
        try withRaw(bytes) { (raw) throws(DocStoreError) in
            try decode(raw, key: key, into: &values, slotForField: slotForField, partial: partial)
        }
    }

    /// The same, from bytes in place (a record still in its page: queries decode candidates
    /// without copying them out).
    static func decode(_ bytes: UnsafeRawBufferPointer, key: UInt64, into values: inout [StoredValue], slotForField: [Int],
                       partial: Bool = false) throws(DocStoreError) -> UInt64 {
        func slot(_ id: UInt32) -> Int { Int(id) < slotForField.count ? slotForField[Int(id)] : -1 }
        return try forEachField(bytes, key: key, wanted: { id in !partial || slot(id) >= 0 }) { id, value in
            let s = slot(id)
            if s >= 0 { values[s] = value }
        }.rowVersion
    }

    /// Checks a whole record as `decode` would — header, ascending field IDs, tags, bounds, and
    /// that every string, decimal and URL decodes — without making its values; returns the row
    /// version. A record that passes decodes field by field without errors (`field`), so an
    /// object can keep it and decode each property on first read.
    static func validate(_ bytes: UnsafeRawBufferPointer, key: UInt64) throws(DocStoreError) -> UInt64 {
        var reader = RecordReader(bytes: bytes, key: key)
        let header = try readHeader(&reader)
        var previous: UInt64? = nil
        while !reader.atEnd {
            _ = try reader.fieldID(after: &previous)
            try reader.checkValue()
        }
        return header.rowVersion
    }

    /// The value of field `fieldID` in a record `validate` passed; nil when the record lacks it
    /// (its default applies). Steps over the fields before it without decoding them — from
    /// `position`, where the last such read of these bytes stopped, when `fieldID` lies past it
    /// (reading an object's attributes in their order walks its record once), else from the
    /// header. `position` is left where this read stopped.
    /// `checked`: the bytes passed `validate` (RecordReader.checked).
    static func field(_ bytes: UnsafeRawBufferPointer, _ fieldID: UInt32, key: UInt64,
                      from position: inout RecordPosition, checked: Bool = false) throws(DocStoreError) -> StoredValue? {
        var reader = RecordReader(bytes: bytes, key: key)
        reader.checked = checked
        // Go on from the position when the field there is the one wanted or comes before it.
        // (The fields before it were checked with the whole record, so the ascending order of
        // IDs is checked from there on only.)
        var resumes = false
        if position.offset != 0, Int(position.offset) < bytes.count {
            var peek = reader
            peek.offset = Int(position.offset)
            if let next = try? peek.varint(), next <= UInt64(fieldID) {
                reader.offset = Int(position.offset)
                resumes = true
            }
        }
        if !resumes { _ = try readHeader(&reader) }
        var previous: UInt64? = nil
        while !reader.atEnd {
            let start = reader.offset
            let id = try reader.fieldID(after: &previous)
            if id == fieldID {
                let value = try reader.value()
                position = RecordPosition(offset: reader.offset)
                return value
            }
            if id > fieldID {
                position = RecordPosition(offset: start)
                return nil
            }
            try reader.skipValue()
        }
        position = RecordPosition(offset: reader.offset)
        return nil
    }

    /// The value of field `fieldID`, read from the header on (RecordCoding.field(_:_:key:from:)).
    static func field(_ bytes: UnsafeRawBufferPointer, _ fieldID: UInt32, key: UInt64) throws(DocStoreError) -> StoredValue? {
        var position = RecordPosition()
        return try field(bytes, fieldID, key: key, from: &position)
    }

    /// `bytes` rewritten with new schema and row versions and the fields of `changes`
    /// (ascending field IDs; a null removes the field); every other field `keep` accepts is
    /// copied as it is, without being decoded, and the rest are dropped. A batch update
    /// changing two small fields of a record with long strings copies the strings' bytes.
    /// The record is written into `out`, which is emptied first (a buffer kept from record to
    /// record).
    static func patch(_ bytes: [UInt8], key: UInt64, schemaVersion: UInt32, rowVersion: UInt64,
                      changes: [(fieldID: UInt32, value: StoredValue)], into out: inout [UInt8], keep: (UInt32) -> Bool) throws(DocStoreError) {
        try withRaw(bytes) { (raw) throws(DocStoreError) in
            var reader = RecordReader(bytes: raw, key: key)
            let header = try readHeader(&reader)
            out.removeAll(keepingCapacity: true)
            out.reserveCapacity(bytes.count + 16)
            out.append(formatVersion)
            out.appendVarint(UInt64(header.entityID))
            out.appendVarint(UInt64(schemaVersion))
            out.appendVarint(rowVersion)
            var next = 0
            func writeChanges(below limit: UInt64, _ out: inout [UInt8]) {
                while next < changes.count, UInt64(changes[next].fieldID) < limit {
                    if !changes[next].value.isNull {
                        out.appendVarint(UInt64(changes[next].fieldID))
                        appendValue(changes[next].value, to: &out)
                    }
                    next += 1
                }
            }
            var previous: UInt64? = nil
            // Kept fields are copied in runs, each with one append: field by field, the appends
            // were most of a batch update's patching.
            var run: Int? = nil
            while !reader.atEnd {
                let at = reader.offset
                let id = UInt64(try reader.fieldID(after: &previous))
                try reader.skipValue()
                if next < changes.count, UInt64(changes[next].fieldID) <= id {
                    if let start = run { out.append(contentsOf: raw[start..<at]) }
                    run = nil
                    writeChanges(below: id, &out)
                    if next < changes.count, UInt64(changes[next].fieldID) == id {
                        writeChanges(below: id + 1, &out)
                        continue
                    }
                }
                if keep(UInt32(id)) {
                    if run == nil { run = at }
                } else {
                    if let start = run { out.append(contentsOf: raw[start..<at]) }
                    run = nil
                }
            }
            if let start = run { out.append(contentsOf: raw[start..<reader.offset]) }
            writeChanges(below: UInt64.max, &out)
        }
    }

    /// A record's row version, read from its header alone (optimistic locking checks it).
    static func rowVersion(_ bytes: [UInt8], key: UInt64) throws(DocStoreError) -> UInt64 {
        try withRaw(bytes) { (raw) throws(DocStoreError) in
            var reader = RecordReader(bytes: raw, key: key)
            return try readHeader(&reader).rowVersion
        }
    }

    /// `body` over the bytes of an array, with typed errors.
    static func withRaw<R>(_ bytes: [UInt8], _ body: (UnsafeRawBufferPointer) throws(DocStoreError) -> R) throws(DocStoreError) -> R {
        let result: Result<R, DocStoreError> = bytes.withUnsafeBytes { raw in
            do throws(DocStoreError) { return .success(try body(raw)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Reads a record's header, then hands each field `wanted` accepts to `body` in order,
    /// checking rule 1 (a field not wanted is checked for its bounds only).
    @inline(__always)
    private static func forEachField(_ bytes: UnsafeRawBufferPointer, key: UInt64, wanted: (UInt32) -> Bool = { _ in true },
                                     _ body: (UInt32, StoredValue) -> Void)
        throws(DocStoreError) -> (entityID: UInt32, schemaVersion: UInt32, rowVersion: UInt64) {
        var reader = RecordReader(bytes: bytes, key: key)
        let header = try readHeader(&reader)
        var previous: UInt64? = nil
        while !reader.atEnd {
            let id = try reader.fieldID(after: &previous)
            if wanted(id) { body(id, try reader.value()) } else { try reader.skipValue() }
        }
        return header
    }

    /// A record's header (format, entity ID, schema version, row version), checked.
    @inline(__always)
    static func readHeader(_ reader: inout RecordReader) throws(DocStoreError) -> (entityID: UInt32, schemaVersion: UInt32, rowVersion: UInt64) {
        let version = try reader.byte()
        guard version == formatVersion else {
            throw reader.corrupt("record format \(version) is not 1", at: 0)
        }
        let entity = try reader.varint()
        let schemaVersion = try reader.varint()
        let rowVersion = try reader.varint()
        guard entity <= UInt64(UInt32.max), schemaVersion <= UInt64(UInt32.max) else {
            throw reader.corrupt("entity or schema version out of range", at: 1)
        }
        return (UInt32(entity), UInt32(schemaVersion), rowVersion)
    }
}

/// Where a walk through a record's fields stopped (RecordCoding.field): the offset of the next
/// field not yet read; 0 for none (read from the header). Four bytes, as every fetched object
/// holds one (in what was padding).
struct RecordPosition {
    var offset: UInt32 = 0

    init() {}

    /// A position at `offset`; the start when it does not fit.
    init(offset: Int) { self.offset = UInt32(exactly: offset) ?? 0 }
}

/// Reads a record's bytes (in place: the caller keeps them alive while it reads); every read
/// checks bounds and throws `.corrupt` past the end.
struct RecordReader {
    let bytes: UnsafeRawBufferPointer
    let key: UInt64
    var offset = 0
    /// What errors call the bytes; "record <key>" when nil.
    var subject: String? = nil
    /// The bytes passed `RecordCoding.validate` whole (a record an object keeps): its strings'
    /// UTF-8 is not checked again as they are read.
    var checked = false

    /// One value as a default or a stored value holds it (tag and payload), from an array.
    static func value(from bytes: [UInt8]) throws(DocStoreError) -> StoredValue {
        try RecordCoding.withRaw(bytes) { (raw) throws(DocStoreError) in
            var reader = RecordReader(bytes: raw, key: 0)
            return try reader.value()
        }
    }

    var atEnd: Bool { offset >= bytes.count }

    func corrupt(_ what: String, at offset: Int) -> DocStoreError {
        DocStoreError(.corrupt, "\(subject ?? "record \(key)") is damaged at byte \(offset): \(what)")
    }

    mutating func byte() throws(DocStoreError) -> UInt8 {
        guard offset < bytes.count else { throw corrupt("ends early", at: offset) }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func varint() throws(DocStoreError) -> UInt64 {
        let start = offset
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = try byte()
            guard shift < 64, shift < 63 || b <= 1 else { throw corrupt("varint too long", at: start) }
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
    }

    /// A little-endian fixed-width integer.
    mutating func fixed<T: FixedWidthInteger & UnsignedInteger>(_: T.Type) throws(DocStoreError) -> T {
        let size = MemoryLayout<T>.size
        guard bytes.count - offset >= size else { throw corrupt("ends inside a \(size * 8)-bit value", at: offset) }
        var v: T = 0
        for i in 0..<size { v |= T(bytes[offset + i]) << (8 * i) }
        offset += size
        return v
    }

    mutating func lengthPrefixed() throws(DocStoreError) -> Slice<UnsafeRawBufferPointer> {
        let at = offset
        let n = try varint()
        guard n <= UInt64(bytes.count - offset) else { throw corrupt("length \(n) runs past the end", at: at) }
        defer { offset += Int(n) }
        return bytes[offset..<(offset + Int(n))]
    }

    mutating func string() throws(DocStoreError) -> String {
        let at = offset
        let bytes = UnsafeRawBufferPointer(rebasing: try lengthPrefixed())
        // Checked in place, then made from a typed buffer: `String(validating:)` over a slice
        // went through unspecialized generic code (a metadata lookup per string). A checked
        // record's strings were checked with it.
        guard checked || UTF8Validation.isValid(bytes) else { throw corrupt("invalid UTF-8", at: at) }
        return String(decoding: bytes.assumingMemoryBound(to: UInt8.self), as: UTF8.self)
    }

    /// The next field's ID, checked to ascend after `previous` (rule 1), which it becomes.
    mutating func fieldID(after previous: inout UInt64?) throws(DocStoreError) -> UInt32 {
        let at = offset
        let id = try varint()
        guard id <= UInt64(UInt32.max), previous.map({ id > $0 }) ?? true else {
            throw corrupt("field IDs must ascend (field \(id) after \(previous ?? 0))", at: at)
        }
        previous = id
        return UInt32(id)
    }

    /// Steps over one value (tag and payload), checking only that it lies inside the record.
    mutating func skipValue() throws(DocStoreError) {
        let at = offset
        let raw = try byte()
        guard let tag = RecordTag(rawValue: raw) else { throw corrupt("unknown type tag \(raw)", at: at) }
        let size: Int
        switch tag {
        case .boolFalse, .boolTrue: return
        case .int, .reference: _ = try varint(); return
        case .double, .date: size = 8
        case .float: size = 4
        case .uuid: size = 16
        case .decimal, .string, .url, .data, .document: _ = try lengthPrefixed(); return
        }
        guard bytes.count - offset >= size else { throw corrupt("ends inside a value", at: offset) }
        offset += size
    }

    /// Steps over one value as `skipValue` does, checking too that it decodes: a string's
    /// UTF-8, a decimal's and a URL's text (those two are made and dropped; they are rare).
    mutating func checkValue() throws(DocStoreError) {
        let at = offset
        guard offset < bytes.count else { throw corrupt("ends early", at: offset) }
        switch RecordTag(rawValue: bytes[offset]) {
        case .string?:
            offset += 1
            let slice = try lengthPrefixed()
            guard UTF8Validation.isValid(slice) else { throw corrupt("invalid UTF-8", at: at + 1) }
        case .decimal?, .url?:
            _ = try value()
        default:
            try skipValue()
        }
    }

    /// An integer's payload: a zigzag varint (Format/record.md § Type tags).
    mutating func zigzagInt() throws(DocStoreError) -> Int64 {
        let z = try varint()
        return Int64(bitPattern: (z >> 1) ^ (0 &- (z & 1)))
    }

    mutating func value() throws(DocStoreError) -> StoredValue {
        let at = offset
        let raw = try byte()
        guard let tag = RecordTag(rawValue: raw) else { throw corrupt("unknown type tag \(raw)", at: at) }
        switch tag {
        case .boolFalse: return .bool(false)
        case .boolTrue: return .bool(true)
        case .int: return .int(try zigzagInt())
        case .double: return .double(Double(bitPattern: try fixed(UInt64.self)))
        case .float: return .float(Float(bitPattern: try fixed(UInt32.self)))
        case .decimal:
            let s = try string()
            guard let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else { throw corrupt("invalid decimal \"\(s)\"", at: at) }
            return .decimal(d)
        case .string: return .string(try string())
        case .date: return .date(Date(timeIntervalSinceReferenceDate: Double(bitPattern: try fixed(UInt64.self))))
        case .uuid:
            guard bytes.count - offset >= 16 else { throw corrupt("ends inside a UUID", at: offset) }
            var u = UUID.placeholder.uuid
            withUnsafeMutableBytes(of: &u) { $0.copyBytes(from: bytes[offset..<(offset + 16)]) }
            offset += 16
            return .uuid(UUID(uuid: u))
        case .url:
            let s = try string()
            guard let url = URL(string: s) else { throw corrupt("invalid URL \"\(s)\"", at: at) }
            return .url(url)
        case .data: return .data(Data(try lengthPrefixed()))
        case .document: return .document(Data(try lengthPrefixed()))
        case .reference: return .reference(try varint())
        }
    }
}
