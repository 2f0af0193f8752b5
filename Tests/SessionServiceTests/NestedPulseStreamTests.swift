import ReactorServerTesting
import Reactors
import Testing

@testable import SessionService

/// Two editors, each with an alert: pulses of nested structs, as ReactorKit's `pulse(\.editor.$alert)` reads them.
struct EditorsReactor: Reactor {
    enum Action: Codable, Sendable {
        case alert(text: String)
        case otherAlert(text: String)
        case type(text: String)
    }

    struct Editor: Codable, Sendable, Equatable {
        var text = ""
        @Pulse var alert: String? = nil
    }

    struct State: Codable, Sendable, Equatable {
        var editor = Editor()
        var other = Editor()
    }

    let initialState = State()

    func reduce(state: State, mutation: Action) -> State {
        var state = state
        switch mutation {
        case .alert(let text): state.editor.alert = text
        case .otherAlert(let text): state.other.alert = text
        case .type(let text): state.editor.text = text
        }
        return state
    }
}

@Suite(.offThePool) struct NestedPulseStreamTests {
    static func server(dataDirectory: String? = nil) throws -> TestServer {
        try TestServer(dataDirectory: dataDirectory) { _ in
        } catalog: {
            $0.register("editors") { EditorsReactor() }
        }
    }

    static func alert(_ server: TestServer, _ id: String, _ text: String, other: Bool = false) throws {
        let body = #"{"type":"\#(other ? "otherAlert" : "alert")","text":"\#(text)"}"#
        #expect(try server.request("POST", "/sessions/\(id)/actions?wait=true", body: body).status == 200)
    }

    /// The next event of `stream`, which must be a pulse: its name, count and value.
    static func pulse(_ stream: TestClient) throws -> (name: String?, count: Int?, value: String?) {
        let event = try stream.nextEvent()
        #expect(event.event == "pulse", "expected a pulse, got \(event.event ?? "nil"): \(event.data ?? "")")
        let body = try #require(try event.json() as? [String: Any])
        return (body["name"] as? String, body["count"] as? Int, body["value"] as? String)
    }

    @Test func aNestedPulseIsSentByItsPathWithEveryAssignment() throws {
        let server = try Self.server()
        let id = try server.createSession("editors")
        let stream = try server.subscribe("/sessions/\(id)/events")
        #expect(try stream.nextEvent().id == "0")
        for count in 1...2 {
            try Self.alert(server, id, "same")
            #expect(try stream.nextEvent().event == "state")
            let pulse = try Self.pulse(stream)
            #expect(pulse.name == "editor.alert")
            #expect(pulse.count == count)
            #expect(pulse.value == "same")
        }
    }

    @Test(arguments: ["/editor", "/editor/alert", "/editor/text"])
    func aSelectOnThePulsesBranchGetsItAndOthersDoNot(select: String) throws {
        let server = try Self.server()
        let id = try server.createSession("editors")
        let selected = try server.subscribe("/sessions/\(id)/events?select=\(select)")
        let other = try server.subscribe("/sessions/\(id)/events?select=/other")
        #expect(try selected.nextEvent().id == "0")
        #expect(try other.nextEvent().id == "0")
        try Self.alert(server, id, "mine")
        try Self.alert(server, id, "theirs", other: true)
        if select == "/editor/text" {
            // A sibling of the pulse: neither pulse is its own, so the next thing it gets is its part changing.
            let typed = #"{"type":"type","text":"hello"}"#
            #expect(try server.request("POST", "/sessions/\(id)/actions?wait=true", body: typed).status == 200)
            let next = try selected.nextEvent()
            #expect(next.event == "state")
            #expect(next.id == "3")
            #expect(next.data == #""hello""#)
        } else {
            // The selected part changed (the alert is in it): its state comes first, then the pulse.
            #expect(try selected.nextEvent().event == "state")
            let mine = try Self.pulse(selected)
            #expect(mine.name == "editor.alert")
            #expect(mine.value == "mine")
        }
        // /other skipped editor.alert: its first event after the initial one is its own state and pulse.
        #expect(try other.nextEvent().event == "state")
        let theirs = try Self.pulse(other)
        #expect(theirs.name == "other.alert")
        #expect(theirs.value == "theirs")
    }

    @Test func countsContinueAfterPassivationAndARestart() async throws {
        try await withTemporaryDirectory("nested-pulses") { directory in
            do {
                let server = try Self.server(dataDirectory: directory)
                _ = try server.createSession("editors", id: "doc")
                do {
                    let stream = try server.subscribe("/sessions/doc/events")
                    _ = try stream.nextEvent()
                    for count in 1...2 {
                        try Self.alert(server, "doc", "a")
                        _ = try stream.nextEvent()
                        #expect(try Self.pulse(stream).count == count)
                    }
                }
                try await eventually("the session to leave memory once its stream closed") {
                    server.server.service.store.passivate(idleBefore: .max) == 1
                }
                let stream = try server.subscribe("/sessions/doc/events")
                _ = try stream.nextEvent()
                try Self.alert(server, "doc", "b")
                _ = try stream.nextEvent()
                #expect(try Self.pulse(stream).count == 3)
            }
            let restarted = try Self.server(dataDirectory: directory)
            let stream = try restarted.subscribe("/sessions/doc/events")
            _ = try stream.nextEvent()
            try Self.alert(restarted, "doc", "c")
            _ = try stream.nextEvent()
            let pulse = try Self.pulse(stream)
            #expect(pulse.name == "editor.alert")
            #expect(pulse.count == 4)
        }
    }

    @Test func aPulseThatCannotBeDeliveredStopsRegistrationNamingItAndWhy() {
        struct Item: Codable, Sendable { @Pulse var flash = false }
        struct State: Codable, Sendable {
            var items: [Item] = []
            var draft: EditorsReactor.Editor? = nil
        }
        let message = ReactorCatalog.undeliverableMessage("lists", Pulses.undeliverable(in: State.self))
        let reasons = "items[].flash (in an array element), draft.alert (inside an optional)"
        #expect(message.hasPrefix("reactor lists: \(reasons) would never reach clients"))
        #expect(message.contains("stored struct properties"))
    }

    @Test func theSubscriberMatchesAPulsePathAgainstAPointerByComponents() {
        let cases: [(String, [String], Bool)] = [
            ("editor.alert", ["editor"], true), ("editor.alert", ["editor", "alert"], true),
            ("editor.alert", ["editor", "alert", "x"], true), ("editor.alert", ["editorial"], false),
            ("editor.alert", ["edit"], false), ("editor.alert", ["editor", "al"], false),
            ("editor.alert", ["other"], false), ("alert", ["alert"], true), ("alert", ["alerts"], false),
        ]
        for (name, tokens, expected) in cases {
            let pointer = "/" + tokens.joined(separator: "/")
            #expect(Subscriber.pulse(name, sharesBranchWith: tokens) == expected, "\(name) vs \(pointer)")
        }
    }
}
