// WALRecord: the logical content of one committed transaction — the operations it performed, in
// order (Format/wal.md § Payload). Replaying them on the checkpoint state redoes the transaction.
//
// payload := treeCount varint, treeName*, opCount varint, op*
// treeName := length varint, UTF-8 bytes
// op := kind u8, tree varint (index into the names), then by kind:
//   1 put:        key (length varint + bytes), value (length varint + bytes)
//   2 delete:     key
//   3 createTree: nothing
//   4 dropTree:   nothing
//   5 putBlob:    key, blob ID u64, value length varint

/// One operation of a transaction, as logged.
public enum WALOperation: Equatable, Sendable {
    case put(tree: String, key: [UInt8], value: [UInt8])
    case putBlob(tree: String, key: [UInt8], blob: BlobID, length: Int)
    case delete(tree: String, key: [UInt8])
    case createTree(String)
    case dropTree(String)

    var kind: UInt8 {
        switch self {
        case .put: 1
        case .delete: 2
        case .createTree: 3
        case .dropTree: 4
        case .putBlob: 5
        }
    }
}

/// Builds a record payload as a transaction runs. Past `limit` bytes it stops recording (the
/// transaction will commit by checkpoint instead of a WAL record) but keeps counting operations.
struct WALPayloadBuilder {
    /// Bytes after which the builder stops recording operations.
    var limit = Int.max
    /// Whether the limit was reached: the payload is incomplete and must not be written.
    private(set) var overflowed = false
    private var names: [String] = []
    private var index: [String: Int] = [:]
    private var ops: [UInt8] = []
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }
    /// Bytes of operations logged so far (about the record's size before compression).
    var byteCount: Int { ops.count }

    private mutating func tree(_ name: String) -> Int {
        if let i = index[name] { return i }
        names.append(name)
        index[name] = names.count - 1
        return names.count - 1
    }

    mutating func append(_ op: WALOperation) {
        count += 1
        if overflowed { return }
        if ops.count >= limit {
            overflow()
            return
        }
        ops.append(op.kind)
        switch op {
        case let .put(t, key, value):
            ops.appendVarint(UInt64(tree(t)))
            ops.appendLengthPrefixed(key)
            ops.appendLengthPrefixed(value)
        case let .putBlob(t, key, blob, length):
            ops.appendVarint(UInt64(tree(t)))
            ops.appendLengthPrefixed(key)
            ops.appendU64(blob.rawValue)
            ops.appendVarint(UInt64(length))
        case let .delete(t, key):
            ops.appendVarint(UInt64(tree(t)))
            ops.appendLengthPrefixed(key)
        case let .createTree(t), let .dropTree(t):
            ops.appendVarint(UInt64(tree(t)))
        }
    }

    /// Counts `n` operations of about `byteCount` bytes, and whether to record them: false once
    /// they would pass the limit (the builder then overflows, and its bytes are dropped).
    private mutating func records(_ n: Int, of byteCount: Int) -> Bool {
        count += n
        if overflowed || ops.count + byteCount >= limit {
            overflow()
            return false
        }
        // Grown by at least doubling: `reserveCapacity` alone reserves exactly what it is asked,
        // so a save logging its deletes a chunk at a time copied the whole payload per chunk.
        // Never past the limit: a payload that reaches it is dropped.
        let needed = ops.count + byteCount
        if ops.capacity < needed { ops.reserveCapacity(Swift.max(needed, Swift.min(2 * ops.capacity, limit))) }
        return true
    }

    /// Logs puts of `entries` into `tree`, whose keys and values come to `byteCount` bytes:
    /// recorded when they fit under the limit; otherwise the builder overflows at once, without
    /// copying them.
    mutating func appendPuts<Run: SortedPutRun>(tree t: String, _ run: Run, byteCount: Int) {
        guard records(run.count, of: byteCount + 12 * run.count) else { return }
        let index = UInt64(tree(t))
        let kind = WALOperation.put(tree: t, key: [], value: []).kind
        for i in 0..<run.count {
            run.withEntry(i) { key, value in
                ops.append(kind)
                ops.appendVarint(index)
                ops.appendVarint(UInt64(key.count))
                ops.append(contentsOf: key)
                ops.appendVarint(UInt64(value.count))
                ops.append(contentsOf: value)
            }
        }
    }

    /// Logs deletes from `tree` of the keys of `keys` at the positions `removed`, in that order
    /// (`byteCount` bytes of keys), as `appendPuts` logs puts.
    mutating func appendDeletes(tree t: String, _ keys: DeleteKeys, _ removed: [Int], byteCount: Int) {
        guard records(removed.count, of: byteCount + 4 * removed.count) else { return }
        let index = UInt64(tree(t))
        let kind = WALOperation.delete(tree: t, key: []).kind
        for i in removed {
            keys.withKey(i) { key in
                ops.append(kind)
                ops.appendVarint(index)
                ops.appendVarint(UInt64(key.count))
                ops.append(contentsOf: key)
            }
        }
    }

    /// Tells the builder that at least `byteCount` more bytes of operations will follow: when
    /// they cannot fit under the limit, it overflows now (the transaction commits by checkpoint,
    /// as it would once they passed the limit) rather than copying operations up to the limit
    /// first — a save of 100 000 notes held a 27 MB log it was going to drop.
    mutating func expect(_ byteCount: Int) {
        guard !overflowed, ops.count + byteCount >= limit else { return }
        overflow()
    }

    /// Gives the payload up: the transaction will commit by checkpoint; operations are still
    /// counted.
    private mutating func overflow() {
        overflowed = true
        ops = []
    }

    /// The payload, made from the operations' own buffer: the tree names go in front of them in
    /// place, so a large transaction's operations are not copied into a second buffer. The
    /// builder is empty afterwards.
    mutating func takePayload() -> [UInt8] {
        precondition(!overflowed, "an overflowed WAL payload is never written")
        var head = [UInt8]()
        head.appendVarint(UInt64(names.count))
        for n in names { head.appendLengthPrefixed(Array(n.utf8)) }
        head.appendVarint(UInt64(count))
        var payload = ops
        ops = []
        if payload.capacity < payload.count + head.count {
            payload.reserveCapacity(payload.count + head.count)
        }
        payload.insert(contentsOf: head, at: 0)
        return payload
    }
}

