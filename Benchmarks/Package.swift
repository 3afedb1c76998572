// swift-tools-version:6.0
// DocStore's benchmark package: the same storage workloads against DocStoreEngine, LMDB and
// SQLite (C API) in one process and one run, printed as one table with ratios.
//
// It is its own package so that the library never links LMDB or SQLite: both are system-library
// targets here only (headers from liblmdb-dev and libsqlite3-dev; `run.sh` installs them).
// Build and run:  swift run -c release --package-path Benchmarks EngineBenchmark --scale 0.1
import PackageDescription

let package = Package(
    name: "DocStoreBenchmarks",
    dependencies: [
        // The repository root, by path. Without `name:` its identity would be the folder's name
        // ("main" here), which depends on where the repository was cloned.
        .package(name: "DocStore", path: ".."),
        // The Swift developer's SQLite: the object benchmark's idiomatic-records peer.
        .package(url: "https://github.com/groue/GRDB.swift", from: "7.0.0"),
    ],
    targets: [
        // No pkg-config file ships with Debian's liblmdb-dev: the modulemap links "lmdb" itself.
        .systemLibrary(name: "CLMDB", providers: [.apt(["liblmdb-dev"])]),
        .systemLibrary(name: "CSQLite", providers: [.apt(["libsqlite3-dev"])]),
        // What both benchmarks share: child processes, the clock, statistics, formatting, data.
        .target(name: "BenchmarkSupport"),
        .executableTarget(
            name: "EngineBenchmark",
            dependencies: [
                "BenchmarkSupport",
                "CLMDB",
                "CSQLite",
                .product(name: "DocStoreEngine", package: "DocStore"),
            ]),
        .executableTarget(
            name: "ObjectBenchmark",
            dependencies: [
                "BenchmarkSupport",
                "CSQLite",
                .product(name: "DocStore", package: "DocStore"),
                .product(name: "GRDB", package: "GRDB.swift"),
            ]),
    ],
    swiftLanguageModes: [.v6]
)
