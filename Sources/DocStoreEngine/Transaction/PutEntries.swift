// PutEntries: the puts of a bulk write into one tree (`WriteTransaction.put(entries:in:)`), their
// keys and values packed into a few large byte chunks instead of two arrays per entry. A save of
// 100 000 notes makes about a million entries (records, index entries, link keys); as arrays
// each cost two heap blocks and their headers — more than the bytes they held — and all of them
// lived until the save was over.
//
// Invariants:
//   P1  Entry i's key and value are contiguous in one chunk: key at its span's start, its value
//       right after it. An entry that does not fit in the current chunk's reserved room starts
//       a new chunk (of its own size if it is larger than a chunk), so chunks are not grown by
//       reallocation and hold about the bytes put plus one chunk's slack. A chunk stays under 2 GiB
//       so that offsets fit in 32 bits.
//   P2  Entries keep the order they were appended in; sorting is the transaction's business.

internal import CPrefetch

/// Keys and values to put into one tree, appended in call order.
public struct PutEntries: Sendable {
    struct Span: Sendable {
        var chunk: UInt32
        var start: UInt32
        var keyCount: UInt32
        var valueCount: UInt32
    }

    /// The room of a full-size chunk.
    static let chunkSize = 1 << 20

    private var chunks: [[UInt8]] = []
    /// Spans in segments of `segmentSize`, so that a million entries never reallocate (and
    /// briefly double) one big array.
    private var segments: [[Span]] = []
    static let segmentShift = 16
    static let segmentSize = 1 << segmentShift
    /// How many entries were appended.
    public private(set) var count = 0
    /// Whether a key or value of 4 GiB or more was appended (its size is not kept; the
    /// transaction refuses the whole run).
    private(set) var hasOversizedEntry = false
    /// The bytes of every key and value appended.
    public private(set) var byteCount = 0

    public init() {}

    /// About the memory the entries take: their bytes and each one's span (chunk slack aside).
    public var footprint: Int { byteCount + count * MemoryLayout<Span>.stride }

    public var isEmpty: Bool { count == 0 }

    @inline(__always) private func span(_ i: Int) -> Span {
        segments[i >> Self.segmentShift][i & (Self.segmentSize - 1)]
    }

    /// Appends a put of `value` under `key`.
    public mutating func append(key: [UInt8], value: [UInt8]) {
        append(key: key, valueCapacity: value.count) { $0.append(contentsOf: value) }
    }

    /// Appends a put under `key` whose value `writeValue` appends to the chunk in place (a
    /// record encoded straight into the batch, with no array of its own). `valueCapacity` is the
    /// room to have ready; a value that comes out longer is still kept whole (the chunk grows).
    package mutating func append(key: [UInt8], valueCapacity: Int, _ writeValue: (inout [UInt8]) -> Void) {
        key.withUnsafeBytes { append(rawKey: $0, valueCapacity: valueCapacity, writeValue) }
    }

    /// Appends a put of an empty value under the 16-byte key `first ‖ second` (both big-endian,
    /// as a link's key is: Format/record.md § Links), written into the chunk with no array.
    package mutating func append(keyOf first: UInt64, _ second: UInt64) {
        let words = (first.bigEndian, second.bigEndian)
        withUnsafeBytes(of: words) { append(rawKey: $0, valueCapacity: 0) { _ in } }
    }

