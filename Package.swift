// swift-tools-version: 6.2
// The reactor state service: one ReactorKit-style reactor per session, served over HTTP/1.1 and
// Server-Sent Events by our own epoll server. No package dependencies, by design: only the toolchain.
import PackageDescription

let package = Package(
    name: "reactor-server",
    // Reactors already uses Synchronization's Mutex; ReactorClient must also build for Apple apps.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
    products: [
        .library(name: "Reactors", targets: ["Reactors"]),
        .library(name: "ReactorsTesting", targets: ["ReactorsTesting"]),
        .library(name: "Posix", targets: ["Posix"]),
        .library(name: "HTTPServer", targets: ["HTTPServer"]),
        .library(name: "SessionService", targets: ["SessionService"]),
        // ReactorSchema and JSONSchema: what a reactor registers to have /openapi.json describe its actions and states.
        .library(name: "JSONCodec", targets: ["JSONCodec"]),
        .library(name: "NATS", targets: ["NATS"]),
        .library(name: "Examples", targets: ["Examples"]),
        .library(name: "HostedExamples", targets: ["HostedExamples"]),
        .library(name: "ReactorClient", targets: ["ReactorClient"]),
        .executable(name: "reactor-server", targets: ["reactor-server"]),
    ],
    targets: [
        // Linux headers Glibc does not expose to Swift: epoll, eventfd, timerfd, accept4 (and the CRC-32C instruction).
        .target(name: "CLinux"),
        // The one choke point for system calls, sockets and files alike: EINTR retried, EAGAIN as
        // "would block", everything else a typed error naming the call.
        .target(name: "Posix", dependencies: ["CLinux"]),
        // A value-type logger over a tiny handler protocol; JSON lines on standard error.
        .target(name: "Logs", dependencies: ["Posix"]),
        // ReactorKit on Swift Concurrency; knows nothing of HTTP.
        .target(name: "Reactors"),
        // The tester and clock for reactor authors' tests; JSONCodec shows a failed assertion as a diff of the JSON
        // states, and failures go to Swift Testing or XCTest (both in the toolchain), whichever runs the test.
        .target(name: "ReactorsTesting", dependencies: ["Reactors", "JSONCodec"]),
        // One generic binary min-heap: the event loop's deadlines, the NATS connection's, the timer index.
        .target(name: "Heaps"),
        // Hand-written HTTP/1.1 + SSE server over epoll; knows nothing of reactors.
        .target(name: "HTTPServer", dependencies: ["CLinux", "Posix", "Logs", "Heaps"]),
        // JSON parsing, writing and Codable bridging without Foundation on the hot path.
        .target(name: "JSONCodec"),
        // Access to sessions: SHA-256, HMAC, base64url, session capability tokens and HS256 JWTs. Pure, no I/O.
        .target(name: "Tokens", dependencies: ["JSONCodec"]),
        // A NATS + JetStream client: the text protocol, request/reply, reconnects, streams, KV.
        .target(name: "NATS", dependencies: ["Posix", "JSONCodec", "Logs", "Heaps"]),
        // The demo reactors: counter, fruit, todo, search.
        .target(name: "Examples", dependencies: ["Reactors", "JSONCodec"]),
        // Glue between HTTP and Reactors: sessions, routes, admin, config.
        .target(
            name: "SessionService",
            dependencies: [
                "Reactors", "HTTPServer", "Posix", "JSONCodec", "Logs", "CLinux", "Tokens", "NATS", "Heaps",
            ]),
        // The examples as a server hosts them, registered once (reactor-server and every test server), with
        // the settings they add to the server's (search.*).
        .target(name: "HostedExamples", dependencies: ["Examples", "SessionService", "JSONCodec"]),
        .executableTarget(name: "reactor-server", dependencies: ["SessionService", "HostedExamples"]),
        // The typed Swift client (sessions, actions, SSE with reconnect, admin) for servers and Apple apps:
        // Foundation's URLSession only, no Glibc, so it builds wherever Foundation does.
        .target(name: "ReactorClient", dependencies: ["Reactors", "JSONCodec"]),

        // Benchmarks: executables that print numbers (never timed tests).
        .executableTarget(name: "reactors-bench", dependencies: ["Reactors", "Examples"]),
        .executableTarget(name: "http-bench-server", dependencies: ["HTTPServer", "Logs"]),
        // Test-only: the server's command line hosting reactors that crash on purpose (crash quarantine tests).
        .executableTarget(
            name: "reactor-server-traps", dependencies: ["SessionService", "Reactors", "HostedExamples"],
            path: "Tests/TrapServer"),
        // Test-only: the Swift snippets of the README and the DocC catalogs, compiled as shown (DocSnippetsTests).
        .executableTarget(
            name: "doc-snippets", dependencies: ["SessionService", "Reactors", "ReactorClient", "Examples"],
            path: "Tests/DocSnippets"),

        // The in-repo test toolkit (Hummingbird's HummingbirdTesting is the model): the service live on
        // 127.0.0.1:0, one raw-socket client that also reads SSE, one process launcher, one injected
        // clock, bounded waits, one Recorder. Not a product: only this package's tests use it.
        .target(
            name: "ReactorServerTesting",
            dependencies: [
                "SessionService", "HTTPServer", "Reactors", "ReactorsTesting", "Examples", "HostedExamples", "Logs",
                "CLinux", "NATS",
            ],
            path: "Tests/ReactorServerTesting",
            exclude: ["README.md"]),

        .testTarget(name: "LogsTests", dependencies: ["Logs"]),
        .testTarget(name: "HeapsTests", dependencies: ["Heaps"]),
        .testTarget(name: "ReactorsTests", dependencies: ["Reactors", "ReactorsTesting", "ReactorServerTesting"]),
        .testTarget(
            name: "ExamplesTests",
            dependencies: [
                "Examples", "HostedExamples", "SessionService", "Reactors", "ReactorsTesting", "ReactorServerTesting",
                "JSONCodec",
            ]),
        .testTarget(
            name: "HTTPServerTests", dependencies: ["HTTPServer", "Posix", "CLinux", "Logs", "ReactorServerTesting"]),
        .testTarget(name: "JSONCodecTests", dependencies: ["JSONCodec"]),
        .testTarget(name: "TokensTests", dependencies: ["Tokens", "JSONCodec"], exclude: ["make-jwt-fixtures.py"]),
        .testTarget(name: "NATSTests", dependencies: ["NATS", "Posix", "Logs", "JSONCodec", "ReactorServerTesting"]),
        .testTarget(
            name: "ReactorClientTests",
            dependencies: [
                "ReactorClient", "SessionService", "HTTPServer", "Examples", "HostedExamples", "Reactors",
                "ReactorsTesting", "JSONCodec", "Logs", "Tokens", "ReactorServerTesting",
            ]),
        .testTarget(
            name: "SessionServiceTests",
            dependencies: [
                "SessionService", "Logs", "Examples", "HostedExamples", "Reactors", "ReactorsTesting", "HTTPServer",
                "JSONCodec", "Tokens", "NATS", "ReactorServerTesting",
            ]),
    ]
)
