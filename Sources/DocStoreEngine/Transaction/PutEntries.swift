// PutEntries: the puts of a bulk write into one tree (`WriteTransaction.put(entries:in:)`), their
// keys and values packed into a few large byte chunks instead of two arrays per entry. A save of
// 100 000 notes makes about a million entries (records, index entries, link keys); as arrays
// each cost two heap blocks and their headers — more than the bytes they held — and all of them
// lived until the save was over.
//
// The chunks and the spans are memory of their own (PutEntriesStorage), reached through plain
// pointers kept in the value: reading an entry retains nothing. As arrays of arrays, each read
// retained and released the chunk's and the span segment's buffers — a sorted run's merge and
// the sort before it read an entry millions of times (a twentieth of a save of 100 000 notes).
//
// Invariants:
//   P1  Entry i's key and value are contiguous in one chunk: key at its span's start, its value
//       right after it. An entry that does not fit in the current chunk's room starts a new
//       chunk (of its own size if it is larger than a chunk), so chunks never move and hold
//       about the bytes put plus one chunk's slack. A chunk stays under 2 GiB so that offsets
//       fit in 32 bits.
//   P2  Entries keep the order they were appended in; sorting is the transaction's business.
//   P3  Copy on write: `chunkBases` and `spanSegments` point into `storage`, which only this
//       value writes. An append to a value whose storage another value shares first copies it
//       (as an array's append does), so bytes another value can read are never written.

internal import CPrefetch

/// Keys and values to put into one tree, appended in call order.
///
/// `@unchecked Sendable`: its pointers reach only `storage`, and storage is written only by a
/// value that holds it alone (P3) — the guarantee an array gives its elements.
public struct PutEntries: @unchecked Sendable {
    struct Span {
        var chunk: UInt32
        var start: UInt32
        var keyCount: UInt32
        var valueCount: UInt32
    }

    /// The room of a full-size chunk.
    static let chunkSize = 1 << 20

    /// Where each chunk starts (memory of `storage`).
    private var chunkBases: [UnsafeMutableRawPointer] = []
    /// Spans in segments of `segmentSize` (memory of `storage`), so that a million entries never
    /// reallocate (and briefly double) one big block.
    private var spanSegments: [UnsafeMutablePointer<Span>] = []
    static let segmentShift = 16
    static let segmentSize = 1 << segmentShift
    /// The room of a first segment.
    static let firstSegmentSize = 256
    /// Owns the chunks and the segments; nil until the first append.
    private var storage: PutEntriesStorage?
    /// Where a value is written before it is copied behind its key (kept between appends).
    private var valueScratch: [UInt8] = []
    /// The last chunk's room and the bytes of it used (entries put into `storage` after the
    /// last chunk was started: P3 copies them by these).
    private var lastChunkCapacity = 0
    private var lastChunkUsed = 0
    /// The room of the last span segment.
    private var lastSegmentCapacity = 0
    /// How many entries were appended.
    public private(set) var count = 0
    /// Whether a key or value of 4 GiB or more was appended (its size is not kept; the
    /// transaction refuses the whole run).
    private(set) var hasOversizedEntry = false
    /// The bytes of every key and value appended.
    public private(set) var byteCount = 0
    /// The longest value appended (whether any may go to a blob file).
    private(set) var longestValue = 0

    public init() {}

    /// About the memory the entries take: their bytes and each one's span (chunk slack aside).
    public var footprint: Int { byteCount + count * MemoryLayout<Span>.stride }

    public var isEmpty: Bool { count == 0 }

    @inline(__always) private func span(_ i: Int) -> Span {
        spanSegments[i >> Self.segmentShift][i & (Self.segmentSize - 1)]
    }

    /// Appends a put of `value` under `key`.
    public mutating func append(key: [UInt8], value: [UInt8]) {
        key.withUnsafeBytes { k in
            value.withUnsafeBytes { v in append(rawKey: k, rawValue: v) }
        }
    }

    /// Appends a put under `key` whose value `writeValue` appends to the (empty) array it is
    /// given: a record encoded straight into the batch, with no array of its own.
    /// `valueCapacity` is about the value's size; a value that comes out longer is still kept
    /// whole.
    package mutating func append(key: [UInt8], valueCapacity: Int, _ writeValue: (inout [UInt8]) -> Void) {
        key.withUnsafeBytes { append(rawKey: $0, valueCapacity: valueCapacity, writeValue) }
    }

    /// Appends a put of an empty value under the 16-byte key `first ‖ second` (both big-endian,
    /// as a link's key is: Format/record.md § Links), written into the chunk with no array.
    package mutating func append(keyOf first: UInt64, _ second: UInt64) {
        let words = (first.bigEndian, second.bigEndian)
        withUnsafeBytes(of: words) { append(rawKey: $0) }
    }

