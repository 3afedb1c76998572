// CandidateReading: how a fetch reads the stored candidates of one entity — which record fields
// it decodes to test them (only those the plan reads, the rest stepped over), and the slot
// filter as a test of the records' bytes when the predicate has that shape (made after the first
// few candidates). Made once per entity per fetch; a class, so handing it to each candidate costs
// one reference.

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
