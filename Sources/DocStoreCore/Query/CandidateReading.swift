// CandidateReading: how a fetch reads the stored candidates of one entity — which record fields
// it decodes to test them (only those the plan reads, the rest stepped over), and the slot
// filter as a test of the records' bytes when the predicate has that shape. Made once per entity
// per fetch; a class, so handing it to each candidate costs one reference.

final class CandidateReading {
    let entity: EntityInfo
    /// The field table with only the fields the plan reads (-1 for the rest), and which slots
    /// that decodes; nil when records are decoded whole.
    let partial: (table: [Int], slots: [Bool])?
    /// The predicate as a test of the record's bytes; nil when it is tested on decoded values.
    let filter: EncodedRecordFilter?

    init(_ entity: EntityInfo, _ plan: QueryPlan, wholeRecords: Bool, filter: QuerySlotFilter?, _ evaluator: QueryEvaluator) {
        self.entity = entity
        // Nothing to test and whole records wanted: decode once, whole, not first in part.
        if let names = plan.rootProperties, !(names.isEmpty && wholeRecords) {
            let table = entity.slotForField.map { slot in slot >= 0 && names.contains(entity.properties[slot].name) ? slot : -1 }
            var slots = [Bool](repeating: false, count: entity.properties.count)
            for slot in table where slot >= 0 { slots[slot] = true }
            partial = (table, slots)
        } else {
            partial = nil
        }
        self.filter = filter.flatMap { EncodedRecordFilter($0, entity: entity, evaluator: evaluator) }
    }
}
