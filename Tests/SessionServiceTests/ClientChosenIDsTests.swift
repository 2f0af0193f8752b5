import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// `auth.clientChosenIDs`: in `token` mode, `POST /sessions` with a taken client-chosen id answers 409 to
/// anyone (an existence oracle, and a way to claim ids first); with the setting false the server picks
/// every id and a request naming one is refused alike whether the id exists or not (issue 22).
@Suite(.offThePool) struct ClientChosenIDsTests {
    static func create(_ server: TestServer, id: String?) throws -> TestResponse {
        let body = id.map { #"{"reactor":"counter","id":"\#($0)"}"# } ?? #"{"reactor":"counter"}"#
        return try server.request("POST", "/sessions", body: body)
    }

    @Test func byDefaultATakenIdAnswers409ToAnyone() throws {
        let server = try TestServer { $0.auth.sessions = "token" }
        #expect(try Self.create(server, id: "alice").status == 201)
        // What the README documents: no token is needed to learn that "alice" exists.
        let taken = try Self.create(server, id: "alice")
        #expect(taken.status == 409)
        #expect(taken.errorCode == "session_exists")
        #expect(try Self.create(server, id: "bob").status == 201)
    }

    @Test func withServerChosenIdsOnlyANamedIdIsRefusedAlikeWhetherItExistsOrNot() throws {
        let server = try TestServer {
            $0.auth.sessions = "token"
            $0.auth.clientChosenIDs = false
        }
        let created = try Self.create(server, id: nil)
        #expect(created.status == 201)
        let id = try #require(try created.json()["id"] as? String)
        #expect(id.utf8.count == 22, "128 random bits")
        #expect(try created.json()["token"] is String)
        let nullID = try server.request("POST", "/sessions", body: #"{"reactor":"counter","id":null}"#)
        #expect(nullID.status == 201, "null is leaving it out")

        let existing = try Self.create(server, id: id)
        let unknown = try Self.create(server, id: "not-there")
        let invalid = try Self.create(server, id: "not valid!")
        for refused in [existing, unknown, invalid] {
            #expect(refused.status == 403)
            #expect(refused.errorCode == "forbidden")
            #expect(refused.errorMessage?.contains("auth.clientChosenIDs") == true, "\(refused.text)")
        }
        #expect(existing.text == unknown.text, "nothing tells a taken id from a free one")
        #expect(existing.text == invalid.text)
        #expect(server.server.service.store.session("not-there") == nil, "nothing was created")
    }

    @Test func theSettingHoldsInOpenModeToo() throws {
        let server = try TestServer { $0.auth.clientChosenIDs = false }
        #expect(try Self.create(server, id: "demo").status == 403)
        #expect(try Self.create(server, id: nil).status == 201)
    }

    @Test func theDocumentOffersNoIdWhenTheServerPicksThem() throws {
        for allowed in [true, false] {
            let server = try TestServer {
                $0.auth.sessions = "token"
                $0.auth.clientChosenIDs = allowed
            }
            let document = try OpenAPIDocumentTests.document(server)
            let create = try #require(try OpenAPIDocumentTests.operations(document)["POST /sessions"])
            let body = try #require(create["requestBody"] as? [String: Any])
            let json = try #require((body["content"] as? [String: Any])?["application/json"] as? [String: Any])
            let schema = try #require(json["schema"] as? [String: Any])
            let id = try #require((schema["properties"] as? [String: Any])?["id"] as? [String: Any])
            let responses = try #require(create["responses"] as? [String: Any])
            if allowed {
                #expect(id["type"] as? String != "null")
                #expect(responses["403"] == nil, "token mode with every reactor allowed refuses no creation")
            } else {
                #expect(id["type"] as? String == "null", "\(id)")
                #expect(responses["403"] != nil, "the refusal is documented")
            }
        }
    }

    @Test func itsEnvironmentVariableReadsAsWritten() throws {
        let names = ["auth.clientChosenIDs", "storage.nats.claimTTLSeconds"].map {
            ConfigurationSchema.server.setting($0)?.environmentName
        }
        #expect(names == ["REACTOR_AUTH_CLIENT_CHOSEN_IDS", "REACTOR_STORAGE_NATS_CLAIM_TTL_SECONDS"])
        let environment = ["REACTOR_AUTH_CLIENT_CHOSEN_IDS": "false"]
        let options = try ConfigurationLoader.load(arguments: [], environment: environment)
        #expect(options.configuration.auth.clientChosenIDs == false)
    }
}
