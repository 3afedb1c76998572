// EntityInfo: an entity as an open store works with it — its IDs from the catalog, its trees,
// the class its objects are made of, and its properties by slot. A slot is a property's index
// in an object's value array: inherited properties come first (root ancestor first), so a slot
// means the same property in an entity and all its sub-entities, and code generated for a class
// can use fixed slots.
//
// Built once at open from the schema and the catalog; immutable after (so Sendable).

import Foundation

/// What kind of property a slot holds.
enum PropertyKind: Sendable {
    case attribute(AttributeDescription)
    case toOne(RelationshipDescription)
    case toMany(RelationshipDescription)
}

/// An attribute's save-time checks: the fields of its description the checks read, with its
/// pattern compiled once at open rather than at every save. Not the description itself: a save
/// checks every attribute of every changed object, and copying the description out (its name,
/// pattern and default retained and released) was most of that.
final class AttributeRules: Sendable {
    let regex: NSRegularExpression?
    let type: AttributeType
    let isOptional: Bool
    let minimum: Double?
    let maximum: Double?
    let minLength: Int?
    let maxLength: Int?
    let pattern: String?
    /// No bounds, lengths or pattern: a value present (or the attribute optional) and of the
    /// type passes (`StoredValue.isAcceptable`).
    let checksOnlyPresenceAndType: Bool

    init(_ a: AttributeDescription) {
        regex = a.pattern.flatMap { try? NSRegularExpression(pattern: "^(?:\($0))$") }
        type = a.type
        isOptional = a.isOptional
        minimum = a.minimum
        maximum = a.maximum
        minLength = a.minLength
        maxLength = a.maxLength
        pattern = a.pattern
        checksOnlyPresenceAndType = a.minimum == nil && a.maximum == nil && a.minLength == nil && a.maxLength == nil && a.pattern == nil
    }
}

/// One property of an entity as the store uses it (a class: hot paths pass it around without
/// copying its descriptions).
final class PropertyInfo: Sendable {
    let name: String
    let slot: Int
    let fieldID: UInt32
    let kind: PropertyKind
    /// Relationships: the destination entity's index in `StoreModel.entities`.
    let destination: Int
    /// Relationships: the inverse's slot in the destination entity (and its sub-entities).
    let inverseSlot: Int
    /// To-many relationships: the tree of (source key, target key) links.
    let linkTree: String
    /// Indexed or unique attributes: the index tree.
    let indexTree: String?

    init(name: String, slot: Int, fieldID: UInt32, kind: PropertyKind, destination: Int, inverseSlot: Int,
         linkTree: String, indexTree: String?) {
        self.name = name
        self.slot = slot
        self.fieldID = fieldID
        self.kind = kind
        self.destination = destination
        self.inverseSlot = inverseSlot
        self.linkTree = linkTree
        self.indexTree = indexTree
        isToMany = if case .toMany = kind { true } else { false }
        isToOne = if case .toOne = kind { true } else { false }
        isOrdered = if case .toMany(let r) = kind { r.isOrdered } else { false }
        isUnique = if case .attribute(let a) = kind { a.isUnique } else { false }
        requiresTarget = if case .toOne(let r) = kind { !r.isOptional } else { false }
        countBounds = if case .toMany(let r) = kind, max(r.minCount ?? 0, r.isOptional ? 0 : 1) > 0 || r.maxCount != nil {
            (max(r.minCount ?? 0, r.isOptional ? 0 : 1), r.maxCount)
        } else {
            nil
        }
        rules = if case .attribute(let a) = kind { AttributeRules(a) } else { nil }
        attributeType = if case .attribute(let a) = kind { a.type } else { nil }
    }

    let isUnique: Bool
    /// To-one relationships that are not optional: save refuses an object without a target.
    let requiresTarget: Bool
    /// To-many relationships with a least or most count (a required one needs one member):
    /// what save checks; nil for the others. (Read by every save for every changed object, so
    /// taken from the description once, not by copying it out of `kind` each time.)
    let countBounds: (minimum: Int, maximum: Int?)?
    /// Attributes: the checks save applies.
    let rules: AttributeRules?
    let isToMany: Bool
    let isToOne: Bool
    let isOrdered: Bool
    /// Attributes: the type (what the planner reads of one, without copying its description).
    let attributeType: AttributeType?

