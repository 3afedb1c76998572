// swift-tools-version:6.0
// The concurrency stress suite, as a package of its own so that its thread-sanitizer build
// (scripts/test.sh) compiles only the object layer it stresses — not the sync server's
// networking and crypto dependencies, which a sanitizer build of the root package rebuilds
// whole. It depends on the repository root by path, as the fuzz and benchmark packages do.
import PackageDescription

let package = Package(
    name: "DocStoreStress",
    dependencies: [.package(name: "DocStore", path: "..")],
    targets: [
        .testTarget(name: "DocStoreStressTests", dependencies: [
            .product(name: "DocStore", package: "DocStore"),
            .product(name: "DocStoreCore", package: "DocStore"),
            .product(name: "DocStoreTestSupport", package: "DocStore"),
        ]),
    ],
    swiftLanguageModes: [.v6]
)
