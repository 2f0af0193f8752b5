import Foundation
import ReactorServerTesting
import Reactors
import SessionService
import Testing

/// A counter whose state is a string: what the example counter cannot read (an unmigratable change).
struct TextCounter: Reactor {
    enum Action: Codable, Sendable { case increase }
    struct State: Codable, Sendable { var value = "zero" }
    let initialState = State()
}

/// The file journal's folder as names and sizes: what a reader must leave as it found it.
private func listing(_ directory: String) throws -> [String: Int] {
    var sizes: [String: Int] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
        let attributes = try FileManager.default.attributesOfItem(atPath: directory + "/" + name)
        sizes[name] = (attributes[.size] as? NSNumber)?.intValue ?? -1
    }
    return sizes
}

/// `reactor-server verify` as an operator runs it: the built executable, the server's own flags.
@Suite struct VerifyCommandTests {
    static let admin = ["REACTOR_ADMIN_TOKEN": TestServer.adminToken]

    @Test(arguments: TestStorage.all)
    func verifyBesideARunningServerReadsEverythingAndDisturbsNothing(storage: TestStorage) async throws {
        try await storage.withPlace("verify-live") { place in
            let server = try await ServerProcess.start(arguments: place.arguments, environment: Self.admin)
            defer { server.process.signal(SIGKILL) }
            let client = try server.client()
            for id in ["a", "b", "c"] {
                #expect(
                    try client.request("POST", "/sessions", body: #"{"reactor":"counter","id":"\#(id)"}"#).status == 201
                )
            }
            for _ in 0..<3 {
                #expect(
                    try client.request("POST", "/sessions/a/actions?wait=true", body: #"{"type":"increase"}"#).status
                        == 200)
            }
            #expect(try client.request("POST", "/sessions", body: #"{"reactor":"todo","id":"t"}"#).status == 201)
            let before = try place.directory.map(listing)

            let verify = try await TestProcess.run(
                try TestProcess.builtExecutable(), ["verify"] + place.arguments, environment: Self.admin)
            #expect(verify.termination == .exited(0), "\(verify.output)\(verify.error)")
            #expect(verify.output.contains("checked 4 stored sessions"), "\(verify.output)")
            #expect(
                verify.output.contains(
                    "counter (storage version 1): 3 load as stored, 0 load after migration, 0 would not load"))
            #expect(verify.output.contains("todo (storage version 1): 1 load as stored"))
            #expect(verify.output.contains("total: 4 load as stored, 0 load after migration, 0 would not load"))
            #expect(!verify.output.contains("listening"))

            // Nothing of the folder changed (no file made, cut or written; the server's LOCK untouched)…
            if let directory = place.directory { #expect(try listing(directory) == before) }
            // …and the server goes on as before, and again after a restart.
            let next = try client.request("POST", "/sessions/a/actions?wait=true", body: #"{"type":"increase"}"#)
            #expect(try next.json()["version"] as? Int == 4)
            #expect(try await server.stop() == .exited(0))
            let again = try await ServerProcess.start(arguments: place.arguments, environment: Self.admin)
            defer { again.process.signal(SIGKILL) }
            try await eventually("session a served after the restart", within: .seconds(30)) {
                try again.client().request("GET", "/sessions/a").status == 200
            }
            #expect(try again.client().request("GET", "/sessions/a").json()["version"] as? Int == 4)
        }
    }

    @Test(arguments: TestStorage.all)
    func anUnreadableSessionFailsVerifyAndIs409OnTheServerWhichKeepsServing(storage: TestStorage) async throws {
        try await storage.withPlace("verify-broken") { place in
            do {
                // Stored by another "counter" whose state the example counter cannot read.
                let writer = try TestServer(storage: place, catalog: { $0.register("counter") { TextCounter() } })
                _ = try writer.createSession("counter", id: "text")
            }
            do {
                let fine = try TestServer(storage: place)
                _ = try fine.createSession("counter", id: "number")
            }
            let verify = try await TestProcess.run(
                try TestProcess.builtExecutable(), ["verify"] + place.arguments, environment: Self.admin)
            #expect(verify.termination == .exited(1), "\(verify.output)\(verify.error)")
            #expect(
                verify.output.contains(
                    "counter (storage version 1): 1 load as stored, 0 load after migration, 1 would not load"))
            #expect(
                verify.output.contains(
                    #"would not load text: its snapshot at version 0 does not decode with reactor "counter""#))

            let server = try await ServerProcess.start(arguments: place.arguments, environment: Self.admin)
            defer { server.process.signal(SIGKILL) }
            let client = try server.client()
            let answer = try client.request("GET", "/sessions/text")
            #expect(answer.status == 409)
            #expect(answer.text.contains("session_unavailable"))
            #expect(try client.request("POST", "/sessions/text/actions", body: #"{"type":"increase"}"#).status == 409)
            #expect(
                try client.request("POST", "/sessions/number/actions?wait=true", body: #"{"type":"increase"}"#).status
                    == 200)
            #expect(try client.request("GET", "/healthz").status == 200)
            try await eventually("the failure counted on /metrics") {
                try client.request("GET", "/metrics").text.contains(
                    #"reactor_session_load_failures_total{reactor="counter"} 1"#)
            }
            #expect(server.process.isRunning)
            #expect(try await server.stop() == .exited(0))
        }
    }
}
