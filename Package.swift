// swift-tools-version:6.0
import PackageDescription

/// Settings every Swift target shares.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

let package = Package(
    name: "iap-fcgi",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "iap-fcgi", targets: ["iap-fcgi"]),
        .executable(name: "iapctl", targets: ["iapctl"]),
        // The pure logic, for the fuzz targets in Fuzz/ (a package of its own).
        .library(name: "IAPCore", targets: ["IAPCore"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    ],
    targets: [
        // C libraries, through system-library targets with typed shims where Swift cannot call C.
        .systemLibrary(name: "CFastCGI", pkgConfig: "fcgi", providers: [.apt(["libfcgi-dev"])]),
        .systemLibrary(name: "CMariaDB", pkgConfig: "libmariadb", providers: [.apt(["libmariadb-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev", "libssl-dev"])]),
        .systemLibrary(name: "CMalloc"),   // glibc's <malloc.h>: nothing to install

        // Pure logic: no I/O, unit tested.
        .target(name: "IAPCore", swiftSettings: swiftSettings),

        // Thin Swift owners of the C handles.
        .target(name: "FastCGI", dependencies: ["CFastCGI"], swiftSettings: swiftSettings),
        .target(name: "MariaDB", dependencies: ["CMariaDB", "IAPCore"], swiftSettings: swiftSettings),
        .target(name: "Curl", dependencies: ["CCurl"], swiftSettings: swiftSettings),

        // The service: request -> route -> verify -> deliver -> answer.
        .target(
            name: "IAPService",
            dependencies: ["IAPCore", "FastCGI", "MariaDB", "Curl", "CMalloc"],
            swiftSettings: swiftSettings
        ),
        .executableTarget(name: "iap-fcgi", dependencies: ["IAPService"], swiftSettings: swiftSettings),
        .executableTarget(
            name: "iapctl",
            dependencies: [
                "IAPCore", "IAPService", "MariaDB",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings
        ),

        .testTarget(name: "IAPCoreTests", dependencies: ["IAPCore"], swiftSettings: swiftSettings),
    ]
)
