// A save's first check of every attribute (StoredValue.isAcceptable, which reads the value in
// place, and `fits`, which is it with `optional` true) against the rule written out here as a
// table — null only when optional, integers within their type's range, every other value only
// of its own type — for every kind of value against every attribute type, integers at their
// types' edges included; and the slot check gives the full check's messages.

import Foundation
import Testing

@testable import DocStoreCore

@Suite struct AttributeCheckTests {
    static let values: [StoredValue] = [
        .null, .bool(true), .int(0), .int(127), .int(128), .int(-129), .int(Int64(Int32.max) + 1), .int(.min),
        .double(1.5), .float(2), .decimal(Decimal(3)), .string("x"), .date(Date(timeIntervalSinceReferenceDate: 0)),
        .uuid(UUID()), .url(URL(fileURLWithPath: "/tmp")), .data(Data([1])), .document(Data("{}".utf8)), .reference(7),
    ]
    static let types: [AttributeType] = [.bool, .int8, .int16, .int32, .int64, .double, .float, .decimal, .string, .date,
                                         .uuid, .url, .binaryData, .codable(typeName: "Location")]

    /// The rule, by the kind of value: which types take it.
    static func takes(_ value: StoredValue, _ type: AttributeType) -> Bool {
        switch value {
        case .null, .reference: return false
        case .bool: return type == .bool
        case .int(let v):
            switch type {
            case .int8: return v >= -128 && v <= 127
            case .int16: return v >= -32768 && v <= 32767
            case .int32: return v >= -2_147_483_648 && v <= 2_147_483_647
            case .int64: return true
            default: return false
            }
        case .double: return type == .double
        case .float: return type == .float
        case .decimal: return type == .decimal
        case .string: return type == .string
        case .date: return type == .date
        case .uuid: return type == .uuid
        case .url: return type == .url
        case .data: return type == .binaryData
        case .document: if case .codable = type { return true } else { return false }
        }
    }

    @Test func isAcceptableAndFitsFollowTheRule() {
        for value in Self.values {
            for type in Self.types {
                for optional in [false, true] {
                    let expected = value.isNull ? optional : Self.takes(value, type)
                    #expect(value.isAcceptable(to: type, optional: optional) == expected, "\(value) as \(type), optional \(optional)")
                }
                #expect(value.fits(type) == (value.isNull || Self.takes(value, type)), "\(value) fits \(type)")
            }
        }
    }

    @Test func theSlotCheckGivesTheFullChecksMessages() {
        let plain = AttributeRules(AttributeDescription(name: "title", type: .string))
        let bounded = AttributeRules(AttributeDescription(name: "rating", type: .int16, minimum: 0, maximum: 5))
        #expect(plain.checksOnlyPresenceAndType && !bounded.checksOnlyPresenceAndType)
        let values: [StoredValue] = [.null, .int(9), .string("a"), .int(3)]
        for (rules, slot) in [(plain, 0), (plain, 1), (plain, 2), (bounded, 0), (bounded, 1), (bounded, 2), (bounded, 3)] {
            #expect(Context.check(values, slot, against: rules) == Context.check(values[slot], against: rules), "slot \(slot)")
        }
        #expect(Context.check(values, 0, against: plain) == "is required")
        #expect(Context.check(values, 1, against: plain) == "holds 9, which is not a String")
        #expect(Context.check(values, 1, against: bounded)?.contains("above the maximum") == true)
        #expect(Context.check(values, 3, against: bounded) == nil)
    }

    @Test func countsAreCheckedAgainstTheirBounds() {
        #expect(Context.check(count: 0, against: (1, nil)) == "has 0 objects; at least 1 required")
        #expect(Context.check(count: 1, against: (2, 3)) == "has 1 object; at least 2 required")
        #expect(Context.check(count: 4, against: (0, 3)) == "has 4 objects; at most 3 allowed")
        #expect(Context.check(count: 3, against: (0, 3)) == nil)
    }
}
