import Foundation
import ReactorServerTesting
import Reactors
import Testing

@Suite struct PulseTests {
    struct State: Codable, Sendable, Equatable {
        var value = 0
        @Pulse var alert: String? = nil
        @Pulse var ping: Int = 0
    }

    struct AlertReactor: Reactor {
        enum Action: Codable, Sendable { case alert(String?), ping, count }
        let initialState = State()

        func reduce(state: State, mutation: Action) -> State {
            var state = state
            switch mutation {
            case .alert(let message): state.alert = message
            case .ping: state.ping = state.ping
            case .count: state.value += 1
            }
            return state
        }
    }

    @Test func countGrowsOnEveryAssignmentIncludingEqualAndNil() {
        var state = State()
        #expect(state.$alert.count == 0)
        state.alert = "hi"
        state.alert = "hi"
        state.alert = nil
        #expect(state.$alert.count == 3)
        #expect(state.alert == nil)
    }

    @Test func countWrapsOnOverflow() {
        var pulse = Pulse(value: 1, count: .max)
        pulse.wrappedValue = 1
        #expect(pulse.count == 0)
        pulse.wrappedValue = 1
        #expect(pulse.count == 1)
    }

    @Test func encodesAsItsValueOnly() throws {
        var state = State()
        state.alert = "careful"
        let json = String(decoding: try JSONEncoder().encode(state), as: UTF8.self)
        #expect(json.contains(#""alert":"careful""#))
        #expect(json.contains(#""ping":0"#))
        let decoded = try JSONDecoder().decode(State.self, from: Data(json.utf8))
        #expect(decoded.alert == "careful")
        #expect(decoded.$alert.count == 0)
    }

    @Test func runtimeReportsAssignedPulsesByName() throws {
        let runtime = ReactorRuntime(AlertReactor())
        let recorder = StateRecorder<State>()
        let token = runtime.observe(recorder.record)
        try runtime.send(.alert("same"))
        try runtime.send(.alert("same"))
        try runtime.send(.count)
        try runtime.send(.ping)
        let pulses = recorder.values.map { event -> [String] in
            guard case .state(_, let pulses) = event else { return [] }
            return pulses.map { "\($0.name)#\($0.count)=\(String(describing: $0.value))" }
        }
        #expect(pulses == [
            [],
            [#"alert#1=Optional("same")"#],
            [#"alert#2=Optional("same")"#],
            [],
            ["ping#1=0"],
        ])
        token.cancel()
    }
}
