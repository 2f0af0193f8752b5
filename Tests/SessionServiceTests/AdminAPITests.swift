import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// Admin endpoints, auth and CORS over real sockets (the OpenAPI document: `OpenAPIDocumentTests`).
@Suite(.offThePool) struct AdminAPITests {
    @Test(arguments: [
        nil, "Bearer wrong", "Bearer \(TestServer.adminToken.dropLast())", "Bearer \(TestServer.adminToken)x",
        "Bearer \(TestServer.adminToken.dropLast())X", "Basic \(TestServer.adminToken)", "\(TestServer.adminToken)",
    ])
    func adminNeedsTheExactToken(authorization: String?) throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        let headers = authorization.map { [("Authorization", $0)] } ?? []
        for (method, path, body) in [
            ("GET", "/admin/sessions", nil), ("GET", "/admin/sessions/\(id)/actions", nil),
            ("PUT", "/admin/sessions/\(id)/stub", #"{"enabled":true}"#),
            ("PUT", "/admin/sessions/\(id)/state", #"{"value":1}"#),
        ] {
            let response = try server.request(method, path, headers: headers, body: body)
            #expect(response.status == 401, "\(method) \(path)")
            #expect(response.errorCode == "unauthorized")
            #expect(response.header("WWW-Authenticate")?.hasPrefix("Bearer") == true)
        }
        #expect(
            try server.request(
                "GET", "/admin/sessions", headers: [("Authorization", "bearer \(TestServer.adminToken)")]
            ).status == 200)
    }

    @Test func sessionListingShowsVersionsSubscribersAndStub() throws {
        let server = try TestServer()
        let id = try server.createSession("counter", id: "a")
        _ = try server.createSession("todo", id: "b")
        _ = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
        let stream = try server.subscribe("/sessions/a/events?select=/value")
        _ = try stream.nextEvent()
        let listing = try server.request("GET", "/admin/sessions", headers: server.admin).json()
        let sessions = try #require(listing["sessions"] as? [[String: Any]])
        #expect(sessions.map { $0["id"] as? String } == ["a", "b"])
        #expect(sessions[0]["reactor"] as? String == "counter")
        #expect(sessions[0]["version"] as? Int == 1)
        #expect(sessions[0]["subscribers"] as? Int == 1)
        #expect(sessions[0]["stub"] as? Bool == false)
        let details = try #require(sessions[0]["subscriberDetails"] as? [[String: Any]])
        #expect(details.first?["lastEventId"] as? Int == 1)
        #expect(details.first?["select"] as? String == "/value")
        #expect(details.first?["drops"] as? Int == 0)
        #expect(sessions[1]["subscribers"] as? Int == 0)
    }