    var attribute: AttributeDescription? { if case .attribute(let a) = kind { a } else { nil } }
    var relationship: RelationshipDescription? {
        switch kind {
        case .attribute: nil
        case .toOne(let r), .toMany(let r): r
        }
    }
    /// Stored in the record: attributes and to-one relationships.
    var isStoredInRecord: Bool { !isToMany }
}

/// A compound index or uniqueness constraint of an open store (Format/record.md § Compound
/// index keys): its tree and its elements, resolved to the slots of the entity that uses it
/// (the same in the declaring entity and all its sub-entities).
final class CompoundIndex: Sendable {
    let description: IndexDescription
    /// The entity that declares it.
    let entityName: String
    /// `compound.F1.F2…` or, for a uniqueness constraint, `unique.F1.F2…` (field IDs).
    let tree: String
    /// Each element's property: an attribute, a to-one, or the Codable attribute a document
    /// field is in.
    let elements: [PropertyInfo]
    /// Each element's field path inside its document (`["author"]` for `metadata.author`);
    /// empty for an attribute or a to-one.
    let documentPaths: [[String]]
    var isUnique: Bool { description.isUnique }
    /// A document field may be an array, entered once per element (`ANY metadata.tags == x`):
    /// an object can have several entries, so the index never answers alone and is not walked
    /// for a sort.
    let isMultiValued: Bool

    init(description: IndexDescription, entityName: String, tree: String, elements: [PropertyInfo], documentPaths: [[String]]) {
        self.description = description
        self.entityName = entityName
        self.tree = tree
        self.elements = elements
        self.documentPaths = documentPaths
        propertyList = description.properties.joinedNames(", ")
        isMultiValued = documentPaths.contains { !$0.isEmpty }
        paths = zip(elements, documentPaths).map { [$0.name] + $1 }
        slots = elements.map(\.slot)
    }

    /// The elements' slots, made once: every object a save writes is asked whether it
    /// changed them.
    let slots: [Int]

    /// Each element's key path from the object, made once: the planner compares every
    /// conjunct of every fetch with them.
    let paths: [[String]]

    /// Element `i`'s key path from the object: `["folder"]`, `["metadata", "author"]`.
    func path(_ i: Int) -> [String] { paths[i] }

    /// `Note(folder, createdAt)` or `unique Note(folder, title)`.
    var text: String { description.text(entity: entityName) }
    /// The property names, for error messages: `folder, title`.
    let propertyList: String
}

/// An entity of an open store.
final class EntityInfo: Sendable {
    let name: String
    let id: UInt32
    let index: Int
    let description: EntityDescription
    /// The tree holding the records of this entity's whole hierarchy (its root's ID).
    let recordsTree: String
    /// The class objects of this entity are made of (`ManagedObject` itself when none).
    let objectClass: ManagedObject.Type
    /// Properties by slot.
    let properties: [PropertyInfo]
    let slotByName: [String: Int]
    /// Record-stored slots in ascending field-ID order (the order a record is written in).
    let recordSlots: [Int]
    /// The slots of attributes whose value a delete's history tombstone keeps
    /// (`preservesValueOnDeletion`), in field-ID order.
    let tombstoneSlots: [Int]
    /// Field ID → slot (-1: not a property of this entity), for decoding without hashing.
    let slotForField: [Int]
    /// Slot → field ID (0 for none), for decoding one field of a record.
    let fieldForSlot: [UInt32]
    /// Each slot's value for an object whose record lacks it: the attribute's default or null.
    let defaults: [StoredValue]
    /// This entity's ID and those of every entity that inherits from it.
    let kindIDs: Set<UInt32>
    /// The compound indexes and uniqueness constraints its objects are entered in: its own and
    /// its ancestors'.
    let compoundIndexes: [CompoundIndex]
    /// Its name and its ancestors' (nearest first): what `@entities` gives in a query.
    let lineageNames: [String]
    /// The open store's identifier, which its objects' IDs name; nil in a model built for a
    /// migration, a dump or a summary rather than for an open store.
    let storeIdentifier: UUID?
    /// How many to-many relationships it has: the states a new object of it starts with.
    let toManyCount: Int
    /// `slotForField` keeping only the slots a deleted object's values are needed for — its
    /// index entries, its to-one targets, the values history preserves on deletion — and -1 for
    /// the others: what a save or a batch delete decodes of a deleted or rewritten object's
    /// record, stepping over the rest.
    let slotForFieldOnDeletion: [Int]

