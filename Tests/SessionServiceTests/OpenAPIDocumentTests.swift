import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// `/openapi.json` as a server serves it: built from ``Route/table``, so a route added to the table is in
/// the document, and a route added without documentation fails here by name.
@Suite(.offThePool) struct OpenAPIDocumentTests {
    static let methods = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

    static func document(_ server: TestServer, _ path: String = "/openapi.json") throws -> [String: Any] {
        let response = try server.request("GET", path)
        #expect(response.status == 200, "GET \(path): \(response.status)")
        return try response.json()
    }

    /// Every operation of the document, as `METHOD /pattern`.
    static func operations(_ document: [String: Any]) throws -> [String: [String: Any]] {
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        var operations: [String: [String: Any]] = [:]
        for (path, item) in paths {
            for (method, operation) in item where methods.contains(method) {
                operations["\(method.uppercased()) \(path)"] = try #require(operation as? [String: Any])
            }
        }
        return operations
    }

    @Test(arguments: ["open", "token", "jwt"])
    func listsEveryRouteOfTheTableDocumented(mode: String) throws {
        let server = try TestServer {
            $0.auth.sessions = mode
            if mode == "jwt" { $0.auth.jwt.secret = String(repeating: "s", count: 32) }
        }
        let document = try Self.document(server)
        #expect(document["openapi"] as? String == "3.1.0")
        let operations = try Self.operations(document)
        #expect(
            Set(operations.keys) == Set(Route.table.map { "\($0.method) \($0.pattern)" }),
            "the document and Route.table disagree")
        for entry in Route.table {
            let name = "\(entry.method) \(entry.pattern)"
            let operation = try #require(operations[name], "\(name) is not in /openapi.json")
            #expect(operation["operationId"] as? String == entry.route.name, "\(name)")
            #expect(
                !((operation["summary"] as? String) ?? "").isEmpty, "\(name) has no summary: document it in Route.table"
            )
            let statuses = Set(((operation["responses"] as? [String: Any]) ?? [:]).keys)
            let successes = entry.documentation.answers.filter { $0.code == nil }
            #expect(!successes.isEmpty, "\(name) declares no success answer: document it in Route.table")
            // A success given only in some configuration (a token route without tokens) is left out elsewhere.
            if successes.contains(where: { if case .always = $0.condition { true } else { false } }) {
                #expect(statuses.contains { $0.hasPrefix("2") }, "\(name) documents no success answer")
            }
            // The answers of the HTTP server itself belong to every route.
            #expect(statuses.isSuperset(of: ["400", "413", "500", "503"]), "\(name) answers \(statuses.sorted())")
            // Routes refused as a whole without a credential; in token mode the stream of many sessions takes
            // one token per session and ends the parts whose token is wrong instead.
            let guarded =
                switch entry.access {
                case .admin: true
                case .session: mode != "open"
                case .createSession, .eachSession: mode == "jwt"
                case .open: false
                }
            if guarded {
                #expect(operation["security"] != nil, "\(name) needs a credential in \(mode) mode but declares none")
                #expect(statuses.contains("401"), "\(name) can answer 401 in \(mode) mode")
            }
        }
        // In token mode the stream of many sessions takes its tokens as a list, one per session.
        let streamParameters = ((operations["GET /events"]?["parameters"] as? [[String: Any]]) ?? []).compactMap {
            $0["$ref"] as? String
        }
        #expect(
            streamParameters.contains("#/components/parameters/sessionTokens") == (mode == "token"),
            "GET /events parameters in \(mode) mode: \(streamParameters)")
        // Every path parameter of a pattern is declared on its path item.
        let paths = try #require(document["paths"] as? [String: [String: Any]])
        for (path, item) in paths {
            let names = path.split(separator: "/").filter { $0.hasPrefix("{") }.map {
                String($0.dropFirst().dropLast())
            }
            let declared = ((item["parameters"] as? [[String: Any]]) ?? []).compactMap {
                ($0["$ref"] as? String)?.split(separator: "/").last.map(String.init)
            }
            #expect(declared == names, "\(path) declares \(declared)")
        }
    }

    /// Both stream schemas (one session's, `GET /events`) name every code an `event: error` carries, with its
    /// meaning, so that a client generated from the document can tell a move from a lapsed credential.
    @Test func streamErrorsListTheirCodes() throws {
        let server = try TestServer()
        let text = try server.request("GET", "/openapi.json").text
        let codes = [
            "session_moved", "session_passivated", "subscriber_too_slow", "unauthorized", "storage_unavailable",
        ]
        #expect(ServerSentEventVocabulary.errorCodes.map(\.code) == codes)
        let examples = "\"examples\":[" + codes.map { "\"\($0)\"" }.joined(separator: ",") + "]"
        #expect(text.components(separatedBy: examples).count - 1 == 2, "in Event and in GET /events' events")
        for code in codes { #expect(text.contains("\(code): "), "\(code) has no meaning in the document") }
    }

    @Test func narrowsToOneReactor() throws {
        let server = try TestServer()
        let whole = try Self.document(server)
        let counter = try Self.document(server, "/openapi.json?reactor=counter")
        let schemas = try #require((counter["components"] as? [String: Any])?["schemas"] as? [String: Any])
        #expect(schemas["counter.Action"] != nil)
        #expect(schemas["todo.Action"] == nil, "the counter view describes todo actions")
        let action = try #require(schemas["counter.Action"] as? [String: Any])
        let mapping = try #require((action["discriminator"] as? [String: Any])?["mapping"] as? [String: String])
        #expect(Set(mapping.keys) == ["increase", "decrease"])
        let wholeSchemas = try #require((whole["components"] as? [String: Any])?["schemas"] as? [String: Any])
        #expect(["counter.Action", "fruit.Action", "todo.Action"].allSatisfy { wholeSchemas[$0] != nil })
        let newSession = try #require(try Self.operations(whole)["POST /sessions"]?["requestBody"] as? [String: Any])
        let body = try #require(
            ((newSession["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"]
                as? [String: Any])
        let reactors = ((body["properties"] as? [String: Any])?["reactor"] as? [String: Any])?["enum"] as? [String]
        #expect(reactors == ["counter", "fruit", "profile", "todo", "reminders"])

        let unknown = try server.request("GET", "/openapi.json?reactor=nope")
        #expect(unknown.status == 404)
        #expect((try unknown.json()["error"] as? [String: Any])?["code"] as? String == "unknown_reactor")
    }

    /// The document's parameters are the exact ones the server checks: `limit` within its bounds, `select`
    /// a JSON pointer, each with the 400 the operation documents.
    @Test func parameterBoundsAreTheServers() throws {
        let server = try TestServer()
        let document = try Self.document(server)
        let parameters = try #require(
            (document["components"] as? [String: Any])?["parameters"] as? [String: [String: Any]])
        let limit = try #require(parameters["limit"]?["schema"] as? [String: Any])
        let maximum = try #require(limit["maximum"] as? Int)
        let minimum = try #require(limit["minimum"] as? Int)
        #expect(try server.request("POST", "/sessions", body: #"{"reactor":"counter","id":"p"}"#).status == 201)
        let admin = [("Authorization", "Bearer \(TestServer.adminToken)")]
        #expect(try server.request("GET", "/admin/sessions/p/actions?limit=\(maximum)", headers: admin).status == 200)
        #expect(try server.request("GET", "/admin/sessions/p/actions?limit=\(minimum)", headers: admin).status == 200)
        #expect(
            try server.request("GET", "/admin/sessions/p/actions?limit=\(maximum + 1)", headers: admin).status == 400)
        #expect(
            try server.request("GET", "/admin/sessions/p/actions?limit=\(minimum - 1)", headers: admin).status == 400)
        let select = try #require(parameters["select"]?["schema"] as? [String: Any])
        #expect(select["pattern"] as? String != nil)
        #expect(try server.request("GET", "/sessions/p/events?select=nopointer").status == 400)
    }
}
