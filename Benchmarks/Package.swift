// swift-tools-version:6.0
// DocStore's benchmarks: the same workloads against DocStore, LMDB and SQLite (C API) in one run,
// reported as ratios. LMDB and SQLite are system libraries here only; the library never links them.
import PackageDescription

let package = Package(
    name: "DocStoreBenchmarks",
    dependencies: [.package(name: "DocStore", path: "..")],
    targets: [
        .systemLibrary(name: "CLMDB", providers: [.apt(["liblmdb-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "EngineBenchmark",
            dependencies: ["CLMDB", "CSQLite", .product(name: "DocStoreEngine", package: "DocStore")]),
    ],
    swiftLanguageModes: [.v6]
)