    /// Appends a put of an empty value under the bytes `key` (read before this returns).
    package mutating func append(rawKey key: UnsafeRawBufferPointer) {
        append(rawKey: key, rawValue: UnsafeRawBufferPointer(start: nil, count: 0))
    }

    /// Appends a put under the bytes `key` (read before this returns), its value written as
    /// `append(key:valueCapacity:_:)` writes it.
    package mutating func append(rawKey key: UnsafeRawBufferPointer, valueCapacity: Int, _ writeValue: (inout [UInt8]) -> Void) {
        valueScratch.removeAll(keepingCapacity: true)
        if valueScratch.capacity < valueCapacity { valueScratch.reserveCapacity(valueCapacity) }
        writeValue(&valueScratch)
        let valueCount = valueScratch.count
        let (chunk, start) = reserve(key: key.count, value: valueCount)
        let base = chunkBases[chunk] + start
        if let k = key.baseAddress, key.count > 0 { base.copyMemory(from: k, byteCount: key.count) }
        valueScratch.withUnsafeBytes { v in
            if let from = v.baseAddress, v.count > 0 { (base + key.count).copyMemory(from: from, byteCount: v.count) }
        }
    }

    /// Appends a put of the bytes `value` under the bytes `key` (both read before this returns).
    package mutating func append(rawKey key: UnsafeRawBufferPointer, rawValue value: UnsafeRawBufferPointer) {
        let (chunk, start) = reserve(key: key.count, value: value.count)
        let base = chunkBases[chunk] + start
        if let k = key.baseAddress, key.count > 0 { base.copyMemory(from: k, byteCount: key.count) }
        if let v = value.baseAddress, value.count > 0 { (base + key.count).copyMemory(from: v, byteCount: value.count) }
    }

    /// Adds the span of a new entry of `key` + `value` bytes and reserves its bytes at the end
    /// of the last chunk (P1); the caller writes them there. Its chunk and offset.
    private mutating func reserve(key keyCount: Int, value valueCount: Int) -> (chunk: Int, start: Int) {
        let room = keyCount + valueCount
        if keyCount >= Int(UInt32.max) || valueCount >= Int(UInt32.max) { hasOversizedEntry = true }
        if !isKnownUniquelyReferenced(&storage) { makeStorageUnique() }
        // A new chunk also before an offset could pass 2 GiB (P1: offsets fit in 32 bits).
        if chunkBases.isEmpty || lastChunkCapacity - lastChunkUsed < room || lastChunkUsed + room > Int(UInt32.max) / 2 {
            // Chunks start small and double up to `chunkSize`, so a save of a few objects does
            // not reserve a megabyte per tree.
            addChunk(capacity: max(room, min(Self.chunkSize, max(4096, 2 * lastChunkCapacity))))
        }
        let chunk = chunkBases.count - 1
        let start = lastChunkUsed
        lastChunkUsed += room
        let j = count & (Self.segmentSize - 1)
        if j == 0 || j == lastSegmentCapacity { addSegmentRoom(filled: j) }
        (spanSegments[spanSegments.count - 1] + j).initialize(to: Span(chunk: UInt32(chunk), start: UInt32(start),
                                                                        keyCount: UInt32(clamping: keyCount),
                                                                        valueCount: UInt32(clamping: valueCount)))
        count += 1
        byteCount += room
        if valueCount > longestValue { longestValue = valueCount }
        return (chunk, start)
    }

    /// Starts a new chunk (the last one keeps the bytes it used).
    private mutating func addChunk(capacity: Int) {
        guard let storage else { return }
        if !chunkBases.isEmpty { storage.chunks[storage.chunks.count - 1].used = lastChunkUsed }
        chunkBases.append(storage.addChunk(capacity: capacity))
        lastChunkCapacity = capacity
        lastChunkUsed = 0
    }

    /// Room for the next span: a new segment once the last is full (`filled` is 0), else the
    /// last one moved into one twice its size — segments start small and double up to
    /// `segmentSize`, so a tree of a few entries keeps a few spans, not a megabyte.
    private mutating func addSegmentRoom(filled: Int) {
        guard let storage else { return }
        if filled == 0 {
            lastSegmentCapacity = min(Self.segmentSize, Self.firstSegmentSize)
            spanSegments.append(storage.addSegment(capacity: lastSegmentCapacity))
        } else {
            lastSegmentCapacity = min(Self.segmentSize, 2 * filled)
            spanSegments[spanSegments.count - 1] = storage.growLastSegment(to: lastSegmentCapacity, keeping: filled)
        }
    }

