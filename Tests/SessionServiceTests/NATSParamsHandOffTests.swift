import Foundation
import ReactorServerTesting
import Testing

/// A session's parameters move with it: on the NATS backend, with real `reactor-server` processes, a profile
/// session handed from one live instance to another runs there with the same `userID`.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"),
    .serialized)
struct NATSParamsHandOffTests {
    @Test func paramsMoveWithTheSessionToAnotherInstance() async throws {
        try await NATSFailoverTests.withPair { a, b in
            let created = try a.client().request(
                "POST", "/sessions", body: #"{"reactor":"profile","id":"moving-profile","params":{"userID":7}}"#)
            #expect(created.status == 201, "a answered \(created.status) \(created.text)")

            // b gets a request for it while a runs it: a hands it over, b runs it with user 7.
            let moved = try b.client().request(
                "POST", "/sessions/moving-profile/actions?wait=true", body: #"{"type":"follow"}"#)
            #expect(moved.status == 200, "b answered \(moved.status) \(moved.text)")
            let state = try #require(try moved.json()["state"] as? [String: Any])
            #expect(state["userID"] as? Int == 7 && state["isFollowing"] as? Bool == true)
            let read = try b.client().request("GET", "/sessions/moving-profile").json()
            #expect((read["params"] as? [String: Any])?["userID"] as? Int == 7)

            // b's user service now follows user 7: a new profile of user 7 made on b sees it, so the moved
            // session's reactor asked about its own user.
            let other = try b.client().request(
                "POST", "/sessions", body: #"{"reactor":"profile","id":"seven-on-b","params":{"userID":7}}"#)
            #expect(other.status == 201)
            let refreshed = try b.client().request(
                "POST", "/sessions/seven-on-b/actions?wait=true", body: #"{"type":"refreshFollowingStatus"}"#)
            let after = try refreshed.json()["state"] as? [String: Any]
            #expect(after?["isFollowing"] as? Bool == true, "\(refreshed.text)")
        }
    }
}
