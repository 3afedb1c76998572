// PersistentValue: the Swift types an attribute can have, and how each converts to and from a
// StoredValue. Built-in conformances cover every AttributeType; Optional of a PersistentValue is
// one too (nil is `.null`). Codable types that are not built in are stored as documents through
// `CodableValue` (see ManagedObject's typed accessors).
//
// `placeholder` is the value a non-optional attribute reads as when no value can be had (an
// object whose row is gone before it was ever loaded): zero, empty, or the distant past.

import Foundation

/// A Swift type DocStore can store as an attribute value.
public protocol PersistentValue: Codable, Sendable {
    /// The attribute type a property of this Swift type gets.
    static var attributeType: AttributeType { get }
    /// Whether the Swift type is optional.
    static var isOptional: Bool { get }
    /// The value read when nothing else can be (see the file comment).
    static var placeholder: Self { get }
    /// The value in stored form.
    var storedValue: StoredValue { get }
    /// The value from its stored form; nil when the stored value has another kind.
    init?(storedValue: StoredValue)
}

extension PersistentValue {
    public static var isOptional: Bool { false }
}

extension Bool: PersistentValue {
    public static var attributeType: AttributeType { .bool }
    public static var placeholder: Bool { false }
    public var storedValue: StoredValue { .bool(self) }
    public init?(storedValue: StoredValue) { guard case .bool(let v) = storedValue else { return nil }; self = v }
}

/// The fixed-width integers share one implementation.
public protocol PersistentInteger: PersistentValue, FixedWidthInteger {}

extension PersistentInteger {
    public static var placeholder: Self { 0 }
    public var storedValue: StoredValue { .int(Int64(self)) }
    public init?(storedValue: StoredValue) {
        guard case .int(let v) = storedValue, let exact = Self(exactly: v) else { return nil }
        self = exact
    }
}

extension Int: PersistentInteger { public static var attributeType: AttributeType { .int64 } }
extension Int64: PersistentInteger { public static var attributeType: AttributeType { .int64 } }
extension Int32: PersistentInteger { public static var attributeType: AttributeType { .int32 } }
extension Int16: PersistentInteger { public static var attributeType: AttributeType { .int16 } }
extension Int8: PersistentInteger { public static var attributeType: AttributeType { .int8 } }

extension Double: PersistentValue {
    public static var attributeType: AttributeType { .double }
    public static var placeholder: Double { 0 }
    public var storedValue: StoredValue { .double(self) }
    public init?(storedValue: StoredValue) { guard case .double(let v) = storedValue else { return nil }; self = v }
}

extension Float: PersistentValue {
    public static var attributeType: AttributeType { .float }
    public static var placeholder: Float { 0 }
    public var storedValue: StoredValue { .float(self) }
    public init?(storedValue: StoredValue) { guard case .float(let v) = storedValue else { return nil }; self = v }
}

extension Decimal: PersistentValue {
    public static var attributeType: AttributeType { .decimal }
    public static var placeholder: Decimal { 0 }
    public var storedValue: StoredValue { .decimal(self) }
    public init?(storedValue: StoredValue) { guard case .decimal(let v) = storedValue else { return nil }; self = v }
}

extension String: PersistentValue {
    public static var attributeType: AttributeType { .string }
    public static var placeholder: String { "" }
    public var storedValue: StoredValue { .string(self) }
    public init?(storedValue: StoredValue) { guard case .string(let v) = storedValue else { return nil }; self = v }
}

extension Date: PersistentValue {
    public static var attributeType: AttributeType { .date }
    public static var placeholder: Date { .distantPast }
    public var storedValue: StoredValue { .date(self) }
    public init?(storedValue: StoredValue) { guard case .date(let v) = storedValue else { return nil }; self = v }
}

extension UUID: PersistentValue {
    public static var attributeType: AttributeType { .uuid }
    public static var placeholder: UUID { UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)) }
    public var storedValue: StoredValue { .uuid(self) }
    public init?(storedValue: StoredValue) { guard case .uuid(let v) = storedValue else { return nil }; self = v }
}

extension URL: PersistentValue {
    public static var attributeType: AttributeType { .url }
    public static var placeholder: URL { URL(fileURLWithPath: "/") }
    public var storedValue: StoredValue { .url(self) }
    public init?(storedValue: StoredValue) { guard case .url(let v) = storedValue else { return nil }; self = v }
}

extension Data: PersistentValue {
    public static var attributeType: AttributeType { .binaryData }
    public static var placeholder: Data { Data() }
    public var storedValue: StoredValue { .data(self) }
    public init?(storedValue: StoredValue) { guard case .data(let v) = storedValue else { return nil }; self = v }
}

extension Optional: PersistentValue where Wrapped: PersistentValue {
    public static var attributeType: AttributeType { Wrapped.attributeType }
    public static var isOptional: Bool { true }
    public static var placeholder: Wrapped? { nil }
    public var storedValue: StoredValue { self?.storedValue ?? .null }
    public init?(storedValue: StoredValue) {
        if case .null = storedValue { self = .none; return }
        guard let v = Wrapped(storedValue: storedValue) else { return nil }
        self = .some(v)
    }
}
