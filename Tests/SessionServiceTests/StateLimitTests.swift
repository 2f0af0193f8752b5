import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// `sessions.maxStateBytes`: what the server accepts it can always reload. States at and just under the
/// limit survive passivation and a restart; the action that would pass it fails and changes nothing; forced
/// states and forks are held to it; a limit lowered between restarts leaves old sessions loadable.
@Suite(.offThePool) struct StateLimitTests {
    static let limit = ServerConfiguration().sessions.maxStateBytes

    /// The todo state with two items whose titles are `a` and `b` x's long, as the server encodes it.
    static func todoJSON(a: Int, b: Int, firstDone: Bool, secondDone: Bool = false) -> String {
        #"{"items":[{"id":1,"title":""# + String(repeating: "x", count: a)
            + #"","done":\#(firstDone)},{"id":2,"title":""#
            + String(repeating: "x", count: b) + #"","done":\#(secondDone)}],"nextID":3,"alert":null}"#
    }

    static func add(_ length: Int) -> String {
        #"{"type":"add","title":""# + String(repeating: "x", count: length) + #""}"#
    }

    /// Creates todo session `id` whose state is exactly `size` bytes of JSON (item 1 done), in three actions.
    static func grow(_ server: TestServer, _ id: String, to size: Int) throws -> String {
        _ = try server.createSession("todo", id: id)
        let first = 520_000
        let second = size - todoJSON(a: first, b: 0, firstDone: true).utf8.count
        #expect(try server.request("POST", "/sessions/\(id)/actions", body: add(first)).status == 202)
        #expect(try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"toggle","id":1}"#).status == 202)
        let grown = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: add(second))
        #expect(grown.status == 200, "\(grown.errorMessage ?? "")")
        let expected = todoJSON(a: first, b: second, firstDone: true)
        #expect(expected.utf8.count == size)
        let body = try server.request("GET", "/sessions/\(id)").text
        #expect(body == #"{"id":"\#(id)","reactor":"todo","version":3,"state":"# + expected + "}\n")
        return body
    }

    @Test func statesAtAndJustUnderTheLimitSurvivePassivationAndARestart() throws {
        try withTemporaryDirectory("state-limit") { directory in
            var bodies: [String: String] = [:]
            do {
                let server = try TestServer(dataDirectory: directory)
                bodies["at"] = try Self.grow(server, "at", to: Self.limit)
                bodies["under"] = try Self.grow(server, "under", to: Self.limit - 1)
                #expect(server.server.service.store.passivate(idleBefore: .max) == 2)
                for (id, body) in bodies {
                    #expect(try server.request("GET", "/sessions/\(id)").text == body, "\(id) after passivation")
                }
            }
            let server = try TestServer(dataDirectory: directory)
            for (id, body) in bodies {
                #expect(try server.request("GET", "/sessions/\(id)").text == body, "\(id) after a restart")
            }
            // Still alive: the next action makes the next version.
            let next = try server.request(
                "POST", "/sessions/under/actions?wait=true", body: #"{"type":"toggle","id":2}"#)
            #expect(try next.json()["version"] as? Int == 4)
        }
    }

    @Test func theActionThatWouldPassTheLimitFailsAndChangesNothing() throws {
        try withTemporaryDirectory("state-limit") { directory in
            let before: String
            do {
                let server = try TestServer(dataDirectory: directory)
                before = try Self.grow(server, "edge", to: Self.limit)
                let stream = try server.subscribe("/sessions/edge/events")
                #expect(try stream.nextEvent().id == "3")

                // Un-toggling item 1 writes "false" for "true": one byte over.
                let refused = try server.request(
                    "POST", "/sessions/edge/actions?wait=true", body: #"{"type":"toggle","id":1}"#)
                #expect(refused.status == 422)
                #expect(refused.errorCode == "state_too_large")
                #expect(refused.errorMessage?.contains("\(Self.limit + 1) bytes") == true)
                #expect(refused.errorMessage?.contains("\(Self.limit) bytes (sessions.maxStateBytes)") == true)
                #expect(try server.request("GET", "/sessions/edge").text == before)

                // Without ?wait the action is accepted (202), and its failure is in its action-log entry and the log.
                let accepted = try server.request("POST", "/sessions/edge/actions", body: #"{"type":"toggle","id":1}"#)
                #expect(accepted.status == 202)
                let seq = try #require(try accepted.json()["seq"] as? Int)
                #expect(try server.request("GET", "/sessions/edge").text == before)
                let log = try server.request(
                    "GET", "/admin/sessions/edge/actions?since=\(seq - 1)", headers: server.admin
                ).json()
                let entry = try #require((log["actions"] as? [[String: Any]])?.first)
                #expect(entry["seq"] as? Int == seq)
                #expect((entry["error"] as? [String: Any])?["code"] as? String == "state_too_large")
                #expect(
                    server.logs.values.contains { record in
                        record.level == .warning && record.message.contains("refused")
                            && record.fields.contains { $0.key == "seq" && $0.value == .int(seq) }
                    })

                // Subscribers saw nothing of either: their next event is the next version made, by an action that fits.
                #expect(
                    try server.request("POST", "/sessions/edge/actions?wait=true", body: #"{"type":"toggle","id":2}"#)
                        .status == 200)
                let event = try stream.nextEvent()
                #expect(event.id == "4")
                #expect(event.data?.hasSuffix(#""done":true}],"nextID":3,"alert":null}"#) == true)
            }
            // The refusals left no journal record: the reload is at version 4, item 2 done.
            let server = try TestServer(dataDirectory: directory)
            let after = before.replacingOccurrences(of: #""version":3"#, with: #""version":4"#)
                .replacingOccurrences(of: #""done":false}],"nextID""#, with: #""done":true}],"nextID""#)
            #expect(try server.request("GET", "/sessions/edge").text == after)
        }
    }

    @Test func forcedStatesAndForksAreHeldToTheLimit() throws {
        try withTemporaryDirectory("state-limit") { directory in
            do {
                let server = try TestServer(dataDirectory: directory) { $0.sessions.maxStateBytes = 4096 }
                _ = try server.createSession("todo", id: "puppet")
                #expect(
                    try server.request(
                        "PUT", "/admin/sessions/puppet/stub", headers: server.admin, body: #"{"enabled":true}"#
                    ).status == 200)
                let forced = try server.request(
                    "PUT", "/admin/sessions/puppet/state", headers: server.admin,
                    body: Self.todoJSON(a: 2000, b: 2100, firstDone: false))
                #expect(forced.status == 422)
                #expect(forced.errorCode == "state_too_large")
                #expect(try server.request("GET", "/sessions/puppet").json()["version"] as? Int == 0)
                let fits = try server.request(
                    "PUT", "/admin/sessions/puppet/state", headers: server.admin,
                    body: Self.todoJSON(a: 2000, b: 1900, firstDone: false))
                #expect(fits.status == 200)
            }
            // Version 1 fits 4096 bytes; under a limit since lowered below it, a fork from it is refused.
            let server = try TestServer(dataDirectory: directory) { $0.sessions.maxStateBytes = 1024 }
            #expect(try server.request("GET", "/sessions/puppet").json()["version"] as? Int == 1)
            let fork = try server.request(
                "POST", "/admin/sessions/puppet/fork", headers: server.admin, body: #"{"version":1,"id":"copy"}"#)
            #expect(fork.status == 422)
            #expect(fork.errorCode == "state_too_large")
            #expect(
                try server.request(
                    "POST", "/admin/sessions/puppet/fork", headers: server.admin, body: #"{"version":0,"id":"copy"}"#
                ).status == 201)
        }
    }

    @Test func aLimitLoweredBetweenRestartsLeavesOldSessionsLoadableAndAbleToShrink() throws {
        try withTemporaryDirectory("state-limit") { directory in
            let body: String
            do {
                let server = try TestServer(dataDirectory: directory)
                body = try Self.grow(server, "old", to: Self.limit)
            }
            let server = try TestServer(dataDirectory: directory) { $0.sessions.maxStateBytes = 4096 }
            #expect(try server.request("GET", "/sessions/old").text == body)
            // Over the new limit it may not grow, but it may shrink.
            #expect(
                try server.request("POST", "/sessions/old/actions?wait=true", body: #"{"type":"add","title":"y"}"#)
                    .errorCode == "state_too_large")
            let shrunk = try server.request(
                "POST", "/sessions/old/actions?wait=true", body: #"{"type":"remove","id":1}"#)
            #expect(shrunk.status == 200)
            #expect(try shrunk.json()["version"] as? Int == 4)
        }
    }

    @Test func storedStatesAreReadBackWhateverTheirSize() throws {
        try withTemporaryDirectory("state-limit") { directory in
            let body: String
            do {
                let server = try TestServer(dataDirectory: directory) { $0.sessions.maxStateBytes = 2 << 20 }
                _ = try server.createSession("todo", id: "large")
                for _ in 0..<3 {
                    #expect(
                        try server.request("POST", "/sessions/large/actions", body: Self.add(500_000)).status == 202)
                }
                body = try server.request("GET", "/sessions/large").text
                #expect(body.utf8.count > 1_500_000)
                #expect(server.server.service.store.passivate(idleBefore: .max) == 1)
                #expect(try server.request("GET", "/sessions/large").text == body)
            }
            // Under the limit it was written with, and under a lower one.
            for limit in [2 << 20, 1 << 20] {
                let server = try TestServer(dataDirectory: directory) { $0.sessions.maxStateBytes = limit }
                #expect(try server.request("GET", "/sessions/large").text == body, "limit \(limit)")
            }
        }
    }

    @Test func aBodyTheHTTPLimitAcceptsIsNeverRefusedAsTooLargeJSON() throws {
        let server = try TestServer { $0.http.maxBodyBytes = 2 << 20 }
        let id = try server.createSession("counter")
        let padding = String(repeating: "p", count: 1_500_000)
        let action = try server.request(
            "POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase","padding":"\#(padding)"}"#)
        #expect(action.status == 200, "\(action.errorCode ?? "")")
        let created = try server.request("POST", "/sessions", body: #"{"reactor":"counter","padding":"\#(padding)"}"#)
        #expect(created.status == 201, "\(created.errorCode ?? "")")
        let over = try server.request(
            "POST", "/sessions/\(id)/actions",
            body: #"{"type":"increase","padding":"\#(String(repeating: "p", count: 2 << 20))"}"#)
        #expect(over.status == 413)
        #expect(over.errorCode == "body_too_large")
    }
}
