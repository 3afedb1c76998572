// EncodedRecordFilter: a slot filter's comparisons (QuerySlotFilter) tested on a record's bytes
// as stored (Format/record.md), for one entity. Counts and scans decide each candidate this way
// without making its values: a record's fields are walked once, the tested ones read in place,
// the rest stepped over, and the walk stops at the first failing comparison or once every
// tested field has passed.
//
// Invariants — the answers are the evaluator's exactly:
//   - A field holding an ASCII string (bytes 1…127), compared with an ASCII constant under
//     options no wider than [cdn], is compared as bytes (`[c]` folding A–Z by one bit, as
//     `QueryValueSemantics.folded` does for ASCII; `[d]` and `[n]` change nothing in ASCII).
//     BEGINSWITH and ENDSWITH take this path only when the constant holds no CR or LF, so a
//     byte match can never end or start inside a "\r\n" character.
//   - Every other value is decoded (without the record's other fields) and handed to the
//     evaluator's own comparison.
//   - A field the record lacks has the entity's default; whether each tested field's default
//     passes is decided once, when the filter is made.
//   - Bytes are checked as far as they are read: a damaged field before or at the ones tested
//     throws `.corrupt`; one after them is not read (a count that decoded every field used to
//     throw there) — `docstore verify` and the store's full check read every record whole.

final class EncodedRecordFilter {
    private struct Test {
        let op: QueryOperator
        let rhs: QueryOperand
        let options: QueryStringOptions
        /// The constant as bytes, folded as the options fold ASCII; nil when this comparison of
        /// an ASCII string is not a byte comparison.
        let ascii: [UInt8]?
        /// The constant of an order or equality comparison with a number or a date; nil for
        /// other comparisons.
        let number: Number?
    }

    /// A number or a date, as `QueryValueSemantics` compares them: integers exactly with each
    /// other, every other number as a Double (NaN orders nowhere), dates by their time interval.
    private enum Number {
        case int(Int64), real(Double), date(Double)

        init?(_ value: StoredValue) {
            switch value {
            case .bool(let b): self = .real(b ? 1 : 0)
            case .int(let i): self = .int(i)
            case .double(let d): self = .real(d)
            case .float(let f): self = .real(Double(f))
            case .date(let d): self = .date(d.timeIntervalSinceReferenceDate)
            default: return nil
            }
        }

        /// The number or date a value with type tag `tag` holds, read from its payload; nil
        /// (and nothing read) for other tags.
        static func read(_ tag: UInt8, _ reader: inout RecordReader) throws(DocStoreError) -> Number? {
            switch RecordTag(rawValue: tag) {
            case .boolFalse: return .real(0)
            case .boolTrue: return .real(1)
            case .int: return .int(try reader.zigzagInt())
            case .double: return .real(Double(bitPattern: try reader.fixed(UInt64.self)))
            case .float: return .real(Double(Float(bitPattern: try reader.fixed(UInt32.self))))
            case .date: return .date(Double(bitPattern: try reader.fixed(UInt64.self)))
            default: return nil
            }
        }

        var real: Double? {
            switch self {
            case .int(let i): Double(i)
            case .real(let d): d
            case .date: nil
            }
        }

        /// The order of a and b (-1, 0, 1), or nil when they do not order (NaN, or a date and a
        /// number).
        static func order(_ a: Number, _ b: Number) -> Int? {
            switch (a, b) {
            case (.int(let x), .int(let y)): return x < y ? -1 : x == y ? 0 : 1
            case (.date(let x), .date(let y)): return x < y ? -1 : x == y ? 0 : 1
            default:
                guard let x = a.real, let y = b.real, !x.isNaN, !y.isNaN else { return nil }
                return x < y ? -1 : x == y ? 0 : 1
            }
        }
    }

