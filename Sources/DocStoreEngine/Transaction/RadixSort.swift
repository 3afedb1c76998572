// RadixSort: sorting by a 64-bit key in linear time — a save's changed objects by primary key
// (DocStore's ChangedObjects.sortedByKey) and a bulk write's entries by their first 16 key bytes
// (PutBuffer.keyOrder), hundreds of thousands at a time, where a comparison sort made a
// fortieth of an insert of 100 000 notes each.
//
// A least-significant-digit radix sort over the key's sixteen bytes: one pass counts every byte's
// values, then one pass moves the elements per byte that differs between keys. A byte that is
// the same in every key (most of them: a primary key is an entity ID above a sequence number)
// moves nothing, so sorting the keys of one save takes a few passes. Stable: entries with one
// key keep their order. Keys of two words (a bulk write's 16-byte prefixes; a primary key is the
// low word alone), moved as plain words: not a generic element, which cost a value witness per
// move. Below `threshold` entries the counting passes cost more than they save: an insertion
// sort (stable too) takes those.

package enum RadixSort {
    /// A 128-bit key (`high` first) and what it sorts: a position, a reference's bits.
    package typealias Entry = (high: UInt64, low: UInt64, payload: UInt64)

    /// Below this many entries, `sort` sorts by insertion.
    static let threshold = 256

    /// Sorts `entries` by (high, low), ascending; stable.
    package static func sort(_ entries: inout [Entry]) {
        let count = entries.count
        guard count > 1 else { return }
        guard count >= threshold else {
            for i in 1..<count {
                let entry = entries[i]
                var j = i
                while j > 0 && (entries[j - 1].high, entries[j - 1].low) > (entry.high, entry.low) {
                    entries[j] = entries[j - 1]
                    j -= 1
                }
                entries[j] = entry
            }
            return
        }
        // Plain words: the scratch needs no initializing, the sort writes each one it reads.
        var scratch = [Entry](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
        var inScratch = false
        entries.withUnsafeMutableBufferPointer { a in
            scratch.withUnsafeMutableBufferPointer { b in
                var counts = [Int](repeating: 0, count: 256 * 16)
                counts.withUnsafeMutableBufferPointer { c in
                    // Every byte's histogram in one pass: bytes 0–7 of `low`, then 8–15 (`high`).
                    for entry in a {
                        var low = entry.low, high = entry.high
                        for byte in 0..<8 {
                            c[byte << 8 | Int(low & 0xFF)] += 1
                            c[(byte + 8) << 8 | Int(high & 0xFF)] += 1
                            low >>= 8
                            high >>= 8
                        }
                    }
                    for byte in 0..<16 {
                        let histogram = UnsafeMutableBufferPointer(rebasing: c[(byte << 8)..<(byte << 8 + 256)])
                        if histogram.contains(count) { continue }   // one value in every key: nothing moves
                        var offset = 0
                        for i in 0..<256 {
                            let n = histogram[i]
                            histogram[i] = offset
                            offset += n
                        }
                        let (from, to) = inScratch ? (b, a) : (a, b)
                        let shift = UInt64((byte & 7) * 8)
                        for entry in from {
                            let digit = Int(((byte < 8 ? entry.low : entry.high) >> shift) & 0xFF)
                            to[histogram[digit]] = entry
                            histogram[digit] += 1
                        }
                        inScratch.toggle()
                    }
                }
            }
        }
        if inScratch { swap(&entries, &scratch) }
    }
}
