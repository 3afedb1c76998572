// swift-tools-version:6.0
// DocStore: an embedded object-graph store for Swift on its own storage engine.
// Layers (dependencies point down only): docstore (CLI) → DocStore (the macros, re-exporting
// DocStoreCore) → DocStoreCore (the object layer and queries) → DocStoreEngine → CLZ4.
import CompilerPluginSupport
import PackageDescription

let package = Package(
    name: "DocStore",
    products: [
        .library(name: "DocStore", targets: ["DocStore"]),
        // The object layer alone (what `DocStore` re-exports, without the macros): for the fuzz package.
        .library(name: "DocStoreCore", targets: ["DocStoreCore"]),
        .library(name: "DocStoreEngine", targets: ["DocStoreEngine"]),
        .library(name: "DocStoreTestSupport", targets: ["DocStoreTestSupport"]),
        .library(name: "DocStoreQueryTestSupport", targets: ["DocStoreQueryTestSupport"]),
        .executable(name: "docstore", targets: ["DocStoreCLI"]),
        // Sync (Format/sync.md): the messages both sides speak, the device side, and the server.
        // An app that links only `DocStore` builds none of their dependencies.
        .library(name: "DocStoreSyncWire", targets: ["DocStoreSyncWire"]),
        .library(name: "DocStoreSync", targets: ["DocStoreSync"]),
        .library(name: "DocStoreServer", targets: ["DocStoreServer"]),
        .executable(name: "docstore-server", targets: ["DocStoreServerCLI"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // The @Model macro (model classes declared in code, as with SwiftData).
        .package(url: "https://github.com/swiftlang/swift-syntax", from: "603.0.0"),
        // Sync only: deterministic object identities (SHA-256) on the device side.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.9.0"),
        // docstore-server only: the HTTP server and the PostgreSQL client.
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.0.0"),
        .package(url: "https://github.com/vapor/postgres-nio", from: "1.21.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.5.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
    ],
    targets: [
        .systemLibrary(name: "CLZ4", pkgConfig: "liblz4", providers: [.apt(["liblz4-dev"])]),
        // The processor's CRC32C instruction (SSE4.2 / ARMv8 CRC), with a software fallback in the engine.
        .target(name: "CCRC32C"),
        // The processor's prefetch hint (__builtin_prefetch), which Swift cannot spell.
        .target(name: "CPrefetch"),
        .target(name: "DocStoreEngine", dependencies: ["CLZ4", "CCRC32C", "CPrefetch"]),
        .macro(
            name: "DocStoreMacros",
            dependencies: [
                .product(name: "SwiftSyntaxMacros", package: "swift-syntax"),
                .product(name: "SwiftCompilerPlugin", package: "swift-syntax"),
            ]),
        // The object layer without the macro plugin: the fuzz package's sanitizer build cannot
        // link the plugin (see Fuzz/README.md), so what it fuzzes must not need it.
        .target(name: "DocStoreCore", dependencies: ["DocStoreEngine"]),
        .target(name: "DocStore", dependencies: ["DocStoreCore", "DocStoreMacros"]),
        .target(name: "DocStoreTestSupport", dependencies: ["DocStoreEngine", "DocStoreSyncWire"]),
        .target(name: "DocStoreQueryTestSupport", dependencies: ["DocStoreCore", "DocStoreTestSupport"]),
        .executableTarget(
            name: "DocStoreCLI",
            dependencies: [
                "DocStore", "DocStoreEngine",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]),
        // Sync: the wire format (Foundation only; both sides and the fuzz targets decode with it),
        // the device side (DocStore + the wire format + Foundation networking), the server
        // library (Hummingbird + postgres-nio) and its thin executable. Client and server never
        // import each other; only the tests import both.
        .target(name: "DocStoreSyncWire"),
        .target(name: "DocStoreSync", dependencies: [
            "DocStoreCore", "DocStoreEngine", "DocStoreSyncWire",
            .product(name: "Crypto", package: "swift-crypto"),
        ]),
        .target(name: "DocStoreServer", dependencies: [
            "DocStoreSyncWire",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
        ]),
        .executableTarget(name: "DocStoreServerCLI", dependencies: [
            "DocStoreServer",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "Logging", package: "swift-log"),
        ]),
        // The child process of the real-process crash tests; not a user tool.
        .executableTarget(name: "DocStoreKillTarget", dependencies: ["DocStoreEngine", "DocStoreCore"]),
        // The sync tests' model, and the device process their kill tests SIGKILL.
        .target(name: "DocStoreSyncTestModels", dependencies: ["DocStore"]),
        .executableTarget(name: "DocStoreSyncKillTarget", dependencies: ["DocStore", "DocStoreSync", "DocStoreSyncTestModels", "DocStoreTestSupport"]),
        .testTarget(name: "DocStoreEngineTests", dependencies: ["DocStoreEngine", "DocStoreTestSupport"]),
        .testTarget(name: "DocStoreEngineCrashTests", dependencies: ["DocStoreEngine", "DocStoreCore", "DocStoreTestSupport"]),
        .testTarget(name: "DocStoreCLITests", dependencies: ["DocStoreEngine", "DocStoreTestSupport"]),
        // Fixtures/ holds golden store files of earlier schema versions, read by path (not resources).
        .testTarget(name: "DocStoreTests", dependencies: ["DocStore", "DocStoreCore", "DocStoreEngine", "DocStoreTestSupport", "DocStoreQueryTestSupport"],
                    exclude: ["Fixtures"]),
        .testTarget(name: "DocStoreSyncTests", dependencies: [
            "DocStore", "DocStoreCore", "DocStoreSync", "DocStoreSyncWire", "DocStoreServer", "DocStoreTestSupport",
            "DocStoreSyncTestModels",
        ]),
        // The concurrency stress suite is a package of its own (Stress/), run under the thread
        // sanitizer by scripts/test.sh.
        .testTarget(
            name: "DocStoreMacrosTests",
            dependencies: [
                "DocStoreMacros",
                .product(name: "SwiftSyntaxMacrosGenericTestSupport", package: "swift-syntax"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
