// @Model: turns a class's stored properties into persisted ones, as SwiftData's @Model does.
//
// For `@Model final class Note: ManagedObject { var title: String = "" … }` it generates
//   - on each persisted property (every stored `var` not marked @Transient): the attribute
//     @_PersistedProperty(index: k), which gives it init/get/set accessors over the object's
//     slot k of this class (PersistedPropertyMacro);
//   - members: the entity description (`_$entityDescription`, built at run time so the
//     compiler's types decide attribute vs relationship), the declared property names, the
//     pending values of phase-one initialization (`_$pending`), `_$absorbPending()`,
//     `_$observedValueChanged(slot:)` (tells Observation a slot changed outside its setter), the
//     initializer a context uses to make faults, and `init()` when the class declares none.
// Inverse key paths (`@Relationship(inverse: \Folder.notes)`) are read by their last component
// (the description keeps the name, not the key path), and so are the key paths of `#Index` and
// `#Unique` declarations in the class body. The description names each property's type through a
// closure that is never called, not a key path: key path literals are built at run time, and
// building them was a tenth of opening a store in a new process.

import SwiftDiagnostics
import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

/// A persisted stored property, as @Model sees it.
struct PersistedProperty {
    var name: String
    var type: TypeSyntax?
    var initializer: ExprSyntax?
    var attributeArguments: String?
    var relationshipArguments: String?
    var inverseName: String?
}

enum ModelMacroError: Error, CustomStringConvertible {
    case notAClass
    var description: String {
        switch self {
        case .notAClass: "@Model applies to a class that inherits from ManagedObject (or from another @Model class)"
        }
    }
}

public struct ModelMacro: MemberMacro, MemberAttributeMacro {
    /// The stored `var`s of a class that are persisted, in declaration order.
    static func persistedProperties(of declaration: some DeclGroupSyntax) -> [PersistedProperty] {
        var out: [PersistedProperty] = []
        for member in declaration.memberBlock.members {
            guard let variable = member.decl.as(VariableDeclSyntax.self), let p = persisted(variable) else { continue }
            out.append(p)
        }
        return out
    }

    static func persisted(_ variable: VariableDeclSyntax) -> PersistedProperty? {
        guard variable.bindingSpecifier.tokenKind == .keyword(.var), variable.bindings.count == 1,
              let binding = variable.bindings.first,
              let pattern = binding.pattern.as(IdentifierPatternSyntax.self) else { return nil }
        for modifier in variable.modifiers {
            switch modifier.name.tokenKind {
            case .keyword(.static), .keyword(.class), .keyword(.lazy), .keyword(.override): return nil
            default: continue
            }
        }
        if let accessors = binding.accessorBlock {
            // Computed properties (a getter) are not stored; observers (willSet/didSet) are.
            switch accessors.accessors {
            case .getter: return nil
            case .accessors(let list):
                let computed: [TokenKind] = [.keyword(.get), .keyword(.set), .keyword(.`init`), .keyword(._read), .keyword(._modify)]
                if list.contains(where: { computed.contains($0.accessorSpecifier.tokenKind) }) { return nil }
            }
        }
        var property = PersistedProperty(name: pattern.identifier.text, type: binding.typeAnnotation?.type, initializer: binding.initializer?.value)
        for element in variable.attributes {
            guard let attribute = element.as(AttributeSyntax.self) else { continue }
            let name = attribute.attributeName.trimmedDescription
            switch name {
            case "Transient", "DocStore.Transient": return nil
            case "_PersistedProperty": return nil   // already expanded
            case "Attribute", "DocStore.Attribute":
                property.attributeArguments = attribute.arguments?.as(LabeledExprListSyntax.self)?.trimmedDescription ?? ""
            case "Relationship", "DocStore.Relationship":
                let args = attribute.arguments?.as(LabeledExprListSyntax.self)
                property.relationshipArguments = args?.trimmedDescription ?? ""
                if let args, let inverse = args.first(where: { $0.label?.text == "inverse" })?.expression.as(KeyPathExprSyntax.self),
                   let last = inverse.components.last?.component.as(KeyPathPropertyComponentSyntax.self) {
                    property.inverseName = last.declName.baseName.text
                    // The name is all the description needs: the key path itself is left out, so
                    // opening a store does not build it at run time (the compiler has checked it
                    // in the attribute already).
                    property.relationshipArguments = args.filter { $0.label?.text != "inverse" }
                        .map { ($0.label.map { "\($0.text): " } ?? "") + $0.expression.trimmedDescription }
                        .joined(separator: ", ")
                }
            default: continue
            }
        }
        return property
    }

    // MARK: - MemberAttributeMacro

