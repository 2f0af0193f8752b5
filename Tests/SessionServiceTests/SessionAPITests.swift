import Foundation
import JSONCodec
import ReactorServerTesting
import Testing

@testable import SessionService

/// Sessions, actions and errors of API.md over real sockets.
@Suite(.offThePool) struct SessionAPITests {
    @Test func reactorsAreListedWithInitialStateAndExampleActions() throws {
        let server = try TestServer()
        let response = try server.request("GET", "/reactors")
        #expect(response.status == 200)
        #expect(response.header("Content-Type") == "application/json; charset=utf-8")
        let reactors = try #require(try response.json()["reactors"] as? [[String: Any]])
        #expect(reactors.map { $0["name"] as? String } == ["counter", "fruit", "profile", "todo", "reminders"])
        let counter = try #require(reactors.first)
        #expect((counter["initialState"] as? [String: Any])?["value"] as? Int == 0)
        #expect((counter["actions"] as? [[String: Any]])?.first?["type"] as? String == "increase")
    }

    @Test func createGetDeleteSession() throws {
        let server = try TestServer()
        let created = try server.request("POST", "/sessions", body: #"{"reactor":"counter"}"#)
        #expect(created.status == 201)
        let body = try created.json()
        let id = try #require(body["id"] as? String)
        #expect(id.count == 22, "128 random bits in base64url")
        #expect(created.header("Location") == "/sessions/\(id)")
        #expect(body["reactor"] as? String == "counter")
        #expect(body["version"] as? Int == 0)
        #expect((body["state"] as? [String: Any])?["value"] as? Int == 0)

        let fetched = try server.request("GET", "/sessions/\(id)")
        #expect(fetched.status == 200)
        #expect(try fetched.json()["id"] as? String == id)

        #expect(try server.request("DELETE", "/sessions/\(id)").status == 204)
        let gone = try server.request("GET", "/sessions/\(id)")
        #expect(gone.status == 404)
        #expect(gone.errorCode == "unknown_session")
        #expect(try server.request("DELETE", "/sessions/\(id)").errorCode == "unknown_session")
    }

    @Test func clientChosenIDsAreValidatedAndUnique() throws {
        let server = try TestServer()
        let created = try server.request("POST", "/sessions", body: #"{"reactor":"counter","id":"my-session_1"}"#)
        #expect(created.status == 201)
        #expect(created.header("Location") == "/sessions/my-session_1")
        let taken = try server.request("POST", "/sessions", body: #"{"reactor":"todo","id":"my-session_1"}"#)
        #expect(taken.status == 409)
        #expect(taken.errorCode == "session_exists")
        for bad in ["has space", "", String(repeating: "a", count: 65), "slash/y", "é"] {
            let response = try server.request(
                "POST", "/sessions", body: #"{"reactor":"counter","id":\#(JSONWriter.quoted(bad))}"#)
            #expect(response.status == 400, "id \(bad.debugDescription)")
            #expect(response.errorCode == "invalid_id")
        }
        #expect(
            try server.request("POST", "/sessions", body: #"{"reactor":"counter","id":7}"#).errorCode == "invalid_id")
        #expect(
            try server.request(
                "POST", "/sessions", body: #"{"reactor":"counter","id":"\#(String(repeating: "a", count: 64))"}"#
            ).status == 201)
    }

    @Test func createSessionErrors() throws {
        let server = try TestServer { $0.sessions.limit = 2 }
        let unknown = try server.request("POST", "/sessions", body: #"{"reactor":"nope"}"#)
        #expect(unknown.status == 404)
        #expect(unknown.errorCode == "unknown_reactor")
        #expect(unknown.errorMessage?.contains("counter") == true, "names what exists")
        #expect(try server.request("POST", "/sessions", body: #"{"reactor":"#).errorCode == "invalid_json")
        #expect(try server.request("POST", "/sessions", body: #"{}"#).errorCode == "invalid_request")
        #expect(try server.request("POST", "/sessions", body: #"[1]"#).errorCode == "invalid_request")
        let form = try server.request(
            "POST", "/sessions", headers: [("Content-Type", "application/x-www-form-urlencoded")],
            body: "reactor=counter")
        #expect(form.status == 415)
        _ = try server.createSession("counter")
        _ = try server.createSession("counter")
        let full = try server.request("POST", "/sessions", body: #"{"reactor":"counter"}"#)
        #expect(full.status == 503)
        #expect(full.errorCode == "too_many_sessions")
    }

    @Test func actionsAreNumberedAndWaitReturnsTheReducedState() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        let connection = try server.connect()
        for expected in 1...3 {
            let accepted = try connection.request("POST", "/sessions/\(id)/actions", body: #"{"type":"increase"}"#)
            #expect(accepted.status == 202)
            #expect(try accepted.json()["seq"] as? Int == expected)
        }
        let waited = try connection.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type": "decrease"}"#)
        #expect(waited.status == 200)
        let body = try waited.json()
        #expect(body["seq"] as? Int == 4)
        #expect(body["version"] as? Int == 4)
        #expect((body["state"] as? [String: Any])?["value"] as? Int == 2)
        let session = try server.request("GET", "/sessions/\(id)").json()
        #expect(session["version"] as? Int == 4)
    }

    @Test func actionErrorsNameTheProblem() throws {
        let server = try TestServer { $0.http.maxBodyBytes = 256 }
        let id = try server.createSession("todo")
        let notJSON = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"#)
        #expect(notJSON.status == 400)
        #expect(notJSON.errorCode == "invalid_json")
        let noType = try server.request("POST", "/sessions/\(id)/actions", body: #"{"title":"x"}"#)
        #expect(noType.status == 422)
        #expect(noType.errorCode == "unknown_action")
        let unknownType = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"fly"}"#)
        #expect(unknownType.status == 422)
        #expect(unknownType.errorCode == "unknown_action")
        #expect(unknownType.errorMessage?.contains("fly") == true)
        let badPayload = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"add","title":5}"#)
        #expect(badPayload.status == 422)
        #expect(badPayload.errorCode == "invalid_action")
        #expect(badPayload.errorMessage?.contains("title") == true)
        for outside in ["-9223372036854775809", "9223372036854775808", "1e19", "9007199254740993.0"] {
            let rounded = try server.request(
                "POST", "/sessions/\(id)/actions", body: #"{"type":"toggle","id":\#(outside)}"#)
            #expect(rounded.status == 422, "\(outside)")
            #expect(rounded.errorCode == "invalid_action")
            #expect(rounded.errorMessage?.contains(#""id""#) == true)
        }
        let missing = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"toggle"}"#)
        #expect(missing.errorCode == "invalid_action")
        #expect(missing.errorMessage?.contains("id") == true)
        let unknownSession = try server.request("POST", "/sessions/nope/actions", body: #"{"type":"add","title":"x"}"#)
        #expect(unknownSession.status == 404)
        #expect(unknownSession.errorCode == "unknown_session")
        let text = try server.request(
            "POST", "/sessions/\(id)/actions", headers: [("Content-Type", "text/plain")],
            body: #"{"type":"clearCompleted"}"#)
        #expect(text.status == 415)
        let large = try server.request(
            "POST", "/sessions/\(id)/actions", body: #"{"type":"add","title":"\#(String(repeating: "x", count: 400))"}"#
        )
        #expect(large.status == 413)
        #expect(large.errorCode == "body_too_large")
        let badWait = try server.request(
            "POST", "/sessions/\(id)/actions?wait=maybe", body: #"{"type":"clearCompleted"}"#)
        #expect(badWait.errorCode == "invalid_query")
        // None of that touched the session.
        #expect(try server.request("GET", "/sessions/\(id)").json()["version"] as? Int == 0)
    }

    @Test func waitTimesOutWith504WhileTheEffectKeepsRunning() async throws {
        // 250 ms: the fruit's 500 ms delay, on the same clock, is still running when the wait ends.
        let server = try TestServer { $0.sessions.waitTimeoutSeconds = 0.25 }
        let id = try server.createSession("fruit")
        let connection = try server.connect()
        try connection.send(
            "POST /sessions/\(id)/actions?wait=true HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
                + "Content-Length: 16\r\n\r\n{\"type\":\"apple\"}"
        )
        try await server.clock.scheduled.next("the wait's deadline to be armed") { $0 == .milliseconds(250) }
        await server.clock.advance(by: .milliseconds(250))
        let response = try connection.readResponse()
        #expect(response.status == 504)
        #expect(response.errorCode == "timeout")
        #expect(response.errorMessage?.contains("action 1") == true)
        let session = try server.request("GET", "/sessions/\(id)").json()
        #expect((session["state"] as? [String: Any])?["isLoading"] as? Bool == true)
        #expect((session["state"] as? [String: Any])?["fruitName"] as? String == "", "the effect's delay has not ended")
    }

    @Test func unknownRoutesAndMethods() throws {
        let server = try TestServer()
        let missing = try server.request("GET", "/nothing/here")
        #expect(missing.status == 404)
        #expect(missing.errorCode == "not_found")
        let wrongMethod = try server.request("PUT", "/sessions")
        #expect(wrongMethod.status == 405)
        #expect(wrongMethod.errorCode == "method_not_allowed")
        #expect(wrongMethod.header("Allow")?.contains("POST") == true)
    }

    @Test func healthMetricsAndPage() throws {
        let server = try TestServer()
        let health = try server.request("GET", "/healthz")
        #expect(health.status == 200)
        #expect(health.text == #"{"status":"ok"}"# + "\n")
        let id = try server.createSession("counter")
        _ = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
        let metrics = try server.request("GET", "/metrics")
        #expect(metrics.status == 200)
        #expect(metrics.header("Content-Type")?.hasPrefix("text/plain") == true)
        #expect(
            metrics.text.contains(#"reactor_http_requests_total{route="POST /sessions/{id}/actions",status="200"} 1"#))
        #expect(metrics.text.contains("reactor_sessions 1\n"))
        #expect(metrics.text.contains("reactor_actions_accepted_total 1\n"))
        #expect(metrics.text.contains("reactor_states_emitted_total 1\n"))
        #expect(metrics.text.contains(#"reactor_reduce_seconds_count{reactor="counter"} 1"# + "\n"))
        let page = try server.request("GET", "/")
        #expect(page.status == 200)
        #expect(page.header("Content-Type") == "text/html; charset=utf-8")
        #expect(page.text.contains("EventSource"))
    }

    @Test func idleSessionsExpireAfterTheTTL() async throws {
        let server = try TestServer { $0.sessions.idleTTLSeconds = 60 }
        let idle = try server.createSession("counter")
        let busy = try server.createSession("counter")
        await server.clock.advance(by: .seconds(45))
        _ = try server.request("GET", "/sessions/\(busy)")
        await server.clock.advance(by: .seconds(30))
        #expect(try server.request("GET", "/sessions/\(idle)").status == 404)
        #expect(try server.request("GET", "/sessions/\(busy)").status == 200)
    }
}

@Suite(.offThePool) struct AccessLogTests {
    @Test func accessLogWritesOneLinePerRequestWithoutSecrets() throws {
        let server = try TestServer { $0.log.accessLog = true }
        let id = try server.createSession("counter")
        _ = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"increase"}"#)
        _ = try server.request("GET", "/admin/sessions", headers: server.admin)
        _ = try server.request("GET", "/nowhere")
        let lines = server.logs.values.filter { $0.message == "request" }
        let summary = lines.map { record in
            record.fields.filter { ["method", "route", "status"].contains($0.key) }.map { "\($0.value)" }.joined(
                separator: " ")
        }
        #expect(
            summary == [
                "POST POST /sessions 201", "POST POST /sessions/{id}/actions 202", "GET GET /admin/sessions 200",
                "GET unmatched 404",
            ])
        #expect(lines.allSatisfy { $0.fields.contains { $0.key == "micros" } })
        #expect(
            !server.logs.values.contains { record in
                record.fields.contains { "\($0.value)".contains(TestServer.adminToken) }
                    || record.message.contains(TestServer.adminToken)
            })
    }
}
