// KeySet: a set of primary keys, for the sets a context changes once per link and per object
// (a to-many relationship's members, additions and removals). `Set<UInt64>` hashes every key
// with SipHash, twice per new link (is it there? insert it): about a tenth of inserting 100 000
// notes with their folder and tags. Keys are plain numbers chosen by the store, not by an
// attacker, so a multiplicative hash is enough.
//
// An open-addressing table with linear probing, as ObjectRegistry:
//   K1  `table` is empty (the empty set) or `[count, hasZero, slots…]` where the number of slots
//       is a power of two at least twice the keys in them; an empty slot holds 0, so key 0 is
//       kept aside (`hasZero`, 1 or 0).
//   K2  A key's home slot is the top bits of key × 2^64/φ (Fibonacci hashing), which spreads
//       keys in any arithmetic progression — what a store's primary keys are — evenly.
//   K3  Every key sits between its home slot and the first empty slot after it (wrapping), so a
//       lookup stops at the first empty slot; a removal shifts later entries of the run back
//       into the gap when their home allows it (no tombstones), keeping K3.
// One array holds everything (`table`: the count, whether 0 is in the set, then the slots), so a
// KeySet is one word like a Set, and a to-many state holding three costs no more memory than
// before; an empty set has no storage. A value type: copies share the array until one of them
// changes (its copy-on-write).

struct KeySet: Sequence, ExpressibleByArrayLiteral, Equatable, CustomStringConvertible {
    private var table: ContiguousArray<UInt64> = []
    private static let first = 2   // the first slot's index in `table`

    init() {}

    init(arrayLiteral keys: UInt64...) {
        self.init(keys)
    }

    init<S: Sequence>(_ keys: S) where S.Element == UInt64 {
        reserveCapacity(keys.underestimatedCount)
        for key in keys { insert(key) }
    }

    /// How many keys are in the set.
    var count: Int { table.isEmpty ? 0 : Int(truncatingIfNeeded: table[0]) }
    var isEmpty: Bool { count == 0 }
    private var hasZero: Bool { !table.isEmpty && table[1] != 0 }
    private var slotCount: Int { table.isEmpty ? 0 : table.count - Self.first }

    var description: String { "KeySet(\(sorted()))" }

    /// The home slot's index in `table` (K2) for a table of `slots` slots.
    private static func home(_ key: UInt64, slots: Int) -> Int {
        first + Int(truncatingIfNeeded: (key &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - slots.trailingZeroBitCount))
    }

    /// The index holding `key`, or the empty slot where it would go (K3). Needs slots.
    private func index(of key: UInt64) -> Int {
        let slots = slotCount
        var i = Self.home(key, slots: slots)
        while true {
            let k = table[i]
            if k == key || k == 0 { return i }
            i = i + 1 == table.count ? Self.first : i + 1
        }
    }

    func contains(_ key: UInt64) -> Bool {
        if key == 0 { return hasZero }
        guard slotCount > 0 else { return false }
        return table[index(of: key)] == key
    }

    /// Inserts `key`; `inserted` is false if it was there already (as `Set.insert`).
    @discardableResult
    mutating func insert(_ key: UInt64) -> (inserted: Bool, memberAfterInsert: UInt64) {
        if key == 0 {
            if hasZero { return (false, 0) }
            if table.isEmpty { grow(toHold: 1) }
            table[1] = 1
            table[0] += 1
            return (true, 0)
        }
        let inSlots = count - (hasZero ? 1 : 0)
        if 2 * (inSlots + 1) > slotCount { grow(toHold: inSlots + 1) }
        let i = index(of: key)
        if table[i] == key { return (false, key) }
        table[i] = key
        table[0] += 1
        return (true, key)
    }

    /// Removes `key`; returns it if it was there (as `Set.remove`).
    @discardableResult
    mutating func remove(_ key: UInt64) -> UInt64? {
        if key == 0 {
            guard hasZero else { return nil }
            table[1] = 0
            table[0] -= 1
            return 0
        }
        guard slotCount > 0 else { return nil }
        var gap = index(of: key)
        guard table[gap] == key else { return nil }
        let slots = slotCount
        table[gap] = 0
        table[0] -= 1
        // K3: move back every later entry of the run whose home does not lie in (gap, i].
        var i = gap + 1 == table.count ? Self.first : gap + 1
        while table[i] != 0 {
            let h = Self.home(table[i], slots: slots)
            let stays = gap <= i ? (h > gap && h <= i) : (h > gap || h <= i)
            if !stays {
                table[gap] = table[i]
                table[i] = 0
                gap = i
            }
            i = i + 1 == table.count ? Self.first : i + 1
        }
        return key
    }

    /// Empties the set. A table of up to 1 024 slots is kept for the keys that come next (a
    /// set emptied after every few insertions allocates nothing); a larger one is let go, so
    /// that emptying a set that once held many keys does not clear its whole table each time.
    mutating func removeAll() {
        guard !table.isEmpty else { return }
        if slotCount > 1024 {
            table = []
        } else {
            table.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        }
    }

    /// Room for `n` keys without growing.
    mutating func reserveCapacity(_ n: Int) {
        if n > 0 && 2 * n > slotCount { grow(toHold: n) }
    }

    private mutating func grow(toHold n: Int) {
        var slots = Swift.max(8, slotCount)
        while slots < 2 * n { slots *= 2 }
        let old = table
        table = ContiguousArray(repeating: 0, count: Self.first + slots)
        guard !old.isEmpty else { return }
        table[0] = old[0]
        table[1] = old[1]
        for key in old[Self.first...] where key != 0 { table[index(of: key)] = key }
    }

    /// Keeps only the keys `other` holds.
    mutating func formIntersection(_ other: KeySet) {
        guard !isEmpty else { return }
        self = KeySet(filter { other.contains($0) })
    }

    /// Removes every key of `other`.
    mutating func subtract<S: Sequence>(_ other: S) where S.Element == UInt64 {
        for key in other where !isEmpty { remove(key) }
    }

    static func == (a: KeySet, b: KeySet) -> Bool {
        a.count == b.count && a.allSatisfy(b.contains)
    }

    func makeIterator() -> Iterator { Iterator(table: table) }

    /// The keys in no particular order (0 first, if present).
    struct Iterator: IteratorProtocol {
        private let table: ContiguousArray<UInt64>
        private var position = 1

        fileprivate init(table: ContiguousArray<UInt64>) { self.table = table }

        mutating func next() -> UInt64? {
            if position == 1 {
                position = KeySet.first
                if table.count > 1 && table[1] != 0 { return 0 }
            }
            while position < table.count {
                let key = table[position]
                position += 1
                if key != 0 { return key }
            }
            return nil
        }
    }

    var underestimatedCount: Int { count }
}
