// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "roomd",
    platforms: [.macOS(.v14)],
    products: [
        .executable(name: "roomd", targets: ["roomd"]),
        .library(name: "RoomClient", targets: ["RoomClient"]),
        // For integration-test harnesses: RoomdProcess (start/stop a real roomd) and TokenMinter.
        .library(name: "RoomdTesting", targets: ["RoomdTesting"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/vapor/jwt-kit", from: "5.7.1"),
        .package(url: "https://github.com/apple/swift-crypto", "4.1.0"..<"6.0.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus", from: "2.4.1"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CWebSockets",
            pkgConfig: "libwebsockets",
            providers: [.apt(["libwebsockets-dev"])]
        ),
        // The official NATS C client, for the cluster (PROTOCOL.md section 18).
        .systemLibrary(
            name: "CNats",
            pkgConfig: "libnats",
            providers: [.apt(["libnats-dev"])]
        ),
        // The domain: pure, synchronous, deterministic. No sockets, no files, no transport settings.
        .target(name: "RoomModel", dependencies: ["RoomConfig", "RoomWire", "RoomProtocol", "RoomCollections"]),
        // The role template document (`--config roles.json`): roles, permissions, settings, and reading the file.
        .target(name: "RoomConfig", dependencies: ["RoomWire"]),
        // JSON values, parser and writer shared by the server and the client SDK.
        .target(name: "RoomWire"),
        // The wire's JSON objects (Peer, Room, Track, Message, Poll…), each defined once with
        // its decoder and encoders: the server writes them, the kits read them.
        .target(name: "RoomProtocol", dependencies: ["RoomWire"]),
        // FIFO and DeadlineQueue: the queues every other target shares. No dependencies.
        .target(name: "RoomCollections"),
        // Minting tokens like an app backend: roomd token, RoomdTesting, tests.
        .target(
            name: "RoomTokens",
            dependencies: [
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The cluster bus (NATS): connection, node membership, room home leases. A
        // transport concern beside RoomServer; RoomModel never sees it.
        .target(
            name: "RoomCluster",
            dependencies: [
                "CNats", .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        .target(
            name: "RoomServer",
            dependencies: [
                "RoomModel", "RoomConfig", "RoomWire", "RoomProtocol", "RoomTokens", "CWebSockets", "RoomCluster",
                "RoomCollections",
                .product(name: "Logging", package: "swift-log"),
                .product(name: "JWTKit", package: "jwt-kit"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Metrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                // SignedPoster's response delegate (the response head and the request's headers).
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            // The browser client, served at /client/roomd.js and /client/ (compiled in: no files to ship).
            // Its npm package.json and types (roomd.d.ts, scripts/kit-methods.py) sit beside it, not compiled.
            exclude: ["Client/package.json", "Client/roomd.d.ts"],
            resources: [
                .embedInCode("Client/roomd.js"), .embedInCode("Client/index.html"),
                // The producer's console at /admin/ (section 32; Admin/AdminFiles.swift).
                .embedInCode("Admin/admin.html"), .embedInCode("Admin/admin.css"),
                .embedInCode("Admin/admin.js"), .embedInCode("Admin/api.js"),
            ],
            // Release builds skip the dynamic exclusivity checks: the fan-out path
            // (Dispatcher.deliver, Connection.enqueue) runs on the one service thread,
            // and the checks were 25 % of its cost (roombench micro fanout-dispatch:
            // 65 → 49 ns per recipient; docs/BENCHMARKS.md). Debug builds, which
            // `make test` runs, keep them: a conflicting access still traps there.
            swiftSettings: [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]
        ),
        .executableTarget(
            name: "roomd",
            dependencies: [
                "RoomServer", "RoomModel", "RoomConfig", "RoomTokens", "RoomClient", "RoomWire", "RoomCluster",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // `roomd replay` moves a test-mode daemon's clock over HTTP.
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
            ]
        ),
        .target(name: "RoomClient", dependencies: ["RoomWire", "RoomProtocol", "CWebSockets", "RoomCollections"]),
        // posix_spawn with closefrom for RoomdTesting (ChildProcess.swift says why not Process).
        .target(name: "CSpawn"),
        .target(name: "RoomdTesting", dependencies: ["RoomClient", "RoomTokens", "RoomWire", "CSpawn"]),
        .executableTarget(
            name: "roombench",
            dependencies: [
                "RoomClient", "RoomWire", "RoomServer", "RoomModel", "RoomConfig", "RoomTokens", "RoomdTesting",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Logging", package: "swift-log"),
                // `roombench hook-server` (HookServerCommand.swift says why not RoomdTesting's HookServer).
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        .testTarget(name: "RoomWireTests", dependencies: ["RoomWire"]),
        .testTarget(name: "RoomCollectionsTests", dependencies: ["RoomCollections"]),
        .testTarget(name: "RoomConfigTests", dependencies: ["RoomConfig"]),
        .testTarget(name: "RoomModelTests", dependencies: ["RoomModel", "RoomConfig", "RoomWire", "RoomProtocol"]),
        .testTarget(name: "RoomClusterTests", dependencies: ["RoomCluster", "RoomdTesting"]),
        .testTarget(
            name: "RoomServerTests",
            dependencies: [
                "RoomClient", "RoomWire", "RoomModel", "RoomConfig", "RoomServer", "RoomTokens", "RoomdTesting",
                "RoomCluster", "RoomProtocol", "CWebSockets",
                .product(name: "Crypto", package: "swift-crypto"), .product(name: "Logging", package: "swift-log"),
            ]
        ),
    ]
)

// Fuzz targets (libFuzzer), only when ROOMD_FUZZ=1: `make fuzz` builds them
// with -sanitize=fuzzer,address in .build-fuzz. Each defines <Target>_main and
// hands its input callback to libFuzzer's driver (Fuzz/Sources/FuzzSupport).
// Not part of `swift build` or `make test`: without the fuzzer runtime they
// cannot link.
if Context.environment["ROOMD_FUZZ"] == "1" {
    let asLibrary: [SwiftSetting] = [.unsafeFlags(["-parse-as-library"])]
    package.targets += [
        .target(name: "FuzzSupport", path: "Fuzz/Sources/FuzzSupport"),
        .executableTarget(
            name: "FuzzJSON",
            dependencies: ["FuzzSupport", "RoomWire"],
            path: "Fuzz/Sources/FuzzJSON",
            swiftSettings: asLibrary
        ),
        .executableTarget(
            name: "FuzzTemplate",
            dependencies: [
                "FuzzSupport", "RoomModel", "RoomConfig", "RoomServer", "RoomWire",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Fuzz/Sources/FuzzTemplate",
            swiftSettings: asLibrary
        ),
        .executableTarget(
            name: "FuzzDispatcher",
            dependencies: [
                "FuzzSupport", "RoomModel", "RoomConfig", "RoomServer", "RoomTokens", "RoomWire",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Fuzz/Sources/FuzzDispatcher",
            swiftSettings: asLibrary
        ),
        .executableTarget(
            name: "FuzzHTTP",
            dependencies: [
                "FuzzSupport", "RoomModel", "RoomConfig", "RoomServer", "RoomTokens",
                .product(name: "Logging", package: "swift-log"),
            ],
            path: "Fuzz/Sources/FuzzHTTP",
            swiftSettings: asLibrary
        ),
    ]
}
