import Foundation
import ReactorServerTesting
import Reactors
import SessionService
import Testing

/// `"params"` of `POST /sessions` over real sockets: accepted and refused (422 `invalid_params`), shown by
/// `GET /sessions/{id}`, and durable with every backend: across a restart, a passivation and a fork.
@Suite(.offThePool) struct SessionParamsTests {
    static func state(_ response: TestResponse) throws -> [String: Any] {
        try #require(try response.json()["state"] as? [String: Any])
    }

    static func params(_ response: TestResponse) throws -> [String: Any]? {
        try response.json()["params"] as? [String: Any]
    }

    @Test func paramsAreAcceptedShownAndRefusedNamingTheField() throws {
        let server = try TestServer()
        let created = try server.request(
            "POST", "/sessions", body: #"{"reactor":"profile","id":"p7","params":{"userID":7}}"#)
        #expect(created.status == 201)
        #expect(try Self.params(created)?["userID"] as? Int == 7)
        #expect(try Self.state(created)["userID"] as? Int == 7)
        #expect(try Self.state(created)["isFollowing"] as? Bool == false)
        #expect(try Self.state(created)["isLoading"] as? Bool == false)
        let read = try server.request("GET", "/sessions/p7")
        #expect(try Self.params(read)?["userID"] as? Int == 7)

        let refusals: [(String, String)] = [
            (#"{"reactor":"profile","id":"r1"}"#, "userID"),
            (#"{"reactor":"profile","id":"r2","params":{}}"#, "userID"),
            (#"{"reactor":"profile","id":"r3","params":{"userID":"seven"}}"#, "userID"),
            (#"{"reactor":"profile","id":"r4","params":{"userID":0}}"#, "at least 1"),
            (#"{"reactor":"profile","id":"r5","params":[7]}"#, "must be a JSON object"),
            (#"{"reactor":"counter","id":"r6","params":{"start":3}}"#, "takes no parameters"),
        ]
        for (body, named) in refusals {
            let refused = try server.request("POST", "/sessions", body: body)
            #expect(refused.status == 422, "\(body)")
            #expect(refused.errorCode == "invalid_params", "\(body)")
            #expect(refused.errorMessage?.contains(named) == true, "\(body): \(refused.errorMessage ?? "")")
        }
        for id in ["r1", "r2", "r3", "r4", "r5", "r6"] {
            #expect(try server.request("GET", "/sessions/\(id)").status == 404, "a refused creation leaves no session")
        }
        // A reactor without parameters takes none, null or {}, and shows none.
        for (index, params) in ["", #","params":null"#, #","params":{}"#].enumerated() {
            let body = #"{"reactor":"counter","id":"c\#(index)"\#(params)}"#
            let counter = try server.request("POST", "/sessions", body: body)
            #expect(counter.status == 201)
            #expect(try counter.json()["params"] == nil)
        }
    }

    /// What `curl` a user would type gets the 422 and its message.
    @Test func curlSeesInvalidParams() async throws {
        let server = try TestServer()
        let result = try await TestProcess.run(
            TestProcess.tool("curl"),
            [
                "-s", "-w", "\n%{http_code}", "-H", "Content-Type: application/json",
                "-d", #"{"reactor":"profile","params":{"userID":-1}}"#, "http://127.0.0.1:\(server.port)/sessions",
            ])
        #expect(result.output.hasSuffix("\n422"), "\(result.output)")
        #expect(result.output.contains(#""code":"invalid_params""#))
        #expect(result.output.contains("userID"))
    }

    /// Follows user `userID` from a new profile session `id` and returns once the user service answered.
    static func follow(_ server: TestServer, id: String, userID: Int) async throws {
        let body = #"{"reactor":"profile","id":"\#(id)","params":{"userID":\#(userID)}}"#
        #expect(try server.request("POST", "/sessions", body: body).status == 201)
        #expect(try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"follow"}"#).status == 202)
        try await eventually("the user service to be asked") { server.clock.reactorClock.sleeperCount == 1 }
        await server.clock.advance(by: .milliseconds(300))
        try await eventually("\(id) to show the answer") {
            let state = try Self.state(server.request("GET", "/sessions/\(id)"))
            return state["isFollowing"] as? Bool == true && state["isLoading"] as? Bool == false
        }
    }

    /// Refreshes profile `id` and returns its state once the user service answered.
    static func refresh(_ server: TestServer, id: String) async throws -> [String: Any] {
        let before = try #require(try server.request("GET", "/sessions/\(id)").json()["version"] as? Int)
        let refresh = #"{"type":"refreshFollowingStatus"}"#
        #expect(try server.request("POST", "/sessions/\(id)/actions", body: refresh).status == 202)
        try await eventually("the user service to be asked") { server.clock.reactorClock.sleeperCount == 1 }
        await server.clock.advance(by: .milliseconds(300))
        var state: [String: Any] = [:]
        try await eventually("\(id) to show the refreshed answer") {
            let response = try server.request("GET", "/sessions/\(id)").json()
            state = response["state"] as? [String: Any] ?? [:]
            return (response["version"] as? Int ?? 0) >= before + 3
        }
        return state
    }

    /// The reactor loaded back has its parameters again: it asks the user service about its own user (which a
    /// new session of that user followed on this server) and shows it; its params are listed as before.
    @Test(arguments: TestStorage.all)
    func paramsSurviveARestartAPassivationAndAFork(storage: TestStorage) async throws {
        try await storage.withPlace("params") { place in
            do {
                let server = try TestServer(storage: place)
                let body = #"{"reactor":"profile","id":"kept","params":{"userID":7}}"#
                #expect(try server.request("POST", "/sessions", body: body).status == 201)
            }
            let server = try TestServer(storage: place)
            let loaded = try server.request("GET", "/sessions/kept")
            #expect(try Self.params(loaded)?["userID"] as? Int == 7)
            #expect(try Self.state(loaded)["userID"] as? Int == 7)
            // This server's user service forgot everything: another session of user 7 follows, and the loaded
            // one's refresh must ask about user 7 to see it.
            try await Self.follow(server, id: "other", userID: 7)
            #expect(try await Self.refresh(server, id: "kept")["isFollowing"] as? Bool == true)

            // Passivated, loaded back by the next request: still user 7 (a user-8 session's follow changes nothing).
            #expect(server.server.service.store.passivate(idleBefore: .max) >= 1)
            try await Self.follow(server, id: "eight", userID: 8)
            #expect(try Self.params(server.request("GET", "/sessions/kept"))?["userID"] as? Int == 7)
            #expect(try await Self.refresh(server, id: "kept")["isFollowing"] as? Bool == true)

            // A fork keeps them.
            let version = try #require(try server.request("GET", "/sessions/kept").json()["version"] as? Int)
            let forkBody = #"{"version":\#(version),"id":"copy"}"#
            let fork = try server.request("POST", "/admin/sessions/kept/fork", headers: server.admin, body: forkBody)
            #expect(fork.status == 201)
            #expect(try Self.params(fork)?["userID"] as? Int == 7)
            #expect(try Self.params(server.request("GET", "/sessions/copy"))?["userID"] as? Int == 7)
            let unfollow = try server.request("POST", "/sessions/other/actions", body: #"{"type":"unfollow"}"#)
            #expect(unfollow.status == 202)
            try await eventually("the user service to be asked") { server.clock.reactorClock.sleeperCount == 1 }
            await server.clock.advance(by: .milliseconds(300))
            #expect(try await Self.refresh(server, id: "copy")["isFollowing"] as? Bool == false)
        }
    }
}
