// SchemaManifest: the part of a device's schema that sync needs to agree on — entity names and
// each synced field's name and kind (Format/sync.md § Schemas). The server keeps the kind it
// first saw for each field and refuses a push that disagrees (a field whose type changed is a
// schema it cannot map), so devices on different schema versions can share the fields they
// have in common.

import Foundation

/// The synced entities and fields of one schema version.
public struct SchemaManifest: Sendable, Hashable, Codable {
    /// The version identifier the app gave its schema (0 when it gave none).
    public var version: Int
    /// Entity name → field name → kind (an attribute type's name, `toOne`, or `toMany`).
    public var entities: [String: [String: String]]

    public init(version: Int, entities: [String: [String: String]]) {
        self.version = version
        self.entities = entities
    }
}
