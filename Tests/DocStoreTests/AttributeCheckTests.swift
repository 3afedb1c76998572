// A save's first check of every attribute (StoredValue.isAcceptable, which reads the value in
// place) agrees with the full check it stands in for — null only when optional, else `fits` —
// for every kind of value against every attribute type, integers at their types' edges included.

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

    @Test func isAcceptableIsPresenceAndFits() {
        for value in Self.values {
            for type in Self.types {
                for optional in [false, true] {
                    let expected = value.isNull ? optional : value.fits(type)
                    #expect(value.isAcceptable(to: type, optional: optional) == expected, "\(value) as \(type), optional \(optional)")
                }
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
        #expect(Context.check(values, 1, against: bounded)?.contains("above the maximum") == true)
    }
}
