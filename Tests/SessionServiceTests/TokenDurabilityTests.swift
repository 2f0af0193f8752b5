import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// Token mode's access tokens are part of each session's stored data, with every backend: a session's
/// token opens it after a passivation and after a restart, a replaced token stays replaced, a forked
/// session has its own, and a deleted session's token is gone with it. Only hashes are stored.
@Suite(.offThePool) struct TokenDurabilityTests {
    static func bearer(_ token: String) -> [(String, String)] { [("Authorization", "Bearer \(token)")] }

    static func server(_ place: StoragePlace) throws -> TestServer {
        try TestServer(storage: place) { $0.auth.sessions = "token" }
    }

    /// The status of `GET /sessions/{id}` with `token`.
    static func status(_ server: TestServer, _ id: String, _ token: String) throws -> Int {
        try server.request("GET", "/sessions/\(id)", headers: bearer(token)).status
    }

    @Test(arguments: TestStorage.all)
    func tokensOutliveMemoryAndRestartsAndGoWithTheirSession(storage: TestStorage) async throws {
        try await storage.withPlace("tokens") { place in
            let kept: String
            let old: String
            let replaced: String
            let gone: String
            let branch: String
            do {
                let server = try Self.server(place)
                kept = try AccessModeTests.create(server, id: "kept").token
                old = try AccessModeTests.create(server, id: "replaced").token
                gone = try AccessModeTests.create(server, id: "deleted").token
                #expect(
                    try server.request(
                        "POST", "/sessions/kept/actions?wait=true", headers: Self.bearer(kept),
                        body: #"{"type":"increase"}"#
                    ).status == 200)

                // Replaced while the session is not in memory: it need not be loaded for it.
                #expect(server.server.service.store.passivate(idleBefore: .max) >= 1)
                let replacement = try server.request("POST", "/admin/sessions/replaced/token", headers: server.admin)
                #expect(replacement.status == 200)
                replaced = try #require(try replacement.json()["token"] as? String)
                #expect(server.isResident("replaced") == false, "replacing a token loaded the session")
                let fork = try server.request(
                    "POST", "/admin/sessions/kept/fork", headers: server.admin, body: #"{"version":1,"id":"branch"}"#)
                #expect(fork.status == 201)
                branch = try #require(try fork.json()["token"] as? String)
                #expect(try server.request("DELETE", "/sessions/deleted", headers: Self.bearer(gone)).status == 204)

                // Out of memory (a fork leaves at once, like a new session): each session's own token, and only it.
                server.server.service.store.passivate(idleBefore: .max)
                #expect(server.server.service.store.residentCount == 0)
                #expect(try Self.status(server, "kept", kept) == 200)
                #expect(try Self.status(server, "replaced", old) == 401)
                #expect(try Self.status(server, "replaced", replaced) == 200)
                #expect(try Self.status(server, "branch", branch) == 200)
                #expect(try Self.status(server, "branch", kept) == 401)
                #expect(try Self.status(server, "deleted", gone) == 401)
            }

            // After a restart: the same, and a wrong token is refused without loading the session.
            let server = try Self.server(place)
            #expect(try Self.status(server, "kept", replaced) == 401)
            #expect(server.isResident("kept") == false, "checking a token loaded the session")
            let session = try server.request("GET", "/sessions/kept", headers: Self.bearer(kept))
            #expect(session.status == 200)
            #expect(try session.json()["version"] as? Int == 1)
            #expect(try Self.status(server, "replaced", old) == 401)
            #expect(try Self.status(server, "replaced", replaced) == 200)
            #expect(try Self.status(server, "branch", branch) == 200)
            #expect(try Self.status(server, "deleted", gone) == 401)
            // The deleted session's id, created again, has a new token; the old one does not open it.
            let again = try AccessModeTests.create(server, id: "deleted").token
            #expect(try Self.status(server, "deleted", gone) == 401)
            #expect(try Self.status(server, "deleted", again) == 200)

            // What is stored is a hash: no token's text is in the journal.
            if let directory = place.directory {
                try server.syncJournal()
                let journal = try DurabilityTests.segments(directory).reduce(Data()) {
                    $0 + (try Data(contentsOf: URL(fileURLWithPath: $1)))
                }
                for token in [kept, old, replaced, gone, branch, again] {
                    #expect(journal.range(of: Data(token.utf8)) == nil, "a token's text is in the journal")
                }
            }
        }
    }
}
