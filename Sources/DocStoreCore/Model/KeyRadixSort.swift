// KeyRadixSort: sorting (primary key, payload) pairs by key in linear time — a save's changed
// objects in key order (ChangedObjects.sortedByKey), 100 000 of them for an insert of 100 000
// notes, where a comparison sort made a fortieth of the insert.
//
// A least-significant-digit radix sort over the key's eight bytes. A byte that is the same in
// every key (most of them: a primary key is an entity ID above a sequence number) costs one
// counting pass and no move, so sorting the keys of one save costs a few passes. Stable: pairs
// with one key keep their order. Short inputs use the standard library's sort.

enum KeyRadixSort {
    /// Below this many pairs a comparison sort is cheaper than the counting passes.
    static let threshold = 256

    /// Sorts `pairs` by `key`, ascending (stable).
    static func sort<Payload>(_ pairs: inout [(key: UInt64, payload: Payload)]) {
        guard pairs.count >= threshold else {
            pairs.sort { $0.key < $1.key }
            return
        }
        var scratch = pairs
        var inScratch = false
        pairs.withUnsafeMutableBufferPointer { a in
            scratch.withUnsafeMutableBufferPointer { b in
                var counts = [Int](repeating: 0, count: 256 * 8)
                counts.withUnsafeMutableBufferPointer { c in
                    // Every byte's histogram in one pass over the keys.
                    for pair in a {
                        var k = pair.key
                        for byte in 0..<8 {
                            c[byte << 8 | Int(k & 0xFF)] += 1
                            k >>= 8
                        }
                    }
                    for byte in 0..<8 {
                        let histogram = UnsafeMutableBufferPointer(rebasing: c[(byte << 8)..<(byte << 8 + 256)])
                        if histogram.contains(a.count) { continue }   // one value in every key: nothing moves
                        var offset = 0
                        for i in 0..<256 {
                            let n = histogram[i]
                            histogram[i] = offset
                            offset += n
                        }
                        let (from, to) = inScratch ? (b, a) : (a, b)
                        let shift = UInt64(byte * 8)
                        for pair in from {
                            let digit = Int((pair.key >> shift) & 0xFF)
                            to[histogram[digit]] = pair
                            histogram[digit] += 1
                        }
                        inScratch.toggle()
                    }
                }
            }
        }
        if inScratch { swap(&pairs, &scratch) }
    }
}
