// The declarations of DocStore's macros and their options. @Model makes a class's stored
// properties persisted (see Sources/DocStoreMacros); @Attribute, @Relationship and @Transient
// mark properties with options, which @Model reads. A model class:
//
//     @Model final class Note: ManagedObject {
//         var title: String = ""
//         @Attribute(.indexed) var createdAt: Date = .now
//         @Relationship(inverse: \Folder.notes) var folder: Folder?
//         var tags: Set<Tag> = []
//     }

@_exported import DocStoreCore
import Foundation

/// Makes a `ManagedObject` subclass a model class: every stored `var` becomes a persisted
/// attribute or relationship (decided by its type), read lazily from the store and tracked for
/// save. `isAbstract: true` declares an entity with no objects of its own; `originalName` names
/// the entity as the previous schema version called it (a rename a migration keeps).
@attached(member, names: named(_$entityDescription), named(_$declaredPropertyNames), named(_$observedValueChanged), prefixed(_$slotBase),
          prefixed(_$keyPaths), named(_$keyPathNames),
          named(_$slotCount), prefixed(_$pending), named(_$absorbPending), named(init), arbitrary)
@attached(memberAttribute)
public macro Model(isAbstract: Bool = false, originalName: String? = nil) = #externalMacro(module: "DocStoreMacros", type: "ModelMacro")

/// Compound indexes of a model class, declared in its body, as SwiftData's `#Index`: each
/// argument is one index, its key paths the indexed properties (attributes or to-one
/// relationships) in order. The compiler checks the key paths; @Model reads them.
///
/// ```swift
/// @Model final class Note: ManagedObject {
///     #Index<Note>([\.folder, \.createdAt], [\.isPinned, \.title])
///     var title = ""
///     ...
/// }
/// ```
@freestanding(declaration)
public macro Index<T: ManagedObject>(_ indexes: [PartialKeyPath<T>]...) = #externalMacro(module: "DocStoreMacros", type: "IndexDeclarationMacro")

/// Uniqueness constraints of a model class over several properties together, as SwiftData's
/// `#Unique`: no two objects may have equal values in all of them (objects with a nil among
/// them never conflict). A save that breaks one fails with `.uniqueConstraint`.
///
/// ```swift
/// #Unique<Note>([\.folder, \.title])   // one title per folder
/// ```
@freestanding(declaration)
public macro Unique<T: ManagedObject>(_ constraints: [PartialKeyPath<T>]...) = #externalMacro(module: "DocStoreMacros", type: "IndexDeclarationMacro")

/// Added by @Model to each persisted property. Not for direct use.
@attached(accessor, names: named(init), named(get), named(set))
public macro _PersistedProperty(index: Int) = #externalMacro(module: "DocStoreMacros", type: "PersistedPropertyMacro")

/// Options of a persisted attribute: `@Attribute(.unique)`, `@Attribute(.indexed, .maxLength(200))`.
@attached(peer)
public macro Attribute(_ options: AttributeOption...) = #externalMacro(module: "DocStoreMacros", type: "MarkerMacro")

/// Options of a relationship: its delete rule, its inverse (by key path; one side is enough),
/// and for to-many relationships the fewest and most objects allowed at save.
@attached(peer)
public macro Relationship(
    deleteRule: DeleteRule = .nullify, inverse: AnyKeyPath? = nil, minimumCount: Int? = nil, maximumCount: Int? = nil,
    originalName: String? = nil
) = #externalMacro(module: "DocStoreMacros", type: "MarkerMacro")

/// A stored property that is not persisted.
@attached(peer)
public macro Transient() = #externalMacro(module: "DocStoreMacros", type: "MarkerMacro")
