import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// No Docker engine runs here, so this shows the Dockerfile's runtime stage will work: the release
/// binary (built as the build stage builds it) needs exactly the shared libraries the runtime stage
/// installs, and it starts and answers `/healthz` from a folder holding only what the Dockerfile copies,
/// with the Dockerfile's environment.
@Suite(.offThePool, .serialized) struct DockerRuntimeStageTests {
    static let root = ConfigurationLoaderTests.packageRoot

    static var dockerfile: String {
        get throws { try String(contentsOf: root.appendingPathComponent("Dockerfile"), encoding: .utf8) }
    }

    /// The release binary, built like the Dockerfile's build stage (its own scratch folder, so it never
    /// contends with the build running these tests).
    static func releaseBinary() async throws -> String {
        let swift =
            ["/opt/swift/usr/bin/swift", "/usr/bin/swift"].first { FileManager.default.isExecutableFile(atPath: $0) }
            ?? ProcessInfo.processInfo.environment["PATH"].flatMap { path in
                path.split(separator: ":").map { "\($0)/swift" }.first {
                    FileManager.default.isExecutableFile(atPath: $0)
                }
            }
        guard let swift else { throw TestFailure("no swift executable on PATH") }
        let arguments = [
            "build", "-c", "release", "--static-swift-stdlib", "--product", "reactor-server",
            "--package-path", root.path, "--scratch-path", root.appendingPathComponent(".build-release").path,
        ]
        // At the lowest priority: this build runs alongside the other tests, which must not starve.
        // A release build on a busy two-core machine takes minutes; an hour means it hangs.
        let build = try await TestProcess.run("/usr/bin/nice", ["-n", "19", swift] + arguments, within: .seconds(3600))
        guard build.termination == .exited(0) else {
            throw TestFailure(
                "release build failed (a static FoundationNetworking needs libcurl4-openssl-dev): "
                    + "\(build.output.suffix(2000)) \(build.error.suffix(2000))"
            )
        }
        let path = try await TestProcess.run(swift, arguments + ["--show-bin-path"], within: .seconds(600)).output
            .trimmingCharacters(in: .whitespacesAndNewlines)
        return path + "/reactor-server"
    }

    /// `ARG RUNTIME_LIBRARIES="…"` of the runtime stage.
    static func runtimeLibraries(_ dockerfile: String) throws -> Set<String> {
        let line = try #require(dockerfile.split(separator: "\n").first { $0.hasPrefix("ARG RUNTIME_LIBRARIES=") })
        return Set(
            line.split(separator: "=", maxSplits: 1)[1].trimmingCharacters(in: CharacterSet(charactersIn: "\"")).split(
                separator: " "
            ).map(String.init))
    }

    /// The Debian package that ships a shared library with this file name.
    static func package(of library: String) async throws -> String {
        let result = try await TestProcess.run("/usr/bin/dpkg", ["-S", "*/\(library)"])
        let owners = result.output.split(separator: "\n").compactMap { line -> String? in
            let parts = line.split(separator: ":", maxSplits: 1)
            // The native library: a multiarch folder or /lib64, never another architecture's copy
            // (libc6-i386's /lib32/libm.so.6 answers the same pattern when it is installed).
            guard parts.count == 2, parts[1].contains("-linux-gnu/") || parts[1].hasPrefix(" /lib64/") else {
                return nil
            }
            return parts[0].split(separator: ":").first.map(String.init)
        }
        return try #require(owners.first, "no package ships \(library): \(result.output) \(result.error)")
    }

    @Test func runtimeStageProvidesExactlyWhatTheReleaseBinaryNeeds() async throws {
        let binary = try await Self.releaseBinary()
        let readelf = try await TestProcess.run(TestProcess.tool("readelf"), ["-d", binary])
        try #require(readelf.termination == .exited(0), "readelf (binutils) is needed: \(readelf.error)")
        let needed = readelf.output.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("(NEEDED)"), let open = line.firstIndex(of: "["), let close = line.lastIndex(of: "]")
            else { return nil }
            return String(line[line.index(after: open)..<close])
        }
        #expect(
            !needed.contains {
                $0.hasPrefix("libswift") || $0.hasPrefix("libFoundation") || $0.hasPrefix("libdispatch")
            }, "the Swift runtime must be static: \(needed)")
        var packages: Set<String> = []
        for library in needed { packages.insert(try await Self.package(of: library)) }
        let provided = try Self.runtimeLibraries(Self.dockerfile).union(["libc6"])
        #expect(
            packages == provided,
            "NEEDED \(needed) come from \(packages.sorted()); the runtime stage provides \(provided.sorted())")
    }

    @Test func startsFromOnlyWhatTheDockerfileCopiesWithItsEnvironment() async throws {
        let dockerfile = try Self.dockerfile
        #expect(dockerfile.contains("COPY --from=build /reactor-server /app/reactor-server"))
        #expect(dockerfile.contains("COPY Config /app/Config"))
        #expect(dockerfile.contains("USER reactor"))
        #expect(dockerfile.contains("EXPOSE 8080"))
        #expect(dockerfile.contains("HEALTHCHECK"))
        #expect(dockerfile.contains("/healthz"))
        #expect(dockerfile.contains("swift build -c release --static-swift-stdlib"))

        // The image's /app and /data, as a temporary folder holding only the binary and Config/.
        let binary = try await Self.releaseBinary()
        try await withTemporaryDirectory("reactor-app") { folder in
            let app = URL(fileURLWithPath: folder)
            try FileManager.default.createDirectory(
                at: app.appendingPathComponent("data"), withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: binary, toPath: app.appendingPathComponent("reactor-server").path)
            try FileManager.default.copyItem(
                at: Self.root.appendingPathComponent("Config"), to: app.appendingPathComponent("Config"))

            // ENV KEY=VALUE lines of the runtime stage, with /app and /data mapped into the folder.
            var environment: [String: String] = ["REACTOR_ADMIN_TOKEN": "container-admin-token"]
            let envBlock = try #require(
                dockerfile.components(separatedBy: "\nENV ").dropFirst().first?.components(separatedBy: "\n").prefix {
                    !$0.isEmpty && !$0.hasPrefix("VOLUME")
                })
            for line in envBlock {
                let pair = line.trimmingCharacters(in: CharacterSet(charactersIn: " \\"))
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                guard parts.count == 2 else { continue }
                environment[parts[0]] = parts[1].replacingOccurrences(of: "/app", with: app.path).replacingOccurrences(
                    of: "/data", with: app.appendingPathComponent("data").path)
            }
            #expect(environment["REACTOR_HTTP_HOST"] == "0.0.0.0")
            #expect(environment["REACTOR_CONFIG"] == app.appendingPathComponent("Config/server.json").path)

            let server = try await ServerProcess.start(
                app.appendingPathComponent("reactor-server").path, environment: environment, directory: app.path)
            #expect(server.standardError.contains("0.0.0.0:"), "listens on all interfaces inside the container")
            let client = try TestClient(port: server.port)
            let health = try client.request("GET", "/healthz")
            #expect(health.status == 200)
            #expect(health.text == #"{"status":"ok"}"# + "\n")
            #expect(try client.request("POST", "/sessions", body: #"{"reactor":"counter","id":"c"}"#).status == 201)
            #expect(try await server.stop() == .exited(0))
            let stored = try FileManager.default.contentsOfDirectory(atPath: app.appendingPathComponent("data").path)
            #expect(!stored.isEmpty, "sessions are persisted in the data volume")
        }
    }
}
