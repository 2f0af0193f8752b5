import ReactorServerTesting
import Reactors
import SessionService
import Synchronization
import Testing

/// Refuses a score of more than 3 points before the action is accepted.
struct PointsLimit: ReactorMiddleware {
    typealias R = ScoreboardReactor
    let log: Recorder<String>
    let sessionID: String

    func intercept(action: ScoreboardReactor.Action, state: ScoreboardReactor.State) throws(ActionRejection) {
        log.record("\(sessionID) limit \(action)")
        if case .score(_, let points) = action, points > 3 {
            throw ActionRejection(code: "too_many_points", message: "a score is 1 to 3 points, not \(points)")
        }
    }
}

/// Refuses a state where a team has more than 6 points, and says what it sees of every action and state.
struct Audit: ReactorMiddleware {
    typealias R = ScoreboardReactor
    let log: Recorder<String>
    let sessionID: String

    var vetsStates: Bool { true }

    func intercept(action: ScoreboardReactor.Action, state: ScoreboardReactor.State) throws(ActionRejection) {
        log.record("\(sessionID) audit \(action)")
    }

    func didAccept(action: ScoreboardReactor.Action, seq: UInt64, isStubbed: Bool) {
        log.record("\(sessionID) accepted \(seq)")
    }

    func vet(state: ScoreboardReactor.State, version: UInt64) throws(ActionRejection) {
        if max(state.home, state.away) > 6 {
            throw ActionRejection(code: "score_capped", message: "this game ends at 6 points")
        }
    }

    func didReduce(mutation: ScoreboardReactor.Action, state: ScoreboardReactor.State, version: UInt64) {
        log.record("\(sessionID) version \(version): \(state.home)-\(state.away)")
    }
}

@Suite(.offThePool) struct HostedMiddlewareTests {
    static func register(_ catalog: inout ReactorCatalog, log: Recorder<String>, made: Recorder<String>) {
        catalog.register(
            "scoreboard",
            middlewares: { sessionID in
                made.record(sessionID)
                return [PointsLimit(log: log, sessionID: sessionID), Audit(log: log, sessionID: sessionID)]
            }
        ) { ScoreboardReactor() }
    }

    static let three = score("home", 3)

    /// The body of a score action.
    static func score(_ team: String, _ points: Int) -> String {
        #"{"type":"score","team":"\#(team)","points":\#(points)}"#
    }

    @Test func theReactorsMiddlewaresValidateAndObserveInOrderOverHTTP() throws {
        let log = Recorder<String>()
        let made = Recorder<String>()
        let server = try TestServer { _ in
        } catalog: {
            Self.register(&$0, log: log, made: made)
        }
        _ = try server.createSession("scoreboard", id: "game")
        #expect(made.values == ["game"])

        let refused = try server.request("POST", "/sessions/game/actions", body: Self.score("home", 5))
        #expect(refused.status == 422)
        #expect(refused.errorCode == "too_many_points")
        #expect(refused.errorMessage == "a score is 1 to 3 points, not 5")
        // The first middleware refused it: the second never saw it, and nothing was accepted.
        #expect(log.values == [#"game limit score(team: "home", points: 5)"#])

        let accepted = try server.request("POST", "/sessions/game/actions?wait=true", body: Self.three)
        #expect(accepted.status == 200)
        #expect(accepted.text == #"{"seq":1,"version":1,"state":{"home":3,"away":0}}"# + "\n")
        #expect(
            Array(log.values.dropFirst()) == [
                #"game limit score(team: "home", points: 3)"#, #"game audit score(team: "home", points: 3)"#,
                "game accepted 1", "game version 1: 3-0",
            ])
        let actions = try server.request("GET", "/admin/sessions/game/actions", headers: server.admin).json()
        #expect((actions["actions"] as? [Any])?.count == 1, "the refused action is not in the log")
    }

    @Test func aVettedStateIsRefusedOverHTTPAndNeverJournaledAndMiddlewaresComeBackWithTheSession() throws {
        try withTemporaryDirectory("middleware") { directory in
            let log = Recorder<String>()
            let made = Recorder<String>()
            do {
                let server = try TestServer(dataDirectory: directory) { _ in
                } catalog: {
                    Self.register(&$0, log: log, made: made)
                }
                _ = try server.createSession("scoreboard", id: "cup")
                for _ in 0..<2 {
                    let answer = try server.request("POST", "/sessions/cup/actions?wait=true", body: Self.three)
                    #expect(answer.status == 200)
                }
                let capped = try server.request("POST", "/sessions/cup/actions?wait=true", body: Self.three)
                #expect(capped.status == 422)
                #expect(capped.errorCode == "score_capped")
                #expect(!log.values.contains("cup version 3: 9-0"))
                // Loaded back after leaving memory, the session has its middlewares again.
                #expect(server.server.service.store.passivate(idleBefore: .max) == 1)
                let again = try server.request("POST", "/sessions/cup/actions", body: Self.score("away", 4))
                #expect(again.errorCode == "too_many_points")
            }
            let restarted = try TestServer(dataDirectory: directory) { _ in
            } catalog: {
                Self.register(&$0, log: log, made: made)
            }
            let session = try restarted.request("GET", "/sessions/cup").json()
            #expect(session["version"] as? Int == 2)
            #expect((session["state"] as? [String: Any])?["home"] as? Int == 6)
            let refused = try restarted.request("POST", "/sessions/cup/actions", body: Self.score("away", 9))
            #expect(refused.errorCode == "too_many_points")
            // Created, loaded after the first passivation (creation leaves memory at once), after the
            // second, and after the restart.
            #expect(made.values.allSatisfy { $0 == "cup" })
            #expect(made.count == 4)
        }
    }
}

@Suite(.offThePool) struct HostedMiddlewareDocumentTests {
    /// The 422 answer of `POST /sessions/{id}/actions` in `/openapi.json?reactor=NAME`: its description
    /// and the codes its schema allows (nil: any).
    static func actionRefusal(_ server: TestServer, reactor: String) throws -> (description: String, codes: [String]?) {
        let document = try server.request("GET", "/openapi.json?reactor=\(reactor)").json()
        let paths = try #require(document["paths"] as? [String: Any])
        let post = try #require((paths["/sessions/{id}/actions"] as? [String: Any])?["post"] as? [String: Any])
        let answer = try #require((post["responses"] as? [String: Any])?["422"] as? [String: Any])
        let schema = try #require(
            ((answer["content"] as? [String: Any])?["application/json"] as? [String: Any])?["schema"] as? [String: Any])
        let error = try #require((schema["properties"] as? [String: Any])?["error"] as? [String: Any])
        let code = try #require((error["properties"] as? [String: Any])?["code"] as? [String: Any])
        return (answer["description"] as? String ?? "", code["enum"] as? [String])
    }

    @Test func aReactorWithMiddlewaresMayRefuseWithItsOwnCodesAndTheDocumentSaysSo() throws {
        let log = Recorder<String>()
        let server = try TestServer { _ in
        } catalog: {
            HostedMiddlewareTests.register(&$0, log: log, made: Recorder())
        }
        let refusal = try Self.actionRefusal(server, reactor: "scoreboard")
        #expect(refusal.codes == nil, "a middleware's own code must be allowed")
        #expect(refusal.description.contains("- any other code: A middleware the reactor was registered with refused"))
        // A reactor without middlewares keeps the exact list.
        let counter = try Self.actionRefusal(server, reactor: "counter")
        #expect(counter.codes?.contains("unknown_action") == true)
        #expect(counter.codes?.contains("") == false)
        #expect(!counter.description.contains("any other code"))
    }
}
