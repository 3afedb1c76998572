// The compiler plugin that provides DocStore's macros (@Model and the property markers).

import SwiftCompilerPlugin
import SwiftSyntaxMacros

@main
struct DocStoreMacrosPlugin: CompilerPlugin {
    let providingMacros: [any Macro.Type] = [
        ModelMacro.self, PersistedPropertyMacro.self, MarkerMacro.self, IndexDeclarationMacro.self,
    ]
}
