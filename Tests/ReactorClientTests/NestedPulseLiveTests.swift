import Foundation
import ReactorClient
import Reactors
import Testing

/// A document with an editor whose alert is a pulse of a nested struct.
struct DocumentReactor: Reactor {
    enum Action: Codable, Sendable { case warn(text: String), rename(title: String) }

    struct Editor: Codable, Sendable, Equatable {
        var title = ""
        @Pulse var alert: String? = nil
    }

    struct State: Codable, Sendable, Equatable {
        var editor = Editor()
    }

    let initialState = State()

    func reduce(state: State, mutation: Action) -> State {
        var state = state
        switch mutation {
        case .warn(let text): state.editor.alert = text
        case .rename(let title): state.editor.title = title
        }
        return state
    }
}

/// `pulse(\.editor.$alert)` against a live server: ReactorKit's nested pulse, by its path.
@Suite struct NestedPulseLiveTests {
    @Test func aNestedPulseArrivesOnEveryAssignmentByKeyPathAndByName() async throws {
        let server = try LiveServer(catalog: { $0.register("document") { DocumentReactor() } })
        let session = try await server.client().createSession(reactor: "document", as: DocumentReactor.self)
        let reactor = try await RemoteReactor(session)
        let alerts = SequenceRecorder(reactor.pulse(\.editor.$alert))
        let named = SequenceRecorder(reactor.pulse(named: "editor.alert", as: String?.self))
        let connection = SequenceRecorder(reactor.connection)
        try await connection.wait("connected") { $0.last == .connected }
        reactor.send(.warn(text: "unsaved"))
        reactor.send(.rename(title: "draft"))
        _ = try await reactor.sendAndWait(.warn(text: "unsaved"))
        try await alerts.wait("both alerts, equal as they are") { $0.count == 2 }
        try await named.wait("both alerts by name") { $0.count == 2 }
        #expect(alerts.elements == ["unsaved", "unsaved"])
        #expect(named.elements == ["unsaved", "unsaved"])
        #expect(reactor.currentState.editor.title == "draft")
    }
}
