// swift-tools-version:6.0
import PackageDescription

/// Settings every Swift target shares.
let swiftSettings: [SwiftSetting] = [
    .enableUpcomingFeature("ExistentialAny"),
]

/// iap-fcgi carries the Swift runtime and Foundation in its own binary, linked by lld with packed
/// relative relocations (DT_RELR, glibc 2.36+) and exporting no symbols: an idle process maps 25.8 MiB
/// instead of 33.2. Linked to the shared libraries, it loaded 14 of them (Foundation and ICU come with
/// swift-crypto and swift-certificates) and touched 15 MiB of their pages at start; linked in, only
/// the code it uses is there, the dynamic loader no longer reads 2 MiB of relocations, and no dynamic
/// symbol table of the service's own 15,000 symbols is searched (static-stdlib-args.lnk exports them;
/// nothing looks them up). The archives named here are those the static Foundation needs that the
/// modules, compiled against the shared one, do not name. iapctl links the same way, so that the
/// Debian package (scripts/package) needs no Swift library on the server.
let iapFCGILinkerSettings: [LinkerSetting] = [
    .unsafeFlags([
        "-static-stdlib", "-use-ld=lld",
        "-Xlinker", "-z", "-Xlinker", "pack-relative-relocs", "-Xlinker", "--no-export-dynamic",
    ]),
] + ["CoreFoundation", "_FoundationCShims", "_FoundationCollections", "_FoundationICU"].map { .linkedLibrary($0) }

/// Linux only (Debian 12 is what is built and tested): the service calls glibc directly (`import Glibc`:
/// threads, sockets, poll, signals) and links libfcgi, MariaDB Connector/C, libcurl and jemalloc from
/// Debian's packages, so no other platform is declared.
///
/// The fuzz targets in Fuzz/ are not a package: scripts/fuzz compiles them with swiftc, together with the
/// sources of IAPCore, SignedData and AppReceipt, instrumented for libFuzzer.
let package = Package(
    name: "iap-fcgi",
    products: [
        .executable(name: "iap-fcgi", targets: ["iap-fcgi"]),
        .executable(name: "iapctl", targets: ["iapctl"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        // SHA-256 and ECDSA (BoringSSL underneath), X.509 path validation, DER: what Apple's own
        // app-store-server-library builds its JWS verification on.
        .package(url: "https://github.com/apple/swift-crypto", "4.5.2"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
        .package(url: "https://github.com/apple/swift-asn1", from: "1.7.4"),
        // Operations: the ecosystem's logging and metrics APIs, and the Prometheus text format.
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        // The support console's pages: Mustache templates, HTML-escaped by default.
        .package(url: "https://github.com/hummingbird-project/swift-mustache", exact: "2.1.1"),
    ],
    targets: [
        // C libraries, through system-library targets with typed shims where Swift cannot call C.
        .systemLibrary(name: "CFastCGI", pkgConfig: "fcgi", providers: [.apt(["libfcgi-dev"])]),
        .systemLibrary(name: "CMariaDB", pkgConfig: "libmariadb", providers: [.apt(["libmariadb-dev"])]),
        .systemLibrary(name: "CCurl", pkgConfig: "libcurl", providers: [.apt(["libcurl4-openssl-dev", "libssl-dev"])]),
        .systemLibrary(name: "CMalloc", providers: [.apt(["libjemalloc-dev"])]),   // the allocator

        // A bounded least-recently-used map, for the caches of every target (the MariaDB wrapper's
        // prepared statements among them, which must not depend on the domain in IAPCore).
        .target(name: "Caches", swiftSettings: swiftSettings),

        // Pure logic: no I/O, unit tested.
        .target(
            name: "IAPCore",
            dependencies: [
                "Caches",
                .product(name: "Crypto", package: "swift-crypto"),
                // RS256 (RSA PKCS#1 v1.5): Google's service-account grants and Pub/Sub push tokens.
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        // Apple's signed data (StoreKit 2 JWS) verified offline: pure, no I/O but what the caller hands it.
        .target(
            name: "SignedData",
            dependencies: [
                "IAPCore", "Caches",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),
        // App receipts (PKCS#7, iOS 7+) verified offline: pure, no I/O but what the caller hands it.
        .target(
            name: "AppReceipt",
            dependencies: [
                "IAPCore", "SignedData",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
                .product(name: "SwiftASN1", package: "swift-asn1"),
            ],
            swiftSettings: swiftSettings
        ),

        // Thin Swift owners of the C handles.
        .target(name: "FastCGI", dependencies: ["CFastCGI"], swiftSettings: swiftSettings),
        .target(name: "MariaDB", dependencies: ["CMariaDB", "Caches"], swiftSettings: swiftSettings),
        .target(name: "Curl", dependencies: ["CCurl"], swiftSettings: swiftSettings),

        // The service: request -> route -> verify -> deliver -> answer.
        .target(
            name: "IAPService",
            dependencies: [
                "IAPCore", "FastCGI", "MariaDB", "Curl", "CMalloc", "SignedData", "AppReceipt",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Mustache", package: "swift-mustache"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            // The console's templates and stylesheet, built into the binary (`PackageResources`): the
            // service reads no file at run time, and the Debian package ships the binaries alone.
            resources: [.embedInCode("Console/Templates")],
            swiftSettings: swiftSettings
        ),
        .executableTarget(
            name: "iap-fcgi", dependencies: ["IAPService"], swiftSettings: swiftSettings,
            linkerSettings: iapFCGILinkerSettings
        ),
        .executableTarget(
            name: "iapctl",
            dependencies: [
                "IAPCore", "IAPService", "MariaDB", "SignedData", "AppReceipt",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ],
            swiftSettings: swiftSettings,
            linkerSettings: iapFCGILinkerSettings
        ),

        .testTarget(
            name: "IAPCoreTests",
            dependencies: [
                "IAPCore", .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ],
            swiftSettings: swiftSettings
        ),
        .testTarget(name: "CachesTests", dependencies: ["Caches"], swiftSettings: swiftSettings),
        // The service's glue, for what can be tested without servers: no database, no network.
        .testTarget(
            name: "IAPServiceTests",
            dependencies: ["IAPService", "IAPCore", "MariaDB"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "AppReceiptTests",
            dependencies: ["AppReceipt", "SignedData", "IAPCore", .product(name: "Crypto", package: "swift-crypto")],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        .testTarget(
            name: "SignedDataTests",
            dependencies: ["SignedData", "IAPCore", .product(name: "Crypto", package: "swift-crypto")],
            exclude: ["Fixtures"],
            swiftSettings: swiftSettings
        ),
        // Prints the cost of one app receipt's check here, cold and with its chain cached (swift run -c release app-receipt-bench).
        .executableTarget(
            name: "app-receipt-bench",
            dependencies: ["AppReceipt", "SignedData"],
            path: "Benchmarks/AppReceiptBench",
            swiftSettings: swiftSettings
        ),
        // Prints the cost of reading an Apple answer and a request with JSONParser against Foundation's
        // JSONDecoder and JSONSerialization (swift run -c release json-reader-bench).
        .executableTarget(
            name: "json-reader-bench",
            dependencies: ["IAPCore"],
            path: "Benchmarks/JSONReaderBench",
            swiftSettings: swiftSettings
        ),
        // Prints the cost of one JWS verification, cold and with its chain cached (swift run -c release signed-data-bench).
        .executableTarget(
            name: "signed-data-bench",
            dependencies: [
                "SignedData", "IAPCore",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "X509", package: "swift-certificates"),
            ],
            path: "Benchmarks/SignedDataBench",
            swiftSettings: swiftSettings
        ),
    ]
)