    init(name: String, id: UInt32, index: Int, description: EntityDescription, recordsTree: String,
         objectClass: ManagedObject.Type, properties: [PropertyInfo], kindIDs: Set<UInt32>,
         compoundIndexes: [CompoundIndex], lineageNames: [String], storeIdentifier: UUID?) {
        self.storeIdentifier = storeIdentifier
        self.compoundIndexes = compoundIndexes
        self.lineageNames = lineageNames
        self.name = name
        self.id = id
        self.index = index
        self.description = description
        self.recordsTree = recordsTree
        self.objectClass = objectClass
        self.properties = properties
        self.kindIDs = kindIDs
        var byName: [String: Int] = [:]
        for p in properties {
            byName[p.name] = p.slot
        }
        slotByName = byName
        recordSlots = properties.filter(\.isStoredInRecord).sorted { $0.fieldID < $1.fieldID }.map(\.slot)
        tombstoneSlots = recordSlots.filter { [properties] in properties[$0].attribute?.preservesValueOnDeletion == true }
        var table = [Int](repeating: -1, count: Int(properties.map(\.fieldID).max() ?? 0) + 1)
        for p in properties { table[Int(p.fieldID)] = p.slot }
        slotForField = table
        fieldForSlot = properties.map(\.fieldID)
        defaults = properties.map { $0.attribute?.defaultValue ?? .null }
        toManyCount = properties.count { $0.isToMany }
        // A mask by slot, not a Set<Int>: the first Set of Int in a process costs it a scan of
        // every conformance record (Int's Hashable), and every store opens through here.
        var onDeletion = [Bool](repeating: false, count: properties.count)
        for p in properties where p.indexTree != nil || p.isToOne || p.attribute?.preservesValueOnDeletion == true {
            onDeletion[p.slot] = true
        }
        for index in compoundIndexes { for element in index.elements { onDeletion[element.slot] = true } }
        slotForFieldOnDeletion = table.map { $0 >= 0 && onDeletion[$0] ? $0 : -1 }   // a slot is an index of `properties`
    }

    func property(named name: String) -> PropertyInfo? {
        slotByName[name].map { properties[$0] }
    }

    /// The most bytes `appendRecord` writes for `values`.
    func recordCapacity(_ values: [StoredValue]) -> Int {
        var size = RecordCoding.headerCapacity
        for slot in recordSlots where slot < values.count && !values[slot].isNull { size += RecordCoding.fieldCapacity(values[slot]) }
        return size
    }

    /// Appends the record of `values` (Format/record.md): `recordSlots` are in field-ID order.
    func appendRecord(_ values: [StoredValue], rowVersion: UInt64, schemaVersion: UInt32, to out: inout [UInt8]) {
        RecordCoding.appendHeader(entityID: id, schemaVersion: schemaVersion, rowVersion: rowVersion, to: &out)
        for slot in recordSlots where slot < values.count { RecordCoding.appendField(properties[slot].fieldID, values[slot], to: &out) }
    }

    /// `slotForField` keeping only `slots`; the other fields map to -1, so a partial decode
    /// steps over them without making values (a batch reads only what it uses).
    func slotForField(reading slots: Set<Int>) -> [Int] {
        slotForField.map { slots.contains($0) ? $0 : -1 }
    }