    /// Gives this value storage of its own (P3): new on the first append, else a copy of the
    /// shared one's chunks and of this value's spans.
    private mutating func makeStorageUnique() {
        let copy = PutEntriesStorage()
        if let storage {
            // The shared storage is not written: its last chunk's use is this value's own.
            let last = chunkBases.count - 1
            chunkBases = storage.chunks.prefix(chunkBases.count).enumerated().map { i, chunk in
                copy.addChunk(copying: chunk, used: i == last ? lastChunkUsed : chunk.used)
            }
            spanSegments = []
            var left = count
            for segment in storage.segments.prefix(count == 0 ? 0 : (count - 1) / Self.segmentSize + 1) {
                let n = min(left, Self.segmentSize)
                let fresh = copy.addSegment(capacity: segment.capacity)
                fresh.initialize(from: segment.base, count: n)
                spanSegments.append(fresh)
                left -= n
            }
        }
        storage = copy
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
        let key = UnsafeRawBufferPointer(start: chunkBases[Int(span.chunk)] + Int(span.start), count: Int(span.keyCount))
        let value = UnsafeRawBufferPointer(start: key.baseAddress.map { $0 + key.count }, count: Int(span.valueCount))
        // The storage the pointers reach lives at least as long as the body runs.
        return try withExtendedLifetime(storage) { () throws(E) -> R in try body(key, value) }
    }

    /// Starts loading entry `i`'s span into the cache. Entries visited in key order (not the
    /// order they were appended in) are scattered over the chunks: a visit `prefetchDistance`
    /// ahead asks for the span, and half as far ahead for the key it points to (`prefetchKey`),
    /// so neither is waited for (a batch delete's sorted visit of 2.5 million scattered keys
    /// waited on both, each time).
    @inline(__always) func prefetchSpan(_ i: Int) {
        guard i < count else { return }
        docstore_prefetch(spanSegments[i >> Self.segmentShift] + (i & (Self.segmentSize - 1)))
    }

    /// Starts loading the start of entry `i`'s key into the cache (reading its span: best
    /// after `prefetchSpan(i)`).
    @inline(__always) func prefetchKey(_ i: Int) {
        guard i < count else { return }
        let span = span(i)
        docstore_prefetch(chunkBases[Int(span.chunk)] + Int(span.start))
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

/// The memory of a `PutEntries` value's chunks and span segments, freed with it. Written only
/// through the one value that holds it (P3).
final class PutEntriesStorage {
    struct Chunk {
        let base: UnsafeMutableRawPointer
        let capacity: Int
        /// The bytes used, once a later chunk was started (the last chunk's are its value's
        /// `lastChunkUsed`).
        var used = 0
    }

    var chunks: [Chunk] = []
    /// Every segment is full but the last (P1's spans, `segmentSize` a segment).
    private(set) var segments: [(base: UnsafeMutablePointer<PutEntries.Span>, capacity: Int)] = []

    /// A new empty chunk of `capacity` bytes; its start.
    func addChunk(capacity: Int) -> UnsafeMutableRawPointer {
        let base = UnsafeMutableRawPointer.allocate(byteCount: max(capacity, 1), alignment: 16)
        chunks.append(Chunk(base: base, capacity: max(capacity, 1)))
        return base
    }

    /// A new chunk of `other`'s capacity holding its first `used` bytes; its start.
    func addChunk(copying other: Chunk, used: Int) -> UnsafeMutableRawPointer {
        let base = addChunk(capacity: other.capacity)
        base.copyMemory(from: other.base, byteCount: used)
        chunks[chunks.count - 1].used = used
        return base
    }

    /// A new segment with room for `capacity` spans (none initialized; spans are plain data).
    func addSegment(capacity: Int) -> UnsafeMutablePointer<PutEntries.Span> {
        let segment = UnsafeMutablePointer<PutEntries.Span>.allocate(capacity: capacity)
        segments.append((segment, capacity))
        return segment
    }

    /// Moves the last segment's first `count` spans into a new one of `capacity`; its start.
    func growLastSegment(to capacity: Int, keeping count: Int) -> UnsafeMutablePointer<PutEntries.Span> {
        let old = segments[segments.count - 1]
        let segment = UnsafeMutablePointer<PutEntries.Span>.allocate(capacity: capacity)
        segment.moveInitialize(from: old.base, count: count)
        old.base.deallocate()
        segments[segments.count - 1] = (segment, capacity)
        return segment
    }

    deinit {
        for chunk in chunks { chunk.base.deallocate() }
        for segment in segments { segment.base.deallocate() }
    }
}
