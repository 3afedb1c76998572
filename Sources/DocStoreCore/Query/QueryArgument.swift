// QueryArgument: a Swift value given to a predicate (a `%@` argument, a `$variable` binding)
// as a query expression. Numbers of every width become integers or doubles, objects and object
// IDs become references (their primary key), arrays and sets become lists; anything else is
// refused (nil), and the caller raises the typed error.

import Foundation

enum QueryArgument {
    static func expression(_ value: Any?) -> QueryExpression? {
        guard let value else { return .constant(.null) }
        // The usual argument types first, by their exact type: a failed `as?` costs about as
        // much as parsing a token, and the chain below tries twenty of them.
        switch ObjectIdentifier(type(of: value)) {
        case ObjectIdentifier(String.self): if let v = value as? String { return .constant(.string(v)) }
        case ObjectIdentifier(Int.self): if let v = value as? Int { return .constant(.int(Int64(v))) }
        case ObjectIdentifier(Double.self): if let v = value as? Double { return .constant(.double(v)) }
        case ObjectIdentifier(Date.self): if let v = value as? Date { return .constant(.date(v)) }
        case ObjectIdentifier(Bool.self): if let v = value as? Bool { return .constant(.bool(v)) }
        case ObjectIdentifier(ObjectID.self): if let id = value as? ObjectID { return .constant(.reference(id.primaryKey)) }
        case ObjectIdentifier(UUID.self): if let v = value as? UUID { return .constant(.uuid(v)) }
        default: break
        }
        switch value {
        case let e as QueryExpression: return e
        case let v as StoredValue: return .constant(v)
        case let o as ManagedObject:
            return o.key == 0 ? nil : .constant(.reference(o.key))
        case let id as ObjectID: return .constant(.reference(id.primaryKey))
        case let b as Bool: return .constant(.bool(b))
        case let v as Int: return .constant(.int(Int64(v)))
        case let v as Int8: return .constant(.int(Int64(v)))
        case let v as Int16: return .constant(.int(Int64(v)))
        case let v as Int32: return .constant(.int(Int64(v)))
        case let v as Int64: return .constant(.int(v))
        case let v as UInt8: return .constant(.int(Int64(v)))
        case let v as UInt16: return .constant(.int(Int64(v)))
        case let v as UInt32: return .constant(.int(Int64(v)))
        case let v as UInt: return v <= UInt(Int64.max) ? .constant(.int(Int64(v))) : .constant(.double(Double(v)))
        case let v as UInt64: return v <= UInt64(Int64.max) ? .constant(.int(Int64(v))) : .constant(.double(Double(v)))
        case let v as Double: return .constant(.double(v))
        case let v as Float: return .constant(.double(Double(v)))
        case let v as Decimal: return .constant(.decimal(v))
        case let v as String: return .constant(.string(v))
        case let v as Substring: return .constant(.string(String(v)))
        case let v as Date: return .constant(.date(v))
        case let v as UUID: return .constant(.uuid(v))
        case let v as URL: return .constant(.url(v))
        case let v as Data: return .constant(.data(v))
        case is NSNull: return .constant(.null)
        case let list as [Any?]: return elements(list)
        case let list as [Any]: return elements(list)
        case let set as Set<AnyHashable>: return elements(Array(set))
        case let set as Set<ManagedObject>: return elements(Array(set))
        default:
            // An Optional wrapped in Any: unwrap one level.
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                return mirror.children.first.map { expression($0.value) } ?? .constant(.null)
            }
            return nil
        }
    }

    private static func elements(_ list: [Any?]) -> QueryExpression? {
        var items: [QueryExpression] = []
        items.reserveCapacity(list.count)
        for element in list {
            guard let e = expression(element) else { return nil }
            items.append(e)
        }
        return .list(items)
    }
}