enum WALPayload {
    /// Decodes a payload; every length and index is checked against the bytes present (I10).
    static func decode(_ raw: UnsafeRawBufferPointer, lsn: LSN) throws(EngineError) -> [WALOperation] {
        var r = ByteReader(raw, what: "WAL record \(lsn.rawValue)")
        let treeCount = try r.readVarint()
        guard treeCount <= UInt64(r.remaining) else { throw .corrupt("WAL record names \(treeCount) trees in \(r.remaining) bytes", lsn: lsn) }
        var names: [String] = []
        for _ in 0..<treeCount {
            let bytes = try r.readLengthPrefixed()
            guard let name = String(validating: bytes, as: UTF8.self) else {
                throw .corrupt("WAL record has a tree name that is not UTF-8", lsn: lsn, offset: UInt64(r.offset))
            }
            names.append(name)
        }
        let opCount = try r.readVarint()
        guard opCount <= UInt64(r.remaining) else { throw .corrupt("WAL record claims \(opCount) operations in \(r.remaining) bytes", lsn: lsn) }
        var ops: [WALOperation] = []
        ops.reserveCapacity(Int(opCount))
        for _ in 0..<opCount {
            let at = r.offset
            let kind = try r.readU8()
            let t = try r.readVarint()
            guard t < UInt64(names.count) else { throw .corrupt("WAL operation names tree \(t) of \(names.count)", lsn: lsn, offset: UInt64(at)) }
            let tree = names[Int(t)]
            switch kind {
            case 1: ops.append(.put(tree: tree, key: try r.readLengthPrefixed(), value: try r.readLengthPrefixed()))
            case 2: ops.append(.delete(tree: tree, key: try r.readLengthPrefixed()))
            case 3: ops.append(.createTree(tree))
            case 4: ops.append(.dropTree(tree))
            case 5:
                let key = try r.readLengthPrefixed()
                let blob = BlobID(try r.readU64())
                let length = try r.readVarint()
                guard length <= UInt64(UInt32.max) else { throw .corrupt("WAL blob length \(length) too large", lsn: lsn, offset: UInt64(at)) }
                ops.append(.putBlob(tree: tree, key: key, blob: blob, length: Int(length)))
            default:
                throw .corrupt("WAL operation has unknown kind \(kind)", lsn: lsn, offset: UInt64(at))
            }
        }
        guard r.isAtEnd else { throw .corrupt("WAL record has \(r.remaining) bytes after its last operation", lsn: lsn, offset: UInt64(r.offset)) }
        return ops
    }
}
