// WireValues: DocStore's stored values to the wire's and back (Format/sync.md § Values). A
// to-one reference is not converted here: it needs the global ID mapping (SyncState).

import DocStoreCore
import DocStoreSyncWire
import Foundation

extension WireValue {
    /// The wire form of an attribute value; nil for a reference (mapped by the caller).
    init?(_ value: StoredValue) {
        switch value {
        case .null: self = .null
        case .bool(let v): self = .bool(v)
        case .int(let v): self = .int(v)
        case .double(let v): self = .double(v.bitPattern)
        case .float(let v): self = .float(v.bitPattern)
        case .decimal(let v): self = .decimal(v.description)
        case .string(let v): self = .string(v)
        case .date(let v): self = .date(v.timeIntervalSince1970.bitPattern)
        case .uuid(let v): self = .uuid(v)
        case .url(let v): self = .url(v.absoluteString)
        case .data(let v): self = .data(v)
        case .document(let v): self = .document(v)
        case .reference: return nil
        }
    }

    /// The stored form of an attribute value; nil for a reference or a value that does not
    /// parse (a decimal or URL string a hostile server made up).
    var storedValue: StoredValue? {
        switch self {
        case .null: .null
        case .bool(let v): .bool(v)
        case .int(let v): .int(v)
        case .double(let v): .double(Double(bitPattern: v))
        case .float(let v): .float(Float(bitPattern: v))
        case .decimal(let v): Decimal(string: v, locale: Locale(identifier: "en_US_POSIX")).map(StoredValue.decimal)
        case .string(let v): .string(v)
        case .date(let v): .date(Date(timeIntervalSince1970: Double(bitPattern: v)))
        case .uuid(let v): .uuid(v)
        case .url(let v): URL(string: v).map(StoredValue.url)
        case .data(let v): .data(v)
        case .document(let v): .document(v)
        case .reference, .order: nil
        }
    }
}
