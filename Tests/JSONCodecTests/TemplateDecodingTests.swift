import JSONCodec
import Testing

/// A state that gained members since its data was stored: `away` and `team.color` (required), `note` (optional).
private struct Scoreboard: Decodable, Equatable {
    struct Team: Decodable, Equatable {
        var name: String
        var color: String
    }

    var home: Int
    var away: Int
    var team: Team
    var note: String?
    var players: [Team]
}

private func parse(_ text: String) throws -> JSONValue { try JSONParser().parse(Array(text.utf8)) }

/// The initial state of the newer type, as the server encodes it.
private let initial = #"{"home":0,"away":0,"team":{"name":"","color":"red"},"note":"-","players":[]}"#

@Suite struct TemplateDecodingTests {
    @Test func missingMembersComeFromTheTemplateAtEveryDepth() throws {
        let stored = try parse(#"{"home":3,"team":{"name":"A"},"players":[]}"#)
        let read = try JSONValueDecoder().decode(Scoreboard.self, from: stored, missingFrom: try parse(initial))
        #expect(
            read.value == Scoreboard(home: 3, away: 0, team: .init(name: "A", color: "red"), note: nil, players: []))
        #expect(read.filled == ["away", "team.color"])
    }

    @Test func dataThatDecodesIsTakenAsItIs() throws {
        let stored = try parse(
            #"{"home":1,"away":2,"team":{"name":"B","color":"blue"},"note":"x","players":[],"old":7}"#)
        let read = try JSONValueDecoder().decode(Scoreboard.self, from: stored, missingFrom: try parse(initial))
        #expect(
            read.value == Scoreboard(home: 1, away: 2, team: .init(name: "B", color: "blue"), note: "x", players: []))
        #expect(read.filled.isEmpty)
    }

    @Test func aMissingObjectIsTakenWhole() throws {
        let stored = try parse(#"{"home":1,"away":2,"players":[]}"#)
        let read = try JSONValueDecoder().decode(Scoreboard.self, from: stored, missingFrom: try parse(initial))
        #expect(read.value.team == .init(name: "", color: "red"))
        #expect(read.filled == ["team"])
    }

    @Test func aMemberMissingInsideAnArrayElementIsStillAnError() throws {
        let stored = try parse(#"{"home":1,"away":2,"team":{"name":"A","color":"c"},"players":[{"name":"P"}]}"#)
        #expect {
            try JSONValueDecoder().decode(Scoreboard.self, from: stored, missingFrom: try parse(initial))
        } throws: { error in
            (error as? JSONDecodingError)?.message == #"missing field "players[0].color""#
        }
    }

    @Test func aWrongTypeIsNotHiddenByTheTemplate() throws {
        let stored = try parse(#"{"home":"three","team":{"name":"A"},"players":[]}"#)
        #expect {
            try JSONValueDecoder().decode(Scoreboard.self, from: stored, missingFrom: try parse(initial))
        } throws: { error in
            (error as? JSONDecodingError)?.field == "home"
        }
    }

    @Test func aMemberTheTemplateLacksTooIsAnError() throws {
        let stored = try parse(#"{"home":1,"players":[]}"#)
        #expect {
            try JSONValueDecoder().decode(Scoreboard.self, from: stored, missingFrom: try parse(#"{"home":0}"#))
        } throws: { error in
            (error as? JSONDecodingError)?.message == #"missing field "away""#
        }
    }

    @Test func overlaidOnAddsEveryMissingMemberOfTheTemplate() throws {
        let stored = try parse(#"{"home":3,"team":{"name":"A"}}"#)
        let merged = stored.overlaid(on: try parse(#"{"home":0,"away":0,"team":{"name":"","color":"red"}}"#))
        #expect(merged == (try parse(#"{"home":3,"away":0,"team":{"name":"A","color":"red"}}"#)))
    }
}
