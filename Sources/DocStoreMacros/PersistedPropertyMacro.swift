// @_PersistedProperty(index:): the accessors of one persisted property, added by @Model.
//
//   init   records the value given during phase-one initialization (a default, or the
//          class's own init) in `_$pending`; the base initializer moves it into the object;
//   get    loads a fault, reports the access to Observation (with the property's key path,
//          kept in a static by @Model), returns the typed value;
//   set    changes the value through the object's context (change tracking, inverses).
// Which conversions apply (attribute, Codable document, to-one, to-many, ordered) is decided by
// the compiler from the property's type, through overloads of _$read/_$write/_$record.

import SwiftSyntax
import SwiftSyntaxBuilder
import SwiftSyntaxMacros

public struct PersistedPropertyMacro: AccessorMacro {
    public static func expansion(
        of node: AttributeSyntax, providingAccessorsOf declaration: some DeclSyntaxProtocol,
        in context: some MacroExpansionContext
    ) throws -> [AccessorDeclSyntax] {
        guard let variable = declaration.as(VariableDeclSyntax.self),
              let binding = variable.bindings.first,
              let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text,
              let index = node.arguments?.as(LabeledExprListSyntax.self)?.first?.expression.trimmedDescription
        else { return [] }
        let className = context.lexicalContext.first?.as(ClassDeclSyntax.self)?.name.text ?? "Self"
        let slot = "\(className)._$slotBase\(className) &+ \(index)"
        // The key path @Model keeps in a static (ModelMacro.keyPathName): a literal here was
        // instantiated, retained and released on every read and write.
        let keyPath = "\(className).\(ModelMacro.keyPathName(className, name))"
        // The value a read falls back on when none can be loaded: the declared initial value,
        // or the empty value of an optional or collection type.
        var fallback = ""
        if let initializer = binding.initializer?.value {
            fallback = ", default: \(initializer.trimmedDescription)"
        } else if let type = binding.typeAnnotation?.type {
            let placeholder = ModelMacro.placeholder(for: type)
            if placeholder != "DocStore._$placeholder()" { fallback = ", default: \(placeholder)" }
        }
        return [
            """
            @storageRestrictions(accesses: _$pending\(raw: className))
            init(initialValue) {
                DocStore._$record(&_$pending\(raw: className), \(raw: index), initialValue)
            }
            """,
            "get { DocStore._$read(self, \(raw: slot), \(raw: keyPath)\(raw: fallback)) }",
            "set { DocStore._$write(self, \(raw: slot), \(raw: keyPath), newValue) }",
        ]
    }
}
