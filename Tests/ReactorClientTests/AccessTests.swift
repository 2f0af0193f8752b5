import Examples
import Foundation
import ReactorClient
import Testing

/// The credentials of API.md's access modes, as the requests carry them, on a scripted server that records them
/// (`AccessLiveTests` holds the same paths to the real server's access checks).
@Suite struct AccessTests {
    static let created = #"{"id":"a","reactor":"counter","version":0,"state":{"value":0},"token":"secret-a"}"#

    static func server() throws -> ScriptedServer {
        try ScriptedServer { _, request in
            switch request.target {
            case "/sessions": .status(201, json: Self.created)
            case "/sessions/a", "/sessions/b":
                .status(200, json: #"{"id":"a","reactor":"counter","version":0,"state":{"value":0}}"#)
            case "/sessions/a/actions", "/sessions/b/actions": .status(202, json: #"{"seq":1}"#)
            case "/admin/sessions/a/token": .status(200, json: #"{"token":"secret-a2"}"#)
            case let target where target.contains("/events"): .events([], close: false)
            default: .status(404, json: #"{"error":{"code":"not_found","message":"no route"}}"#)
            }
        }
    }

    @Test func aSessionsTokenGoesWithEveryRequestOnIt() async throws {
        let server = try Self.server()
        let client = ReactorClient(baseURL: server.baseURL)
        let session = try await client.createSession(reactor: "counter", as: CounterReactor.self)
        #expect(session.token == "secret-a")
        _ = try await session.get()
        try await session.send(.increase)
        let stream = SequenceRecorder(session.events())
        try await stream.wait("connected") { $0.count == 2 }
        let requests = server.log.value.requests
        #expect(
            requests.map(\.target) == [
                "/sessions", "/sessions/a", "/sessions/a/actions", "/sessions/a/events?delta=json-patch",
            ])
        #expect(
            requests.map { $0.headers["authorization"] } == [
                nil, "Bearer secret-a", "Bearer secret-a", "Bearer secret-a",
            ])
    }

    @Test func aJWTGoesWithEveryRequestThatHasNoTokenOfItsOwn() async throws {
        let server = try Self.server()
        let client = ReactorClient(baseURL: server.baseURL, bearerToken: "h.p.s")
        let created = try await client.createSession(reactor: "counter", as: CounterReactor.self)
        let other = client.session("b", as: CounterReactor.self)
        try await other.send(.increase)
        try await created.send(.increase)
        let requests = server.log.value.requests
        #expect(requests.map(\.target) == ["/sessions", "/sessions/b/actions", "/sessions/a/actions"])
        #expect(requests.map { $0.headers["authorization"] } == ["Bearer h.p.s", "Bearer h.p.s", "Bearer secret-a"])
    }

    @Test func streamsCanCarryTheCredentialAsAnAccessToken() async throws {
        let server = try Self.server()
        var configuration = ReactorClient.Configuration()
        configuration.streamCredentials = .accessTokenParameter
        let client = ReactorClient(baseURL: server.baseURL, bearerToken: "h.p.s", configuration: configuration)
        let withToken = SequenceRecorder(client.session("a", as: CounterReactor.self, token: "t+/=&?").events())
        try await withToken.wait("connected") { $0.count == 2 }
        let withJWT = SequenceRecorder(client.session("b", as: CounterReactor.self).events())
        try await withJWT.wait("connected") { $0.count == 2 }
        let requests = server.log.value.requests
        #expect(requests[0].target == "/sessions/a/events?delta=json-patch&access_token=t%2B%2F%3D%26%3F")
        #expect(requests[0].query("access_token") == "t+/=&?")
        #expect(requests[1].target == "/sessions/b/events?delta=json-patch&access_token=h.p.s")
        #expect(requests.allSatisfy { $0.headers["authorization"] == nil })
    }

    @Test func adminCallsCarryTheAdminTokenAndReplaceASessionsToken() async throws {
        let server = try Self.server()
        let client = ReactorClient(baseURL: server.baseURL, bearerToken: "h.p.s")
        let token = try await client.admin(token: "admin-secret").session("a", as: CounterReactor.self).replaceToken()
        #expect(token == "secret-a2")
        let request = try #require(server.log.value.requests.first)
        #expect(request.target == "/admin/sessions/a/token")
        #expect(request.headers["authorization"] == "Bearer admin-secret")
    }

    @Test func idsAreEscapedInPaths() async throws {
        let server = try Self.server()
        _ = try? await ReactorClient(baseURL: server.baseURL).session("a b/c", as: CounterReactor.self).get()
        #expect(server.log.value.requests.first?.target == "/sessions/a%20b%2Fc")
    }
}
