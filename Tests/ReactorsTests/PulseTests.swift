import Foundation
import ReactorServerTesting
import Reactors
import Testing

@Suite(.offThePool) struct PulseTests {
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
        #expect(
            pulses == [
                [],
                [#"alert#1=Optional("same")"#],
                [#"alert#2=Optional("same")"#],
                [],
                ["ping#1=0"],
            ])
        token.cancel()
    }
}

/// Pulse counts never go back: a checkpoint carries them, a forced state continues them, and pulses the
/// runtime cannot deliver are found before any session runs.
@Suite(.offThePool) struct PulseCountTests {
    typealias State = PulseTests.State

    static func pulses(_ recorder: StateRecorder<State>) -> [String] {
        recorder.values.flatMap { event -> [String] in
            guard case .state(_, let pulses) = event else { return [] }
            return pulses.map { "\($0.name)#\($0.count)" }
        }
    }

    @Test func anEncodedCheckpointKeepsTheCountsAndARestoredRuntimeContinuesThem() throws {
        let runtime = ReactorRuntime(PulseTests.AlertReactor())
        try runtime.send(.alert("a"))
        try runtime.send(.alert("b"))
        try runtime.send(.ping)
        #expect(runtime.checkpoint.pulseCounts == ["alert": 2, "ping": 1])
        let json = try JSONEncoder().encode(runtime.checkpoint)
        let decoded = try JSONDecoder().decode(Checkpoint<State>.self, from: json)
        #expect(decoded.state.$alert.count == 2)
        #expect(decoded.pulseCounts == ["alert": 2, "ping": 1])

        let restored = ReactorRuntime(PulseTests.AlertReactor(), restoring: decoded)
        let recorder = StateRecorder<State>()
        let token = restored.observe(recorder.record)
        try restored.send(.alert("c"))
        #expect(Self.pulses(recorder) == ["alert#3"])
        token.cancel()
    }

    @Test func aForcedStateAssignsEachPulseOnceContinuingItsCount() throws {
        let runtime = ReactorRuntime(PulseTests.AlertReactor())
        try runtime.send(.alert("a"))
        let recorder = StateRecorder<State>()
        let token = runtime.observe(recorder.record)
        runtime.isStubEnabled = true
        try runtime.forceState(State(value: 7, alert: "forced"))
        #expect(Self.pulses(recorder) == ["alert#2", "ping#1"])
        #expect(runtime.currentState.alert == "forced")
        runtime.isStubEnabled = false
        try runtime.send(.alert("again"))
        #expect(Self.pulses(recorder) == ["alert#2", "ping#1", "alert#3"])
        token.cancel()
    }

    @Test func restoringCountsIntoADecodedState() throws {
        var state = try JSONDecoder().decode(State.self, from: Data(#"{"value":1,"alert":"x","ping":0}"#.utf8))
        Pulses.restore(["alert": 41, "unknown": 3], into: &state)
        #expect(Pulses.counts(of: state) == ["alert": 41, "ping": 0])
        #expect(Pulses.counts(of: 5).isEmpty)
    }

    struct Settings: Codable, Sendable {
        @Pulse var flash: String? = nil
    }

    struct Item: Codable, Sendable {
        var title = ""
        @Pulse var highlight = false
    }

    struct Nested: Codable, Sendable {
        @Pulse var alert: String? = nil
        var settings = Settings()
        var maybe: Settings? = nil
        var items: [Item] = []
        var byName: [String: Item] = [:]
        var children: [Nested] = []
        @Pulse var wrapped = Settings()
    }

    final class ClassState: Codable, @unchecked Sendable {
        @Pulse var alert: String? = nil
    }

    @Test func pulsesNoStructPathReachesAreFoundWithWhy() {
        #expect(Pulses.undeliverable(in: PulseTests.State.self).isEmpty)
        let array = "in an array element"
        #expect(
            Pulses.undeliverable(in: Nested.self).map(\.description) == [
                "maybe.flash (inside an optional)", "items[].highlight (\(array))",
                "byName[].highlight (in a dictionary value)",
                "children[].alert (\(array))", "children[].settings.flash (\(array))",
                "children[].maybe.flash (\(array))",
                "children[].items[].highlight (\(array))", "children[].byName[].highlight (\(array))",
                "children[].wrapped (\(array))", "children[].wrapped.flash (\(array))",
                "wrapped.flash (inside the value of the @Pulse wrapped)",
            ])
        #expect(
            Pulses.undeliverable(in: ClassState.self).map(\.description) == [
                "alert (in a class state (it has no inline layout to compare))"
            ])
        #expect(Pulses.undeliverable(in: Holder.self).map(\.description) == ["box.alert (in a class)"])
    }