    /// The value of `slot` in a record `RecordCoding.validate` passed (its default when the
    /// record lacks the field), decoding that field alone — stepping on from `position` when the
    /// field lies past it (RecordCoding.field).
    func value(ofSlot slot: Int, inRecord bytes: UnsafeRawBufferPointer, key: UInt64, from position: inout RecordPosition) -> StoredValue {
        guard slot < fieldForSlot.count else { return .null }
        let found = try? RecordCoding.field(bytes, fieldForSlot[slot], key: key, from: &position, checked: true)
        return (found ?? nil) ?? defaults[slot]
    }

    /// A stored record's values by slot (absent fields at their defaults) and its row version.
    func values(ofRecord bytes: [UInt8], key: UInt64) throws(DocStoreError) -> (values: [StoredValue], rowVersion: UInt64) {
        var values = defaults
        let version = try RecordCoding.decode(bytes, key: key, into: &values, slotForField: slotForField)
        return (values, version)
    }
}

/// Every entity of an open store, resolved against its catalog.
struct StoreModel: Sendable {
    let entities: [EntityInfo]
    let byName: [String: Int]
    /// Entities by ID: `byID[id]` is the entity's index, or −1 where no entity has that ID. A
    /// table, not a dictionary: IDs are small (given out from 1 as entities are added, and at
    /// most `PrimaryKey.maxEntityID`), and every object made or read asks for its entity — a
    /// hash per object.
    private let byID: [Int]
    /// Model classes → their entity: each class's `classKey` with the entity's index, searched
    /// from the end. A store has a handful of model classes, and comparing a few words is
    /// cheaper than hashing one (each insert asks). Not keyed by `ObjectIdentifier`, whose first
    /// dictionary costs a new process a scan of every conformance record.
    private let byClass: [(key: UInt64, index: Int)]

    func entity(named name: String) -> EntityInfo? { byName[name].map { entities[$0] } }

    /// Every tree the object layer uses: records, links and indexes.
    var treeNames: [String] {
        var names: [String] = []
        var seen = Set<String>()
        for e in entities {
            for t in [e.recordsTree] + e.properties.flatMap({ [$0.linkTree, $0.indexTree ?? ""] }) + e.compoundIndexes.map(\.tree)
            where !t.isEmpty {
                if seen.insert(t).inserted { names.append(t) }
            }
        }
        return names
    }
    func entity(id: UInt32) -> EntityInfo? {
        let i = Int(id)
        guard i < byID.count else { return nil }
        let index = byID[i]
        return index >= 0 ? entities[index] : nil
    }
    /// The entity a primary key belongs to.
    func entity(ofKey key: UInt64) -> EntityInfo? { entity(id: PrimaryKey.entity(of: key)) }

    /// `Entity/number` for the object `key`, as its URI ends (`entity 7/3` for an entity the
    /// schema lacks).
    func name(ofKey key: UInt64) -> String {
        "\(entity(ofKey: key)?.name ?? "entity \(PrimaryKey.entity(of: key))")/\(key & PrimaryKey.sequenceMask)"
    }

    /// The key of the object `Entity/number` names; nil when the text is malformed, the entity
    /// unknown or the number out of range.
    func key(ofName name: some StringProtocol) -> UInt64? {
        guard let slash = name.lastIndex(of: "/"), let entity = entity(named: String(name[..<slash])),
              let number = UInt64(name[name.index(after: slash)...]), number > 0, number <= PrimaryKey.sequenceMask else { return nil }
        return PrimaryKey.make(entity: entity.id, sequence: number)
    }

