// RowEncoder: an Encodable value as a batch row — its top-level properties by name, each kept
// as the Swift value it is (a String, a Date, an ObjectID, an array of them, a nested Codable
// struct for a document attribute), so BatchRowReader converts them exactly as it converts a
// dictionary's values, with no JSON in between.
//
// Only a keyed top level is a row: a value that encodes as a single value or an array is
// refused with a typed error. `encodeIfPresent` of nil leaves the property out (its default
// applies); an explicit `encodeNil` gives nil.

import Foundation

enum RowEncoder {
    /// The properties `value` encodes, by name.
    static func row(_ value: any Encodable) throws(DocStoreError) -> [String: Any] {
        let encoder = TopLevelEncoder()
        do { try value.encode(to: encoder) } catch {
            throw DocStoreError(.typeMismatch, "a batch insert value could not be encoded as a row: \(error)")
        }
        if let refusal = encoder.box.refusal { throw DocStoreError(.typeMismatch, refusal) }
        return encoder.box.fields
    }

    /// What the containers write into.
    final class Box {
        var fields: [String: Any] = [:]
        var refusal: String?
    }

    private struct TopLevelEncoder: Encoder {
        let box = Box()
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(Fields<Key>(box: box))
        }

        func unkeyedContainer() -> any UnkeyedEncodingContainer {
            box.refusal = "a batch insert value must encode as an object with named properties, not as an array"
            return Refused(box: box)
        }

        func singleValueContainer() -> any SingleValueEncodingContainer {
            box.refusal = "a batch insert value must encode as an object with named properties, not as a single value"
            return Refused(box: box)
        }
    }

    private struct Fields<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let box: Box
        var codingPath: [any CodingKey] { [] }

        mutating func encodeNil(forKey key: Key) throws { box.fields[key.stringValue] = NSNull() }
        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { box.fields[key.stringValue] = value }

        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
            box.refusal = "a batch insert value encodes \(key.stringValue) by hand as a nested container; give it a Codable value instead"
            return KeyedEncodingContainer(Fields<NestedKey>(box: Box()))
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            box.refusal = "a batch insert value encodes \(key.stringValue) by hand as a nested container; give it a Codable value instead"
            return Refused(box: Box())
        }

        mutating func superEncoder() -> any Encoder { TopLevelEncoder() }
        mutating func superEncoder(forKey key: Key) -> any Encoder { TopLevelEncoder() }
    }

    /// Accepts what a refused container is given, so `encode(to:)` finishes and the refusal
    /// is reported as a typed error rather than a trap.
    private struct Refused: UnkeyedEncodingContainer, SingleValueEncodingContainer {
        let box: Box
        var codingPath: [any CodingKey] { [] }
        var count: Int { 0 }
        mutating func encodeNil() throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {}
        mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(Fields<NestedKey>(box: Box()))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { Refused(box: Box()) }
        mutating func superEncoder() -> any Encoder { TopLevelEncoder() }
    }
}