    final class Box: Codable, @unchecked Sendable {
        @Pulse var alert: String? = nil
    }

    /// A struct state holding a class, an existential and an enum: only the class's pulse is reported, and the
    /// existential is not looked into (the reflection the search uses cannot take one).
    struct Holder: Sendable {
        var box = Box()
        var anything: any Sendable = 1
        var choice: Choice = .none
        enum Choice: Sendable { case none, some(Int) }
    }
}

/// Pulses of nested structs are delivered by path, with the counts of top-level ones.
@Suite(.offThePool) struct NestedPulseTests {
    struct Editor: Codable, Sendable, Equatable {
        var text = ""
        @Pulse var alert: String? = nil
        var cursor = Cursor()
    }

    struct Cursor: Codable, Sendable, Equatable {
        var line = 0
        @Pulse var flash = false
    }

    struct State: Codable, Sendable, Equatable {
        @Pulse var toast: String? = nil
        var editor = Editor()
        var other = Editor()
    }

    struct EditorReactor: Reactor {
        enum Action: Codable, Sendable { case alert(String), flash, toast, type(String), otherAlert }
        let initialState = State()

        func reduce(state: State, mutation: Action) -> State {
            var state = state
            switch mutation {
            case .alert(let text): state.editor.alert = text
            case .flash: state.editor.cursor.flash = true
            case .toast: state.toast = "saved"
            case .type(let text): state.editor.text += text
            case .otherAlert: state.other.alert = "elsewhere"
            }
            return state
        }
    }

    static func pulses(_ recorder: StateRecorder<State>) -> [String] {
        recorder.values.flatMap { event -> [String] in
            guard case .state(_, let pulses) = event else { return [] }
            return pulses.map { "\($0.name)#\($0.count)=\(String(describing: $0.value))" }
        }
    }

    @Test func everyPulseIsDeliverableAndNamedByItsPath() {
        #expect(Pulses.undeliverable(in: State.self).isEmpty)
        #expect(
            Pulses.counts(of: State()) == [
                "toast": 0, "editor.alert": 0, "editor.cursor.flash": 0, "other.alert": 0, "other.cursor.flash": 0,
            ])
    }

    @Test func theRuntimeReportsNestedAssignmentsByPathEvenOfEqualValues() throws {
        let runtime = ReactorRuntime(EditorReactor())
        let recorder = StateRecorder<State>()
        let token = runtime.observe(recorder.record)
        try runtime.send(.alert("same"))
        try runtime.send(.alert("same"))
        try runtime.send(.type("x"))
        try runtime.send(.flash)
        try runtime.send(.otherAlert)
        try runtime.send(.toast)
        #expect(
            Self.pulses(recorder) == [
                #"editor.alert#1=Optional("same")"#, #"editor.alert#2=Optional("same")"#, "editor.cursor.flash#1=true",
                #"other.alert#1=Optional("elsewhere")"#, #"toast#1=Optional("saved")"#,
            ])
        token.cancel()
        runtime.stop()
    }

    @Test func countsSurviveACheckpointAndAForcedStateContinuesThem() throws {
        let runtime = ReactorRuntime(EditorReactor())
        try runtime.send(.alert("a"))
        try runtime.send(.alert("b"))
        let json = try JSONEncoder().encode(runtime.checkpoint)
        #expect(String(decoding: json, as: UTF8.self).contains(#""editor.alert":2"#))
        let decoded = try JSONDecoder().decode(Checkpoint<State>.self, from: json)
        let restored = ReactorRuntime(EditorReactor(), restoring: decoded)
        let recorder = StateRecorder<State>()
        let token = restored.observe(recorder.record)
        try restored.send(.alert("c"))
        restored.isStubEnabled = true
        try restored.forceState(State())
        #expect(
            Self.pulses(recorder) == [
                #"editor.alert#3=Optional("c")"#,
                "toast#1=nil", "editor.alert#4=nil", "editor.cursor.flash#1=false", "other.alert#1=nil",
                "other.cursor.flash#1=false",
            ])
        token.cancel()
        runtime.stop()
        restored.stop()
    }
}