    init(catalog: Catalog, classes: [String: ManagedObject.Type], storeIdentifier: UUID? = nil) {
        let schema = catalog.schema
        var indexByName: [String: Int] = [:]
        for (i, e) in schema.entities.enumerated() { indexByName[e.name] = i }

        // Slot order per entity: lineage root first; within a level, the class's declared order
        // when it gives one, else attributes then relationships.
        func levelNames(_ e: EntityDescription) -> [String] {
            let all = e.attributes.map(\.name) + e.relationships.map(\.name)
            guard let declared = classes[e.name]?._$declaredPropertyNames, Set(declared) == Set(all) else { return all }
            return declared
        }
        var slotNames: [String: [String]] = [:]
        for e in schema.entities {
            slotNames[e.name] = schema.lineage(of: e.name).reversed().flatMap(levelNames)
        }
        func slot(of property: String, in entity: String) -> Int {
            slotNames[entity]?.firstIndex(of: property) ?? -1
        }

        var infos: [EntityInfo] = []
        for (i, e) in schema.entities.enumerated() {
            let lineage = schema.lineage(of: e.name)
            let root = lineage.last ?? e
            var properties: [PropertyInfo] = []
            for (s, name) in (slotNames[e.name] ?? []).enumerated() {
                // The level that declares the property gives its field ID.
                guard let owner = lineage.first(where: { l in l.attributes.contains { $0.name == name } || l.relationships.contains { $0.name == name } })
                else { continue }
                let fieldID = catalog.fieldID(owner.name, name)
                if let a = owner.attributes.first(where: { $0.name == name }) {
                    properties.append(PropertyInfo(
                        name: name, slot: s, fieldID: fieldID, kind: .attribute(a), destination: -1, inverseSlot: -1,
                        linkTree: "", indexTree: (a.isIndexed || a.isUnique) ? "index.\(fieldID)" : nil))
                } else if let r = owner.relationships.first(where: { $0.name == name }) {
                    properties.append(PropertyInfo(
                        name: name, slot: s, fieldID: fieldID, kind: r.isToMany ? .toMany(r) : .toOne(r),
                        destination: indexByName[r.destination] ?? -1,
                        inverseSlot: r.inverse.map { slot(of: $0, in: r.destination) } ?? -1,
                        linkTree: r.isToMany ? "links.\(fieldID)" : "", indexTree: nil))
                }
            }
            let kinds = Set(schema.entities.filter { schema.entity($0.name, isKindOf: e.name) }.map { catalog.entityID($0.name) })
            var compound: [CompoundIndex] = []
            for level in lineage.reversed() {
                for index in level.indexes {
                    // An element is a property, or `document.field…` inside a Codable attribute.
                    let paths = index.properties.map { $0.split(separator: ".").map(String.init) }
                    let elements = paths.compactMap { path in path.first.flatMap { first in properties.first { $0.name == first } } }
                    guard elements.count == index.properties.count else { continue }   // S8 refuses this schema
                    let tree = (index.isUnique ? "unique." : "compound.") + zip(elements, paths).map { element, path in
                        ([String(element.fieldID)] + path.dropFirst()).joinedNames(":")
                    }.joinedNames(".")
                    compound.append(CompoundIndex(description: index, entityName: level.name, tree: tree, elements: elements,
                                                  documentPaths: paths.map { Array($0.dropFirst()) }))
                }
            }
            infos.append(EntityInfo(
                name: e.name, id: catalog.entityID(e.name), index: i, description: e,
                recordsTree: "records.\(catalog.entityID(root.name))",
                objectClass: classes[e.name] ?? ManagedObject.self, properties: properties, kindIDs: kinds,
                compoundIndexes: compound, lineageNames: lineage.map(\.name), storeIdentifier: storeIdentifier))
        }
        entities = infos
        byName = indexByName
        // A catalog's entity IDs are checked to lie in 1…maxEntityID when it is read.
        let highest = infos.lazy.map(\.id).filter { $0 <= PrimaryKey.maxEntityID }.max() ?? 0
        var ids = [Int](repeating: -1, count: Int(highest) + 1)
        for (i, info) in infos.enumerated() where info.id <= PrimaryKey.maxEntityID { ids[Int(info.id)] = i }
        byID = ids
        byClass = infos.indices.compactMap { i in
            infos[i].objectClass == ManagedObject.self ? nil : (Self.classKey(infos[i].objectClass), i)
        }
    }

    /// The entity of a model class's objects.
    func entity(ofClass type: ManagedObject.Type) -> EntityInfo? {
        let key = Self.classKey(type)
        // The last entity of a class wins, as it did in a dictionary built in order.
        for entry in byClass.reversed() where entry.key == key { return entities[entry.index] }
        return nil
    }

    /// A class's identity as a number (its metadata's address).
    static func classKey(_ type: ManagedObject.Type) -> UInt64 {
        UInt64(UInt(bitPattern: ObjectIdentifier(type)))
    }
}
