// ObjectRegistry: a context's live objects by primary key, held unretained (C1 of Context.swift).
// Every object a fetch makes is looked up, added, and removed again by its deinit, so this is on
// the path of every object the app sees; a Dictionary spent most of that time hashing (SipHash)
// and probing twice (a miss, then the insert).
//
// An open-addressing table with linear probing:
//   R1  `slots.count` is a power of two and at least twice `count` (the load stays ≤ 1/2, so a
//       probe sequence is short); an empty slot has no object.
//   R2  A key's home slot keeps its low 4 bits, in a region of 16 slots chosen by the top bits
//       of (key / 16) × 2^64/φ (Fibonacci hashing). So 16 consecutive keys sit side by side (a
//       fetch in key order — a scan — touches a few cache lines, not one per object: a lookup
//       in a table of 100 000 objects missed the cache every time), and regions of keys in any
//       arithmetic progression — what primary keys are — spread evenly.
//   R3  Every key sits between its home slot and the first empty slot after it (wrapping), so a
//       lookup stops at the first empty slot. A removal shifts later entries of the run back
//       into the gap when their home allows it (no tombstones), keeping R3.
// A value type, so iterating a copy while objects come and go (a deinit removes its key) is safe.

struct ObjectRegistry: Sequence {
    fileprivate struct Slot {
        var key: UInt64 = 0
        var object: Unmanaged<ManagedObject>? = nil
    }

    private var slots: ContiguousArray<Slot>
    private var shift: UInt64
    /// How many keys are registered.
    private(set) var count = 0

    init() {
        slots = ContiguousArray(repeating: Slot(), count: 32)
        shift = 64 - 1
    }

    var isEmpty: Bool { count == 0 }

    private func home(_ key: UInt64) -> Int {
        let region = ((key >> 4) &* 0x9E37_79B9_7F4A_7C15) >> shift
        return Int(truncatingIfNeeded: region << 4 | key & 15)
    }

    /// The slot holding `key`, or the empty slot where it would go (R3).
    private func find(_ key: UInt64) -> (index: Int, found: Bool) {
        let mask = slots.count - 1
        var i = home(key)
        return slots.withUnsafeBufferPointer { buffer in
            while true {
                let slot = buffer[i]
                if slot.object == nil { return (i, false) }
                if slot.key == key { return (i, true) }
                i = (i + 1) & mask
            }
        }
    }

    /// The object registered for `key`; setting nil removes it.
    subscript(key: UInt64) -> Unmanaged<ManagedObject>? {
        get {
            let (i, found) = find(key)
            return found ? slots[i].object : nil
        }
        set {
            guard let newValue else {
                removeValue(forKey: key)
                return
            }
            let (i, found) = find(key)
            if found {
                slots[i].object = newValue
            } else {
                add(key, newValue, at: i)
            }
        }
    }

    /// The object registered for `key`, or the one `make` makes, registered.
    mutating func object(forKey key: UInt64, orMake make: () -> ManagedObject) -> ManagedObject {
        let (i, found) = find(key)
        if found, let object = slots[i].object { return object.takeUnretainedValue() }
        let made = make()
        // `make` runs an initializer, which could in principle change the table: probe again
        // (the slot's cache line is at hand, so this costs little).
        self[key] = Unmanaged.passUnretained(made)
        return made
    }

    private mutating func add(_ key: UInt64, _ object: Unmanaged<ManagedObject>, at index: Int) {
        if (count + 1) * 2 > slots.count {
            grow(toHold: count + 1)
            self[key] = object
            return
        }
        slots[index] = Slot(key: key, object: object)
        count += 1
    }

    /// Removes `key`'s object (R3: the run after it moves back into the gap where it may).
    @discardableResult
    mutating func removeValue(forKey key: UInt64) -> Unmanaged<ManagedObject>? {
        let (found, hit) = find(key)
        guard hit else { return nil }
        let removed = slots[found].object
        let mask = slots.count - 1
        var gap = found
        var i = (gap + 1) & mask
        while let object = slots[i].object {
            let h = home(slots[i].key)
            // Move the entry back if its home is not in (gap, i] (cyclically).
            let stays = gap <= i ? (h > gap && h <= i) : (h > gap || h <= i)
            if !stays {
                slots[gap] = Slot(key: slots[i].key, object: object)
                gap = i
            }
            i = (i + 1) & mask
        }
        slots[gap] = Slot()
        count -= 1
        return removed
    }

    /// Makes room for `capacity` keys without growing again.
    mutating func reserveCapacity(_ capacity: Int) {
        if capacity * 2 > slots.count { grow(toHold: capacity) }
    }

    private mutating func grow(toHold capacity: Int) {
        var size = slots.count
        while size < capacity * 2 { size *= 2 }
        let old = slots
        slots = ContiguousArray(repeating: Slot(), count: size)
        shift = UInt64(64 - (size.trailingZeroBitCount - 4))
        count = 0
        for slot in old {
            guard let object = slot.object else { continue }
            let (i, _) = find(slot.key)
            slots[i] = Slot(key: slot.key, object: object)
            count += 1
        }
    }

    struct Iterator: IteratorProtocol {
        fileprivate let slots: ContiguousArray<Slot>
        fileprivate var index = 0
        mutating func next() -> (key: UInt64, value: Unmanaged<ManagedObject>)? {
            while index < slots.count {
                defer { index += 1 }
                if let object = slots[index].object { return (slots[index].key, object) }
            }
            return nil
        }
    }

    func makeIterator() -> Iterator { Iterator(slots: slots) }
    var underestimatedCount: Int { count }
}
