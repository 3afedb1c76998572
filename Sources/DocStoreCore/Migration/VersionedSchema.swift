// VersionedSchema, SchemaMigrationPlan and MigrationStage: an app's schema history in code —
// SwiftData's VersionedSchema / SchemaMigrationPlan / MigrationStage. Each release that changes
// the model adds a versioned schema (its @Model classes, usually nested in an enum per version)
// and, when the change needs code, a custom stage; the plan lists them oldest first.
//
//   VS1 entity names come from the class names alone, so `V1.Note` and `V2.Note` are one entity
//       "Note" in two versions.
//   VS2 a plan's schemas are in ascending version order, each version once; stages go from one
//       listed version to a later one (checked when a store opens with the plan).

import Foundation

/// A schema version's number: major.minor.patch (SwiftData's `Schema.Version`).
public struct SchemaVersion: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    public var major: Int
    public var minor: Int
    public var patch: Int

    public init(_ major: Int, _ minor: Int, _ patch: Int) {
        self.major = major
        self.minor = minor
        self.patch = patch
    }

    /// The version written `1.2.3`; nil when the text is not three dot-separated numbers.
    public init?(_ text: String) {
        let parts = text.split(separator: ".").map { Int($0) }
        guard parts.count == 3, let a = parts[0], let b = parts[1], let c = parts[2], a >= 0, b >= 0, c >= 0 else { return nil }
        self.init(a, b, c)
    }

    public static func < (a: SchemaVersion, b: SchemaVersion) -> Bool {
        (a.major, a.minor, a.patch) < (b.major, b.minor, b.patch)
    }

    public var description: String { "\(major).\(minor).\(patch)" }

    public init(from decoder: any Decoder) throws {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let version = SchemaVersion(text) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a version: \(text)"))
        }
        self = version
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        try c.encode(description)
    }
}

/// One version of an app's schema: its number and its model classes.
///
/// ```swift
/// enum NotesV2: VersionedSchema {
///     static let versionIdentifier = SchemaVersion(2, 0, 0)
///     static var models: [ManagedObject.Type] { [Folder.self, Note.self] }
///     @Model final class Folder: ManagedObject { … }
///     @Model final class Note: ManagedObject { … }
/// }
/// ```
public protocol VersionedSchema {
    /// This version's number.
    static var versionIdentifier: SchemaVersion { get }
    /// Its model classes.
    static var models: [ManagedObject.Type] { get }
}

extension VersionedSchema {
    /// The schema of its model classes.
    public static var schema: Schema { Schema(models: models) }
}

/// How to go from one schema version to a later one.
public enum MigrationStage {
    /// DocStore infers the changes (added, removed and renamed properties and entities,
    /// optionality, defaults, indexes and uniqueness, relationships and their cardinality) —
    /// README § Migrations lists them, which are instant and which rewrite the objects.
    case lightweight(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type)
    /// The inferred changes plus code that sees each object as the old version had it and as the
    /// new version makes it, and may insert objects (``CustomMigration``).
    case custom(fromVersion: any VersionedSchema.Type, toVersion: any VersionedSchema.Type,
                migrate: (CustomMigration) -> Void)

    var from: any VersionedSchema.Type {
        switch self {
        case .lightweight(let from, _), .custom(let from, _, _): from
        }
    }

    var to: any VersionedSchema.Type {
        switch self {
        case .lightweight(_, let to), .custom(_, let to, _): to
        }
    }
}

/// An app's schema versions, oldest first, and the stages between them (SwiftData's
/// `SchemaMigrationPlan`). Two consecutive versions without a stage between them migrate
/// lightweight.
///
/// ```swift
/// enum NotesMigrationPlan: SchemaMigrationPlan {
///     static var schemas: [any VersionedSchema.Type] { [NotesV1.self, NotesV2.self, NotesV3.self] }
///     static var stages: [MigrationStage] {
///         [.custom(fromVersion: NotesV2.self, toVersion: NotesV3.self) { migration in … }]
///     }
/// }
/// let store = try Store(url: url, migrationPlan: NotesMigrationPlan.self)
/// ```
public protocol SchemaMigrationPlan {
    static var schemas: [any VersionedSchema.Type] { get }
    static var stages: [MigrationStage] { get }
}
