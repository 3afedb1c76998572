// CandidateReading: how a fetch reads the stored candidates of one entity — which record fields
// it decodes to test them (only those the plan reads, the rest stepped over), and the slot
// filter as a test of the records' bytes when the predicate has that shape (made after the first
// few candidates). Made once per entity per fetch; a class, so handing it to each candidate costs
// one reference.

internal import DocStoreEngine

final class CandidateReading {
    let entity: EntityInfo
    /// The field table with only the fields the plan reads (-1 for the rest), and which slots
    /// that decodes; nil when records are decoded whole.
    let partial: (table: [Int], slots: [Bool])?
    /// The slot filter the byte test is made from, and what it needs.
    private let slotFilter: QuerySlotFilter?
    private let evaluator: QueryEvaluator
    /// Candidates read before the byte test is made. Unchecked exclusivity: `filter` is read
    /// once per candidate, and only the fetch that made this object uses it, on its own thread
    /// (a checked access was 5% of a count).
    @exclusivity(unchecked) private var candidatesRead = 0
    @exclusivity(unchecked) private var made: EncodedRecordFilter??

    /// How many candidates are tested on decoded values before the byte test is made: making it
    /// costs about what decoding a few records does, so a lookup of one or two objects (a
    /// find-or-create) skips it. Both tests select the same objects (EncodedRecordFilterTests).
    static let candidatesBeforeByteTest = 4

    /// The predicate as a test of the record's bytes, once this fetch has read enough candidates
    /// of the entity; nil when it is tested on decoded values (also for the first few).
    var filter: EncodedRecordFilter? {
        if let made { return made }
        candidatesRead += 1
        guard candidatesRead > Self.candidatesBeforeByteTest else { return nil }
        let filter = slotFilter.flatMap { EncodedRecordFilter($0, entity: entity, evaluator: evaluator) }
        made = .some(filter)
        return filter
    }

    /// The byte test if it is made, without counting a candidate toward making it.
    var madeFilter: EncodedRecordFilter? { made ?? nil }

    /// A count's candidates of this entity from `keys[start...]` (sorted; they end where the
    /// keys of another entity begin, `end`), tested on their bytes with `filter` (this
    /// entity's `madeFilter`): how many pass and how many records were read. One cursor, the
    /// filter held once: per candidate a lookup in key order and the byte test, nothing
    /// retained — the fetch path (`Context.matching`'s `consider`) took about fifteen retains
    /// and releases a candidate, two fifths of a count's time. Its own cursor rather than the
    /// fetch's RecordLookup: through RecordLookup (placing the tree per key, or once per run with
    /// the body called through a closure) the 200 counts took 6 % longer, measured both ways.
    func countPassing(_ keys: [UInt64], from start: Int, filter: EncodedRecordFilter,
                      _ txn: Transaction) throws -> (passed: Int, read: Int, end: Int) {
        var end = start
        while end < keys.count, PrimaryKey.entity(of: keys[end]) == entity.id { end += 1 }
        guard end > start, try txn.treeExists(entity.recordsTree) else { return (0, 0, end) }
        var cursor = try txn.cursor(in: entity.recordsTree)
        var keyBytes = [UInt8](repeating: 0, count: 8)
        var passed = 0, read = 0
        for key in keys[start..<end] {
            keyBytes.withUnsafeMutableBytes { $0.storeBytes(of: key.bigEndian, as: UInt64.self) }
            let found = try cursor.visitValue(forKey: keyBytes) { raw in
                if try filter.matches(raw, key: key) { passed += 1 }
            }
            if found { read += 1 }
        }
        return (passed, read, end)
    }

    /// `testsPredicate`: false when the candidates need no test (an exact index's), so a fetch
    /// that wants whole records decodes each once, whole.
    init(_ entity: EntityInfo, _ plan: QueryPlan, wholeRecords: Bool, filter: QuerySlotFilter?, testsPredicate: Bool = true,
         _ evaluator: QueryEvaluator) {
        self.entity = entity
        // Nothing to test and whole records wanted: decode once, whole, not first in part.
        if let names = plan.rootProperties, !((names.isEmpty || !testsPredicate) && wholeRecords) {
            let table = entity.slotForField.map { slot in slot >= 0 && names.contains(entity.properties[slot].name) ? slot : -1 }
            var slots = [Bool](repeating: false, count: entity.properties.count)
            for slot in table where slot >= 0 { slots[slot] = true }
            partial = (table, slots)
        } else {
            partial = nil
        }
        self.slotFilter = filter
        self.evaluator = evaluator
    }
}