    public static func expansion(
        of node: AttributeSyntax, attachedTo declaration: some DeclGroupSyntax,
        providingAttributesFor member: some DeclSyntaxProtocol, in context: some MacroExpansionContext
    ) throws -> [AttributeSyntax] {
        guard declaration.is(ClassDeclSyntax.self), let variable = member.as(VariableDeclSyntax.self),
              let p = persisted(variable) else { return [] }
        guard let index = persistedProperties(of: declaration).firstIndex(where: { $0.name == p.name }) else { return [] }
        return ["@_PersistedProperty(index: \(raw: index))"]
    }

    // MARK: - MemberMacro

    public static func expansion(
        of node: AttributeSyntax, providingMembersOf declaration: some DeclGroupSyntax,
        conformingTo protocols: [TypeSyntax], in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] {
        guard let classDecl = declaration.as(ClassDeclSyntax.self) else { throw ModelMacroError.notAClass }
        let className = classDecl.name.text
        let superclass = classDecl.inheritanceClause?.inheritedTypes.first?.type.trimmedDescription ?? "ManagedObject"
        let parent = (superclass == "ManagedObject" || superclass == "DocStore.ManagedObject") ? "nil" : "\"\(superclass)\""
        let isAbstract = node.arguments?.as(LabeledExprListSyntax.self)?.contains {
            $0.label?.text == "isAbstract" && $0.expression.trimmedDescription == "true"
        } ?? false
        let originalName = node.arguments?.as(LabeledExprListSyntax.self)?.first { $0.label?.text == "originalName" }?.expression.trimmedDescription
        let properties = persistedProperties(of: declaration)

        let descriptions = properties.map { p -> String in
            // A closure, not a key path, carries the property's type: it is never called, and a
            // key path literal is built at run time (a tenth of opening a store in a new process).
            var call = "DocStore._$property({ (o: \(className)) in o.\(p.name) }, \"\(p.name)\""
            if let literal = p.initializer.flatMap(literalDefault) { call += ", defaultValue: \(literal)" }
            if let args = p.attributeArguments, !args.isEmpty { call += ", attribute: [\(args)]" }
            if let args = p.relationshipArguments {
                let inverse = p.inverseName.map { "\"\($0)\"" } ?? "nil"
                call += ", relationship: DocStore._$RelationshipOptions(inverseName: \(inverse)\(args.isEmpty ? "" : ", " + args))"
            }
            return call + ")"
        }
        let placeholders = properties.filter { $0.initializer == nil }.map { p -> String in
            "self.\(p.name) = \(placeholder(for: p.type))"
        }
        let hasInit = declaration.memberBlock.members.contains { $0.decl.is(InitializerDeclSyntax.self) }
        let indexes = declaredIndexes(of: declaration).map { index in
            "DocStore.IndexDescription([\(index.names.map { "\"\($0)\"" }.joined(separator: ", "))]\(index.unique ? ", isUnique: true" : ""))"
        }
        let indexArgument = (indexes.isEmpty ? "" : ", indexes: [\(indexes.joined(separator: ", "))]")
            + (originalName.map { ", originalName: \($0)" } ?? "")

        var members: [DeclSyntax] = [
            """
            override public class var _$entityDescription: DocStore.EntityDescription? {
                DocStore._$entity("\(raw: className)", parent: \(raw: parent), isAbstract: \(raw: isAbstract), [
                    \(raw: descriptions.joined(separator: ",\n"))
                ]\(raw: indexArgument))
            }
            """,
            """
            override public class var _$declaredPropertyNames: [String]? {
                [\(raw: properties.map { "\"\($0.name)\"" }.joined(separator: ", "))]
            }
            """,
            """
            public static func _$keyPaths\(raw: className)<R: \(raw: className)>(_ root: R.Type) -> [AnyKeyPath: String] {
                var names: [AnyKeyPath: String] = \(raw: parent == "nil" ? "DocStore._$baseKeyPaths(root)" : "\(superclass)._$keyPaths\(superclass)(root)")
                \(raw: properties.map { "names[\\R.\($0.name)] = \"\($0.name)\"" }.joined(separator: "\n"))
                return names
            }
            """,
            """
            override public class var _$keyPathNames: [AnyKeyPath: String] {
                Self._$keyPaths\(raw: className)(Self.self)
            }
            """,
            "static let _$slotBase\(raw: className): Int = \(raw: superclass)._$slotCount",
        ]
        // Each property's key path, made once: the accessors pass it to Observation on every
        // read and write, and a key path literal there was looked up, retained and released
        // each time. Private: only this class's accessors read it, and a property of a private
        // type makes a key path of a private type.
        for p in properties {
            members.append("private static let \(raw: keyPathName(className, p.name)) = \\\(raw: className).\(raw: p.name)")
        }
        members += [
            "override public class var _$slotCount: Int { \(raw: className)._$slotBase\(raw: className) + \(raw: properties.count) }",
            "var _$pending\(raw: className) = DocStore._$PendingValues()",
            """
            override public func _$absorbPending() {
                super._$absorbPending()
                _$applyPending(_$pending\(raw: className), base: \(raw: className)._$slotBase\(raw: className))
                _$pending\(raw: className) = DocStore._$PendingValues()
            }
            """,
            """
            override public func _$observedValueChanged(slot: Int) {
                switch slot &- \(raw: className)._$slotBase\(raw: className) {
                \(raw: properties.enumerated().map { "case \($0.offset): DocStore._$notifyObservers(self, \\\(className).\($0.element.name))" }.joined(separator: "\n"))
                default: super._$observedValueChanged(slot: slot)
                }
            }
            """,
            """
            public required init(_$fault token: DocStore._$FaultToken) {
                \(raw: placeholders.joined(separator: "\n"))
                super.init()
                _$becomeFault(token)
            }
            """,
        ]
        if !hasInit {
            members.append("public override init() { super.init() }")
        }
        return members
    }

    /// The name of the static that holds the key path of `className`'s property `property`
    /// (backticks dropped: a property named with a keyword is written `` `default` ``).
    static func keyPathName(_ className: String, _ property: String) -> String {
        "_$keyPath\(className)_\(property.filter { $0 != "`" })"
    }

    /// The `#Index` and `#Unique` declarations of the class body: for each argument, the last
    /// component of each key path.
    static func declaredIndexes(of declaration: some DeclGroupSyntax) -> [(names: [String], unique: Bool)] {
        var out: [(names: [String], unique: Bool)] = []
        for member in declaration.memberBlock.members {
            guard let expansion = member.decl.as(MacroExpansionDeclSyntax.self) else { continue }
            let unique: Bool
            switch expansion.macroName.text {
            case "Index": unique = false
            case "Unique": unique = true
            default: continue
            }
            for argument in expansion.arguments {
                guard let array = argument.expression.as(ArrayExprSyntax.self) else { continue }
                // A path of several components (`\.folder.name`) is kept whole, so opening a
                // store with it fails with a schema error naming it (S8).
                let names = array.elements.compactMap { element -> String? in
                    element.expression.as(KeyPathExprSyntax.self)?.components.compactMap {
                        $0.component.as(KeyPathPropertyComponentSyntax.self)?.declName.baseName.text
                    }.joined(separator: ".")
                }
                out.append((names, unique))
            }
        }
        return out
    }

    /// The text of a literal initializer, as a StoredValue default; nil when not a literal.
    static func literalDefault(_ expr: ExprSyntax) -> String? {
        if let s = expr.as(StringLiteralExprSyntax.self), s.segments.allSatisfy({ $0.is(StringSegmentSyntax.self) }) {
            return ".string(\(s.trimmedDescription))"
        }
        if expr.is(IntegerLiteralExprSyntax.self) { return ".int(\(expr.trimmedDescription))" }
        if let prefix = expr.as(PrefixOperatorExprSyntax.self), prefix.operator.text == "-", prefix.expression.is(IntegerLiteralExprSyntax.self) {
            return ".int(\(expr.trimmedDescription))"
        }
        if expr.is(BooleanLiteralExprSyntax.self) { return ".bool(\(expr.trimmedDescription))" }
        return nil
    }

    /// A value of `type` for a fault's phase-one initialization (replaced by the stored values).
    static func placeholder(for type: TypeSyntax?) -> String {
        guard let type else { return "DocStore._$placeholder()" }
        if type.is(OptionalTypeSyntax.self) || type.is(ImplicitlyUnwrappedOptionalTypeSyntax.self) { return "nil" }
        if type.is(ArrayTypeSyntax.self) || type.is(DictionaryTypeSyntax.self) { return "[]" }
        if let id = type.as(IdentifierTypeSyntax.self) {
            if id.name.text == "Optional" { return "nil" }
            if ["Set", "Array", "Dictionary"].contains(id.name.text) { return "[]" }
        }
        return "DocStore._$placeholder()"
    }
}

/// #Index and #Unique: declarations read by @Model; they expand to nothing (the compiler has
/// checked their key paths by then).
public struct IndexDeclarationMacro: DeclarationMacro {
    public static func expansion(
        of node: some FreestandingMacroExpansionSyntax, in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}

/// @Attribute, @Relationship and @Transient: markers read by @Model; they expand to nothing.
public struct MarkerMacro: PeerMacro {
    public static func expansion(
        of node: AttributeSyntax, providingPeersOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [DeclSyntax] { [] }
}