    /// Appends a put under the bytes `key` (read before this returns), its value written as
    /// `append(key:valueCapacity:_:)` writes it.
    package mutating func append(rawKey key: UnsafeRawBufferPointer, valueCapacity: Int, _ writeValue: (inout [UInt8]) -> Void) {
        let room = key.count + valueCapacity
        if chunks.isEmpty || chunks[chunks.count - 1].capacity - chunks[chunks.count - 1].count < room
            || chunks[chunks.count - 1].count + room > Int(UInt32.max) / 2 {
            // Chunks start small and double up to `chunkSize`, so a save of a few objects does
            // not reserve a megabyte per tree.
            var fresh: [UInt8] = []
            fresh.reserveCapacity(max(room, min(Self.chunkSize, max(4096, 2 * (chunks.last?.capacity ?? 0)))))
            chunks.append(fresh)
        }
        let c = chunks.count - 1
        let start = chunks[c].count
        chunks[c].append(contentsOf: key)
        writeValue(&chunks[c])
        let valueCount = chunks[c].count - start - key.count
        if key.count >= Int(UInt32.max) || valueCount >= Int(UInt32.max) { hasOversizedEntry = true }
        if count & (Self.segmentSize - 1) == 0 { segments.append([]) }
        segments[segments.count - 1].append(Span(chunk: UInt32(c), start: UInt32(start), keyCount: UInt32(clamping: key.count), valueCount: UInt32(clamping: valueCount)))
        count += 1
        byteCount += key.count + valueCount
    }

    /// The sizes of entry `i`'s key and value.
    func sizes(_ i: Int) -> (key: Int, value: Int) {
        let span = span(i)
        return (Int(span.keyCount), Int(span.valueCount))
    }

    /// Calls `body` with entry `i`'s key and value in place.
    @inline(__always)
    func withEntry<R, E: Error>(_ i: Int, _ body: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        let span = span(i)
        let result: Result<R, E> = chunks[Int(span.chunk)].withUnsafeBytes { raw in
            let start = Int(span.start), valueStart = start + Int(span.keyCount)
            let key = UnsafeRawBufferPointer(rebasing: raw[start ..< valueStart])
            let value = UnsafeRawBufferPointer(rebasing: raw[valueStart ..< valueStart + Int(span.valueCount)])
            do throws(E) { return .success(try body(key, value)) } catch { return .failure(error) }
        }
        return try result.get()
    }

    /// Starts loading entry `i`'s span into the cache. Entries visited in key order (not the
    /// order they were appended in) are scattered over the chunks: a visit `prefetchDistance`
    /// ahead asks for the span, and half as far ahead for the key it points to (`prefetchKey`),
    /// so neither is waited for (a batch delete's sorted visit of 2.5 million scattered keys
    /// waited on both, each time).
    @inline(__always) func prefetchSpan(_ i: Int) {
        let s = i >> Self.segmentShift
        guard s < segments.count else { return }
        segments[s].withUnsafeBufferPointer { b in
            let j = i & (Self.segmentSize - 1)
            if j < b.count, let base = b.baseAddress { docstore_prefetch(base + j) }
        }
    }

    /// Starts loading the start of entry `i`'s key into the cache (reading its span: best
    /// after `prefetchSpan(i)`).
    @inline(__always) func prefetchKey(_ i: Int) {
        guard i < count else { return }
        let span = span(i)
        chunks[Int(span.chunk)].withUnsafeBytes { raw in
            if let base = raw.baseAddress, Int(span.start) < raw.count { docstore_prefetch(base + Int(span.start)) }
        }
    }

    /// Starts loading, for a visit of the entries in `order` at its position `j`, what the
    /// visits ahead will read: the span `prefetchDistance` ahead, the key half as far.
    @inline(__always) func prefetch(ahead j: Int, in order: [Int]) {
        let far = j + Self.prefetchDistance, near = j + Self.prefetchDistance / 2
        if far < order.count { prefetchSpan(order[far]) }
        if near < order.count { prefetchKey(order[near]) }
    }

    /// How far ahead of a visit in key order `prefetchSpan` looks (`prefetchKey` half as far).
    static let prefetchDistance = 16

    /// The positions of the entries in ascending key order, one per distinct key (the last put
    /// of a key wins); nil when they are ascending and distinct already (PutBuffer.keyOrder).
    func keyOrder() -> [Int]? {
        PutBuffer.keyOrder(count, prefixes: { i in withEntry(i) { key, _ in PutBuffer.prefixes(key) } },
                           compare: { i, j in withEntry(i) { a, _ in withEntry(j) { b, _ in compareKeys(a, b) } } })
    }
}
