// ManagedObject+Unattached: relationships between objects not yet inserted into any context.
// They are held as object references (`unattachedLinks`, by slot) and both sides are kept in
// step as they are set, as they are once inserted: `Note(title:, folder: inbox)` puts the note
// into `inbox.notes` at once. Insert turns the links into stored ones (Context.attachLinks).
//
// The inverse is found from the classes' own declarations (@Model's entity descriptions): the
// inverse named on this side, or a relationship of the destination that names this one. Slots
// are counted as the store counts them: ancestors' properties first, each class in declared order.

extension ManagedObject {
    /// Sets the unattached relationship at `slot` to `targets`, updating the inverse of every
    /// target added or removed that is not inserted either.
    final func setUnattachedLinks(_ slot: Int, _ targets: [ManagedObject]) {
        let old = unattachedLinks?[slot] ?? []
        var links = unattachedLinks ?? [:]
        links[slot] = targets
        unattachedLinks = links
        for removed in old where removed.isUnattached && !targets.contains(where: { $0 === removed }) {
            guard let inverse = Self.unattachedInverse(of: type(of: self), slot: slot, destination: type(of: removed)) else { continue }
            removed.unattachedLinks?[inverse.slot]?.removeAll { $0 === self }
        }
        for added in targets where added.isUnattached && !old.contains(where: { $0 === added }) {
            guard let inverse = Self.unattachedInverse(of: type(of: self), slot: slot, destination: type(of: added)) else { continue }
            var theirs = added.unattachedLinks ?? [:]
            if inverse.isToMany {
                if !(theirs[inverse.slot] ?? []).contains(where: { $0 === self }) { theirs[inverse.slot, default: []].append(self) }
            } else {
                // A to-one on the other side: its previous partner loses it.
                if let previous = theirs[inverse.slot]?.first, previous !== self {
                    previous.unattachedLinks?[slot]?.removeAll { $0 === added }
                }
                theirs[inverse.slot] = [self]
            }
            added.unattachedLinks = theirs
        }
    }

    final var isUnattached: Bool { key == 0 && context == nil }

    /// The inverse of `source`'s relationship at `slot`, as a slot of `destination` and whether
    /// it is to-many; nil when the classes do not say.
    static func unattachedInverse(of source: ManagedObject.Type, slot: Int, destination: ManagedObject.Type)
        -> (slot: Int, isToMany: Bool)? {
        let sourceNames = slotNames(of: source)
        guard slot < sourceNames.count else { return nil }
        let name = sourceNames[slot]
        let relationships = lineage(of: source).compactMap { $0._$entityDescription }.flatMap(\.relationships)
        guard let r = relationships.first(where: { $0.name == name }) else { return nil }
        let theirs = lineage(of: destination).compactMap { $0._$entityDescription }.flatMap(\.relationships)
        let sourceNamesOfLineage = Set(lineage(of: source).compactMap { $0._$entityDescription?.name })
        let inverse = r.inverse.flatMap { n in theirs.first { $0.name == n } }
            ?? theirs.first { $0.inverse == name && sourceNamesOfLineage.contains($0.destination) }
        guard let inverse, let inverseSlot = slotNames(of: destination).firstIndex(of: inverse.name) else { return nil }
        return (inverseSlot, inverse.isToMany)
    }

    /// The class and its ancestors below ManagedObject, root first.
    private static func lineage(of type: ManagedObject.Type) -> [ManagedObject.Type] {
        var chain: [ManagedObject.Type] = []
        var current: AnyClass? = type
        while let c = current as? ManagedObject.Type, c != ManagedObject.self {
            chain.append(c)
            current = _getSuperclass(c)
        }
        return chain.reversed()
    }

    /// Property names by slot, as the store numbers them.
    private static func slotNames(of type: ManagedObject.Type) -> [String] {
        lineage(of: type).flatMap(\.ownDeclaredNames)
    }

    /// The names this class itself declares (not those it inherits).
    private static var ownDeclaredNames: [String] {
        guard let mine = _$declaredPropertyNames else { return [] }
        if let parent = _getSuperclass(self) as? ManagedObject.Type, parent != ManagedObject.self,
           parent._$declaredPropertyNames == mine { return [] }
        return mine
    }
}
