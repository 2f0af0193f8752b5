import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// A query parameter meant to be given once, given twice: the same value twice reads as once, different values
/// are refused with the parameter's own error, never read as the first of them (schemathesis's fuzzing found
/// `delta` taken that way; every single-valued parameter is held to it here).
@Suite(.offThePool) struct RepeatedQueryParameterTests {
    typealias Multiplexed = MultiplexedEventStreamTests

    /// `response` is a 400 (or `status`) with `code`, and its message names `parameter` as given twice.
    static func refused(
        _ response: TestResponse, _ code: String, _ parameter: String, status: Int = 400,
        _ sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
        #expect(response.status == status, "\(response.text)", sourceLocation: sourceLocation)
        #expect(response.errorCode == code, "\(response.text)", sourceLocation: sourceLocation)
        #expect(
            response.errorMessage?.contains("\(parameter) is given 2 times with different") == true,
            "\(response.text)", sourceLocation: sourceLocation)
    }

    @Test func waitGivenTwiceDifferentlyIsRefusedAndTheActionNotApplied() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        let increase = #"{"type":"increase"}"#
        try Self.refused(
            server.request("POST", "/sessions/\(id)/actions?wait=true&wait=false", body: increase),
            "invalid_query", "wait")
        #expect(try server.request("GET", "/sessions/\(id)").json()["version"] as? Int == 0, "nothing applied")
        let same = try server.request("POST", "/sessions/\(id)/actions?wait=true&wait=true", body: increase)
        #expect(try same.status == 200 && same.json()["version"] as? Int == 1, "\(same.text)")
    }

    @Test func theAdminListsScopeSinceAndLimitGivenTwiceDifferentlyAreRefused() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        try Self.refused(
            server.request("GET", "/admin/sessions?scope=local&scope=all", headers: server.admin), "invalid_query",
            "scope")
        #expect(
            try server.request("GET", "/admin/sessions?scope=local&scope=local", headers: server.admin).status == 200)
        for query in ["since=0&since=5", "limit=1&limit=2"] {
            try Self.refused(
                server.request("GET", "/admin/sessions/\(id)/actions?\(query)", headers: server.admin),
                "invalid_query", String(query.prefix(while: { $0 != "=" })))
        }
        #expect(
            try server.request("GET", "/admin/sessions/\(id)/actions?limit=2&limit=2", headers: server.admin).status
                == 200)
    }

    @Test func theAPIDescriptionOfTwoDifferentReactorsIsRefused() throws {
        let server = try TestServer()
        try Self.refused(
            server.request("GET", "/openapi.json?reactor=counter&reactor=todo"), "invalid_query", "reactor")
        #expect(try server.request("GET", "/openapi.json?reactor=counter&reactor=counter").status == 200)
    }

    @Test func twoDifferentSessionListsOnOneStreamAreRefused() throws {
        let server = try TestServer()
        try server.createSession("counter", id: "a")
        try server.createSession("counter", id: "b")
        try Self.refused(server.request("GET", "/events?sessions=a&sessions=b"), "invalid_sessions", "sessions")
        let same = try server.subscribe("/events?sessions=a&sessions=a")
        #expect(try Multiplexed.next(1, on: same) == ["a: state 0"])
    }

    @Test func twoDifferentAccessTokensAreRefusedAndGrantNoPartOfAStream() throws {
        let server = try AccessModeTests.tokenServer()
        let (a, tokenA) = try AccessModeTests.create(server, id: "a")
        let (b, tokenB) = try AccessModeTests.create(server, id: "b")
        // The right token beside a wrong one is not a credential: 401, whichever comes first.
        for query in ["access_token=\(tokenA)&access_token=wrong", "access_token=wrong&access_token=\(tokenA)"] {
            let refused = try server.request("GET", "/sessions/\(a)?\(query)")
            try Self.refused(refused, "unauthorized", "access_token", status: 401)
            #expect(refused.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
            #expect(refused.errorMessage?.contains(tokenA) == false, "a token is never echoed")
        }
        #expect(try server.request("GET", "/sessions/\(a)?access_token=\(tokenA)&access_token=\(tokenA)").status == 200)
        // The header wins over the query, as it does for one access_token.
        #expect(
            try server.request(
                "GET", "/sessions/\(a)?access_token=x&access_token=y", headers: [("Authorization", "Bearer \(tokenA)")]
            ).status == 200)
        // Over one stream, token lists that differ grant no part (the request itself is not refused there).
        let stream = try server.subscribe(
            "/events?sessions=\(a),\(b)&access_token=\(tokenA),\(tokenB)&access_token=\(tokenA),wrong")
        #expect(try Multiplexed.next(2, on: stream) == ["a: end unauthorized", "b: end unauthorized"])
    }
}
