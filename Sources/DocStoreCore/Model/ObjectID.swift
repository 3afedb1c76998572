// ObjectID: the identity of a stored object — which store, which entity, which primary key.
// Permanent from the moment of insert (the key comes from the entity's sequence then, never
// changes and is never reused), Sendable, Codable, with the URI form
// `docstore://<store-uuid>/<Entity>/<number>` that Context.object(with:) resolves.
//
// A primary key carries its entity: key = entityID << 48 | sequence number (Format/record.md
// § Primary keys), so a key alone says which class to make a fault of.

import Foundation

/// The permanent identity of an object in a store.
///
/// ```swift
/// let id = note.objectID                       // valid from insert on, before any save
/// let url = id.uriRepresentation               // docstore://7A1E…/Note/42
/// let same = try context.existingObject(with: id)
/// ```
public struct ObjectID: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The store the object lives in (`Store.identifier`).
    public let storeIdentifier: UUID
    /// The object's entity (its concrete entity, a sub-entity included).
    public let entityName: String
    /// The primary key: the entity's ID in the top 16 bits, its sequence number below.
    public let primaryKey: UInt64

    init(store: UUID, entity: String, key: UInt64) {
        self.storeIdentifier = store
        self.entityName = entity
        self.primaryKey = key
    }

    /// The object's number within its entity (1, 2, 3, …), as the URI shows it.
    public var number: UInt64 { primaryKey & PrimaryKey.sequenceMask }

    /// `docstore://<store-uuid>/<Entity>/<number>`.
    public var uriRepresentation: URL {
        var components = URLComponents()
        components.scheme = "docstore"
        components.host = storeIdentifier.uuidString
        components.path = "/\(entityName)/\(number)"
        return components.url ?? URL(fileURLWithPath: "/")
    }

    public var description: String { "\(entityName)/\(number)" }
}

/// How a primary key is made of an entity ID and a sequence number.
enum PrimaryKey {
    static let entityShift: UInt64 = 48
    static let sequenceMask: UInt64 = (1 << 48) - 1
    /// The largest entity ID a key can carry.
    static let maxEntityID: UInt32 = 0xFFFF

    static func make(entity: UInt32, sequence: UInt64) -> UInt64 {
        UInt64(entity) << entityShift | (sequence & sequenceMask)
    }

    static func entity(of key: UInt64) -> UInt32 { UInt32(key >> entityShift) }

    /// The 8-byte big-endian form used in tree keys, so byte order is key order.
    static func bytes(_ key: UInt64) -> [UInt8] {
        withUnsafeBytes(of: key.bigEndian) { Array($0) }
    }

    static func appendBytes(_ key: UInt64, to out: inout [UInt8]) {
        withUnsafeBytes(of: key.bigEndian) { out.append(contentsOf: $0) }
    }

    /// The key from 8 big-endian bytes in place (a tree key in its page); nil if too short.
    static func read(_ bytes: UnsafeRawBufferPointer) -> UInt64? {
        guard bytes.count >= 8 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(bytes[i]) }
        return v
    }

    /// The key from 8 big-endian bytes at `offset`; nil if too short.
    static func read(_ bytes: [UInt8], at offset: Int = 0) -> UInt64? {
        guard bytes.count >= offset + 8 else { return nil }
        var v: UInt64 = 0
        for i in 0..<8 { v = v << 8 | UInt64(bytes[offset + i]) }
        return v
    }
}