    /// Field ID → group (-1: the predicate does not read the field); a group is the comparisons
    /// of one field.
    private let groupForField: [Int]
    /// Every comparison, a group's together: group g is `tests[groupStart[g]..<groupStart[g + 1]]`.
    private let tests: [Test]
    private let groupStart: [Int]
    /// The same comparisons' operators and number constants, in trivial values: the hot loop
    /// reads these without retaining anything.
    private let quick: [(op: QueryOperator, number: Number?, fold: Bool)]
    /// Whether each group can compare an ASCII string as bytes (every test has `ascii`).
    private let groupsASCII: [Bool]
    /// Whether a record lacking the group's field (so holding the default) passes its tests.
    private let defaultPasses: [Bool]
    private let evaluator: QueryEvaluator

    /// The filter of `filter`'s comparisons for records of `entity`; nil when one of them cannot
    /// be decided this way (its default's comparison throws, or the predicate reads more than
    /// 64 fields).
    init?(_ filter: QuerySlotFilter, entity: EntityInfo, evaluator: QueryEvaluator) {
        var groupForField: [Int] = []
        var groups: [[Test]] = []
        var slots: [Int] = []
        for t in filter.comparisons {
            guard t.slot < entity.properties.count, entity.properties[t.slot].isStoredInRecord else { return nil }
            let field = Int(entity.properties[t.slot].fieldID)
            if groupForField.count <= field { groupForField += [Int](repeating: -1, count: field + 1 - groupForField.count) }
            if groupForField[field] < 0 {
                groupForField[field] = groups.count
                groups.append([])
                slots.append(t.slot)
            }
            var number: Number?
            if case .scalar(let v) = t.rhs, [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(t.op) {
                number = Number(v)
            }
            groups[groupForField[field]].append(Test(op: t.op, rhs: t.rhs, options: t.options,
                                                     ascii: Self.asciiConstant(t.op, t.rhs, t.options), number: number))
        }
        guard groups.count <= 64 else { return nil }
        var defaultPasses: [Bool] = []
        for (g, tests) in groups.enumerated() {
            let value = entity.defaults[slots[g]]
            do throws(DocStoreError) {
                var passes = true
                for t in tests where !(try evaluator.compareValue(value, t.op, t.rhs, t.options)) { passes = false }
                defaultPasses.append(passes)
            } catch {
                return nil
            }
        }
        groupsASCII = groups.map { tests in tests.allSatisfy { $0.ascii != nil } }
        self.groupForField = groupForField
        tests = groups.flatMap { $0 }
        groupStart = groups.reduce(into: [0]) { starts, g in starts.append(starts[starts.count - 1] + g.count) }
        quick = tests.map { ($0.op, $0.number, $0.options.contains(.caseInsensitive)) }
        self.defaultPasses = defaultPasses
        self.evaluator = evaluator
    }

    /// Whether the record `bytes` (of the filter's entity, primary key `key`) matches.
    func matches(_ bytes: UnsafeRawBufferPointer, key: UInt64) throws(DocStoreError) -> Bool {
        var reader = RecordReader(bytes: bytes, key: key)
        _ = try RecordCoding.readHeader(&reader)
        let count = groupStart.count - 1
        let all: UInt64 = count == 64 ? .max : (1 << UInt64(count)) - 1
        var seen: UInt64 = 0
        var previous: UInt64? = nil
        while !reader.atEnd, seen != all {
            let id = Int(try reader.fieldID(after: &previous))
            let g = id < groupForField.count ? groupForField[id] : -1
            guard g >= 0 else {
                try reader.skipValue()
                continue
            }
            seen |= 1 << UInt64(g)
            guard try passes(g, &reader) else { return false }
        }
        if seen != all {
            for g in 0..<count where seen & (1 << UInt64(g)) == 0 && !defaultPasses[g] { return false }
        }
        return true
    }

    /// Whether the value at the reader passes group `g`'s comparisons; the reader moves past it.
    private func passes(_ g: Int, _ reader: inout RecordReader) throws(DocStoreError) -> Bool {
        let start = reader.offset
        let range = groupStart[g]..<groupStart[g + 1]
        let tag = try reader.byte()
        if tag == RecordTag.string.rawValue, groupsASCII[g] {
            let text = try reader.lengthPrefixed()
            if ASCIIBytes.isPlain(UnsafeRawBufferPointer(rebasing: text)) {
                for i in range {
                    guard let constant = tests[i].ascii, Self.compareASCII(text, quick[i].op, constant, fold: quick[i].fold) else { return false }
                }
                return true
            }
        } else if let number = try Number.read(tag, &reader) {
            var decided = true
            for i in range {
                guard let constant = quick[i].number, let passed = Self.compare(number, quick[i].op, constant) else {
                    decided = false
                    break
                }
                if !passed { return false }
            }
            if decided { return true }
        }
        reader.offset = start
        let value = try reader.value()
        for i in range where !(try evaluator.compareValue(value, tests[i].op, tests[i].rhs, tests[i].options)) { return false }
        return true
    }

    /// `a op b` for a number or date against a constant, as the evaluator decides it; nil when
    /// one is a date and the other a number (the evaluator decides those).
    private static func compare(_ a: Number, _ op: QueryOperator, _ b: Number) -> Bool? {
        switch (a, b) {
        case (.date, .date), (.int, .int), (.int, .real), (.real, .int), (.real, .real): break
        default: return nil
        }
        let order = Number.order(a, b)
        switch op {
        case .equal: return order == 0
        case .notEqual: return order != 0
        case .less: return order.map { $0 < 0 } ?? false
        case .lessOrEqual: return order.map { $0 <= 0 } ?? false
        case .greater: return order.map { $0 > 0 } ?? false
        case .greaterOrEqual: return order.map { $0 >= 0 } ?? false
        default: return nil
        }
    }

    /// The constant of a comparison that an ASCII string field can decide as bytes, folded as
    /// `options` fold ASCII; nil otherwise.
    private static func asciiConstant(_ op: QueryOperator, _ rhs: QueryOperand, _ options: QueryStringOptions) -> [UInt8]? {
        guard case .scalar(.string(let s)) = rhs,
              options.isSubset(of: [.caseInsensitive, .diacriticInsensitive, .normalized]) else { return nil }
        let bytes = Array(s.utf8)
        guard bytes.allSatisfy({ $0 > 0 && $0 < 0x80 }) else { return nil }
        switch op {
        case .equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual, .contains: break
        case .beginsWith, .endsWith: guard !bytes.contains(0x0D), !bytes.contains(0x0A) else { return nil }
        default: return nil
        }
        return options.contains(.caseInsensitive) ? bytes.map(ASCIIBytes.fold) : bytes
    }

    /// `text op constant` on ASCII bytes (`text` folded on the fly when `fold`).
    private static func compareASCII(_ text: Slice<UnsafeRawBufferPointer>, _ op: QueryOperator, _ constant: [UInt8], fold: Bool) -> Bool {
        let t = UnsafeRawBufferPointer(rebasing: text)
        @inline(__always) func at(_ i: Int) -> UInt8 { fold ? ASCIIBytes.fold(t[i]) : t[i] }
        func order() -> Int {
            let n = min(t.count, constant.count)
            for i in 0..<n where at(i) != constant[i] { return at(i) < constant[i] ? -1 : 1 }
            return t.count == constant.count ? 0 : t.count < constant.count ? -1 : 1
        }
        func matches(from start: Int) -> Bool {
            for j in 0..<constant.count where at(start + j) != constant[j] { return false }
            return true
        }
        switch op {
        case .equal: return t.count == constant.count && matches(from: 0)
        case .notEqual: return !(t.count == constant.count && matches(from: 0))
        case .less: return order() < 0
        case .lessOrEqual: return order() <= 0
        case .greater: return order() > 0
        case .greaterOrEqual: return order() >= 0
        case .beginsWith: return constant.count <= t.count && matches(from: 0)
        case .endsWith: return constant.count <= t.count && matches(from: t.count - constant.count)
        case .contains: return ASCIIBytes.contains(t, constant, fold: fold)
        default: return false
        }
    }
}
