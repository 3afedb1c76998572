// DeleteBuffer: a write transaction's run of consecutive deletes from one tree, applied to the
// B+tree in key order (BTree.deleteSorted) when anything needs the tree's real state — the
// counterpart of PutBuffer for deletes made one by one.
//
// Why: deletes of random keys one by one each copy the path to their leaf; once the transaction
// holds more pages than its spill limit, a leaf written out is read back for the next key that
// falls in it. In key order each leaf is copied once and left behind for good.
//
// Invariants:
//   D1  Every buffered key was in the tree when it was buffered (the transaction looked), and
//       no key is buffered twice: applying the buffer removes each of them, and the state after
//       that equals the state after deleting them one by one in call order. The buffer keeps a
//       64-bit hash of each key, not the key: a delete whose key's hash is among them applies
//       the buffer first (a repeat, or rarely another key with the same hash), and then looks.
//   D2  While keys are buffered, no put is buffered and nothing else has changed the tree since
//       the first of them (the transaction applies this buffer before any other operation).
//   D3  The WAL log records each delete when it is made, in call order, so replay (op by op)
//       reaches the same state.

struct DeleteBuffer {
    /// The tree the buffered deletes come from; nil when empty.
    private(set) var tree: String?
    /// The keys, packed, in call order.
    private var keys = DeleteKeys()
    /// A hash of each buffered key (D1).
    private var hashes: Set<UInt64> = []
    /// About the memory the buffer takes: the packed keys and a set slot each.
    private(set) var bytes = 0

    var isEmpty: Bool { keys.isEmpty }

    /// Whether a key with `key`'s hash is buffered: false means `key` is not.
    func mayContain(_ key: [UInt8]) -> Bool { !hashes.isEmpty && hashes.contains(Self.hash(key)) }

    /// Buffers the delete of `key`, which the tree holds and the buffer does not (D1).
    mutating func append(_ key: [UInt8], tree: String) {
        self.tree = tree
        keys.append(key)
        hashes.insert(Self.hash(key))
        bytes += key.count + Self.entryOverhead
    }

    /// A key's memory beside its bytes (its span in the packed keys, a set slot): less than a
    /// buffered put's, whose key and value are arrays of their own.
    static let entryOverhead = 40

    /// Empties the buffer, returning its tree and its keys.
    mutating func drain() -> (tree: String, keys: DeleteKeys)? {
        guard let tree, !keys.isEmpty else { return nil }
        let keys = self.keys
        self.tree = nil
        self.keys = DeleteKeys()
        self.hashes = []
        self.bytes = 0
        return (tree, keys)
    }

    /// A 64-bit hash of `key`'s bytes, eight at a time (equal keys, equal hashes; the set
    /// hashes it again).
    static func hash(_ key: [UInt8]) -> UInt64 {
        key.withUnsafeBytes { b in
            var h = UInt64(truncatingIfNeeded: b.count) &* 0x9E37_79B9_7F4A_7C15
            var i = 0
            while i + 8 <= b.count {
                h = (h ^ b.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0xBF58_476D_1CE4_E5B9
                h ^= h >> 31
                i += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while i < b.count {
                tail |= UInt64(b[i]) << shift
                shift += 8
                i += 1
            }
            h = (h ^ tail) &* 0x94D0_49BB_1331_11EB
            return h ^ (h >> 29)
        }
    }
}