    @Test func actionLogPagesOldestFirst() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        for index in 0..<5 {
            _ = try server.request(
                "POST", "/sessions/\(id)/actions",
                body: index % 2 == 0 ? #"{"type":"increase"}"# : #"{ "type" : "decrease" }"#)
        }
        let all = try server.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).json()
        let actions = try #require(all["actions"] as? [[String: Any]])
        #expect(actions.map { $0["seq"] as? Int } == [1, 2, 3, 4, 5])
        #expect((actions[1]["action"] as? [String: Any])?["type"] as? String == "decrease")
        #expect(actions[0]["stubbed"] as? Bool == false)
        let at = try #require(actions[0]["at"] as? String)
        #expect(at.hasSuffix("Z") && at.count == 24, "RFC 3339 UTC: \(at)")
        #expect(all["next"] == nil)
        let page = try server.request("GET", "/admin/sessions/\(id)/actions?since=1&limit=2", headers: server.admin)
            .json()
        #expect((page["actions"] as? [[String: Any]])?.map { $0["seq"] as? Int } == [2, 3])
        #expect(page["next"] as? Int == 3)
        let rest = try server.request("GET", "/admin/sessions/\(id)/actions?since=3", headers: server.admin).json()
        #expect((rest["actions"] as? [[String: Any]])?.map { $0["seq"] as? Int } == [4, 5])
        #expect(
            try server.request("GET", "/admin/sessions/\(id)/actions?limit=0", headers: server.admin).errorCode
                == "invalid_query")
        #expect(
            try server.request("GET", "/admin/sessions/\(id)/actions?since=x", headers: server.admin).errorCode
                == "invalid_query")
        #expect(
            try server.request("GET", "/admin/sessions/nope/actions", headers: server.admin).errorCode
                == "unknown_session")
    }

    @Test func stubModeRecordsActionsAndForcesStates() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        _ = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
        let stream = try server.subscribe("/sessions/\(id)/events")
        #expect(try stream.nextEvent().id == "1")

        let disabled = try server.request(
            "PUT", "/admin/sessions/\(id)/state", headers: server.admin, body: #"{"value":9}"#)
        #expect(disabled.status == 409)
        #expect(disabled.errorCode == "stub_disabled")

        let on = try server.request(
            "PUT", "/admin/sessions/\(id)/stub", headers: server.admin, body: #"{"enabled":true}"#)
        #expect(on.status == 200)
        #expect(on.text == #"{"stub":true}"# + "\n")
        let stubbed = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
        #expect(stubbed.status == 200)
        #expect(try stubbed.json()["version"] as? Int == 1, "neither mutate nor reduce ran")

        let forced = try server.request(
            "PUT", "/admin/sessions/\(id)/state", headers: server.admin, body: #"{"value":42}"#)
        #expect(forced.status == 200)
        #expect(try forced.json()["version"] as? Int == 2)
        let event = try stream.nextEvent()
        #expect(event.id == "2")
        #expect(event.data == #"{"value":42}"#)
        let again = try server.request(
            "PUT", "/admin/sessions/\(id)/state", headers: server.admin, body: #"{"value":42}"#)
        #expect(try again.json()["version"] as? Int == 3, "an equal forced state is still a new version")
        #expect(try stream.nextEvent().id == "3")

        let invalid = try server.request(
            "PUT", "/admin/sessions/\(id)/state", headers: server.admin, body: #"{"value":"x"}"#)
        #expect(invalid.status == 422)
        #expect(invalid.errorCode == "invalid_state")
        #expect(invalid.errorMessage?.contains("value") == true)
        #expect(
            try server.request("PUT", "/admin/sessions/\(id)/stub", headers: server.admin, body: #"{"enabled":"yes"}"#)
                .status == 422)

        let log = try server.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).json()
        #expect((log["actions"] as? [[String: Any]])?.map { $0["stubbed"] as? Bool } == [false, true])

        #expect(
            try server.request("PUT", "/admin/sessions/\(id)/stub", headers: server.admin, body: #"{"enabled":false}"#)
                .text == #"{"stub":false}"# + "\n")
        let live = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#).json()
        #expect((live["state"] as? [String: Any])?["value"] as? Int == 43, "the forced state is kept")
    }

    @Test func corsPreflightAndHeaders() throws {
        let server = try TestServer { $0.cors.allowedOrigins = ["https://app.example"] }
        let preflight = try server.request(
            "OPTIONS", "/sessions/x/actions",
            headers: [
                ("Origin", "https://app.example"), ("Access-Control-Request-Method", "POST"),
                ("Access-Control-Request-Headers", "content-type"),
            ])
        #expect(preflight.status == 204)
        #expect(preflight.header("Access-Control-Allow-Origin") == "https://app.example")
        #expect(preflight.header("Access-Control-Allow-Methods")?.contains("POST") == true)
        #expect(preflight.header("Access-Control-Allow-Headers")?.lowercased().contains("content-type") == true)
        let denied = try server.request(
            "OPTIONS", "/sessions",
            headers: [("Origin", "https://evil.example"), ("Access-Control-Request-Method", "POST")])
        #expect(denied.status == 403)
        #expect(denied.header("Access-Control-Allow-Origin") == nil)
        let created = try server.request(
            "POST", "/sessions", headers: [("Origin", "https://app.example")], body: #"{"reactor":"counter"}"#)
        #expect(created.header("Access-Control-Allow-Origin") == "https://app.example")
        #expect(
            try server.request("GET", "/healthz", headers: [("Origin", "https://evil.example")]).header(
                "Access-Control-Allow-Origin") == nil)
        let id = try created.json()["id"] as! String
        let stream = try server.subscribe("/sessions/\(id)/events", headers: [("Origin", "https://app.example")])
        #expect(try stream.nextEvent().id == "0")
    }
}
