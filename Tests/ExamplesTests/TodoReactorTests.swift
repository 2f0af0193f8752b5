import Examples
import Foundation
import Reactors
import ReactorsTesting
import Testing

@Suite struct TodoReactorTests {
    typealias Item = TodoReactor.Item
    typealias State = TodoReactor.State

    @Test func addToggleRemoveAndClearCompleted() async {
        let tester = ReactorTester(TodoReactor())
        await tester.send(.add(title: "  milk "), expecting: State(items: [Item(id: 1, title: "milk")], nextID: 2))
        await tester.send(.add(title: "eggs"),
                          expecting: State(items: [Item(id: 1, title: "milk"), Item(id: 2, title: "eggs")], nextID: 3))
        await tester.send(.toggle(id: 1),
                          expecting: State(items: [Item(id: 1, title: "milk", done: true), Item(id: 2, title: "eggs")], nextID: 3))
        await tester.send(.clearCompleted, expecting: State(items: [Item(id: 2, title: "eggs")], nextID: 3))
        await tester.send(.remove(id: 2), expecting: State(items: [], nextID: 3))
        await tester.finish()
    }

    @Test func invalidOperationsRaiseTheAlertPulseEveryTime() throws {
        let runtime = ReactorRuntime(TodoReactor())
        let alerts = AlertLog()
        let token = runtime.observe { event in
            guard case .state(_, let pulses) = event else { return }
            for pulse in pulses { alerts.append("\(pulse.name)#\(pulse.count): \(pulse.value)") }
        }
        try runtime.send(.toggle(id: 7))
        try runtime.send(.toggle(id: 7))
        try runtime.send(.add(title: " "))
        try runtime.send(.add(title: "ok"))
        try runtime.send(.clearCompleted)
        #expect(alerts.all == [
            #"alert#1: Optional("There is no todo with id 7 to toggle.")"#,
            #"alert#2: Optional("There is no todo with id 7 to toggle.")"#,
            #"alert#3: Optional("A todo needs a title.")"#,
            #"alert#4: Optional("No todo is completed, so there is nothing to clear.")"#,
        ])
        token.cancel()
    }

    @Test(arguments: [
        (#"{"type":"add","title":"milk"}"#, TodoReactor.Action.add(title: "milk")),
        (#"{"type":"toggle","id":3}"#, .toggle(id: 3)),
        (#"{"type":"remove","id":4}"#, .remove(id: 4)),
        (#"{"type":"clearCompleted"}"#, .clearCompleted),
    ])
    func actionsRoundTripTheWireShape(json: String, action: TodoReactor.Action) throws {
        #expect(try JSONDecoder().decode(TodoReactor.Action.self, from: Data(json.utf8)) == action)
        #expect(try JSONDecoder().decode(TodoReactor.Action.self, from: JSONEncoder().encode(action)) == action)
    }

    @Test(arguments: [#"{"type":"add"}"#, #"{"type":"toggle","id":"x"}"#, #"{"type":"archive"}"#])
    func invalidPayloadsDoNotDecode(json: String) {
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(TodoReactor.Action.self, from: Data(json.utf8)) }
    }

    @Test func stateEncodesThePulseAsItsValue() throws {
        var state = State(items: [Item(id: 1, title: "milk")], nextID: 2)
        state.alert = "hi"
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = String(decoding: try encoder.encode(state), as: UTF8.self)
        #expect(json == #"{"alert":"hi","items":[{"done":false,"id":1,"title":"milk"}],"nextID":2}"#)
    }
}

import Synchronization

final class AlertLog: Sendable {
    private let entries = Mutex<[String]>([])
    func append(_ entry: String) { entries.withLock { $0.append(entry) } }
    var all: [String] { entries.withLock { $0 } }
}
