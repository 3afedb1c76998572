// DeleteKeys: the keys of a bulk delete from one tree (`WriteTransaction.delete(_:in:)`), packed
// into a few large byte chunks as PutEntries packs puts, instead of an array per key. A batch
// delete of 500 000 notes removes about four million keys (records, index entries, links on
// both sides); as arrays each was a heap block, retained and released on its way through the
// sort, the B-tree and the log, and those allocations were a third of the delete.
//
// Invariants:
//   K1  Keys keep the order they were appended in, repeats and all; sorting them and dropping
//       repeats is the transaction's business (PutBuffer.keyOrder).
//   K2  A key is stored as a put of an empty value in PutEntries, so its chunks and spans keep
//       PutEntries' invariants P1 and P2.

/// Keys to delete from one tree, appended in call order.
public struct DeleteKeys: Sendable {
    /// The keys, each as a put of an empty value (K2).
    private(set) var entries = PutEntries()

    public init() {}

    /// The keys of `keys`, in their order.
    public init(_ keys: [[UInt8]]) {
        for key in keys { append(key) }
    }

    /// How many keys were appended (repeats counted).
    public var count: Int { entries.count }

    public var isEmpty: Bool { entries.isEmpty }

    /// The bytes of every key appended.
    public var byteCount: Int { entries.byteCount }

    /// Appends `key`.
    public mutating func append(_ key: [UInt8]) {
        key.withUnsafeBytes { entries.append(rawKey: $0) }
    }

    /// Appends `key`, copied from where it is (a cursor's entry in place).
    package mutating func append(_ key: UnsafeRawBufferPointer) {
        entries.append(rawKey: key)
    }

    /// Appends the 16-byte key `first ‖ second` (both big-endian, as a link's key is:
    /// Format/record.md § Links), with no array made for it.
    package mutating func append(keyOf first: UInt64, _ second: UInt64) {
        entries.append(keyOf: first, second)
    }

    /// Whether a key of 4 GiB or more was appended (the transaction refuses the whole run).
    var hasOversizedKey: Bool { entries.hasOversizedEntry }

    /// Calls `body` with key `i` in place.
    @inline(__always)
    func withKey<R, E: Error>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try entries.withEntry(i) { (key, _) throws(E) in try body(key) }
    }

    /// The positions of the keys in ascending order, one per distinct key; nil when they are
    /// ascending and distinct already (PutBuffer.keyOrder).
    func keyOrder() -> [Int]? {
        entries.keyOrder()
    }
}
