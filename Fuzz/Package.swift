// swift-tools-version:5.4
// The libFuzzer targets. A separate package because fuzz executables inside a package of tools
// version 5.5+ fail to link (an undefined <Module>_main; see ../shared/TOOLCHAIN.md). Each target
// is a thin main calling DocStoreTestSupport.FuzzTargets (the object layer's: DocStoreQueryTestSupport),
// which the unit suite also replays.
import PackageDescription

let targets = ["FuzzOpenStore", "FuzzWALRecord", "FuzzPageDecode", "FuzzOperations", "FuzzKeyEncoding"]
let objectTargets = ["FuzzPredicate", "FuzzSchemaDecode", "FuzzDumpLoad", "FuzzRecover", "FuzzGraphOperations"]
// The sync protocol's decoders (the server's requests, the device's responses).
let syncTargets = ["FuzzSyncRequest", "FuzzSyncResponse"]

let package = Package(
    name: "DocStoreFuzz",
    dependencies: [.package(name: "DocStore", path: "..")],
    targets: targets.map { name in
        .executableTarget(
            name: name,
            dependencies: [
                .product(name: "DocStoreEngine", package: "DocStore"),
                .product(name: "DocStoreTestSupport", package: "DocStore"),
            ])
    } + objectTargets.map { name in
        // The object layer without the @Model plugin (DocStoreCore), whose sanitizer build
        // this toolchain cannot link.
        .executableTarget(
            name: name,
            dependencies: [
                .product(name: "DocStoreCore", package: "DocStore"),
                .product(name: "DocStoreQueryTestSupport", package: "DocStore"),
                .product(name: "DocStoreTestSupport", package: "DocStore"),
            ])
    } + syncTargets.map { name in
        .executableTarget(
            name: name,
            dependencies: [
                .product(name: "DocStoreSyncWire", package: "DocStore"),
                .product(name: "DocStoreTestSupport", package: "DocStore"),
            ])
    }
)
