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
        await tester.send(.add(title: "  milk ")) {
            $0.items = [Item(id: 1, title: "milk")]
            $0.nextID = 2
        }
        await tester.send(.add(title: "eggs")) {
            $0.items.append(Item(id: 2, title: "eggs"))
            $0.nextID = 3
        }
        await tester.send(.toggle(id: 1)) { $0.items[0].done = true }
        await tester.send(.clearCompleted) { $0.items.removeFirst() }
        await tester.send(.remove(id: 2)) { $0.items = [] }
        await tester.finish()
    }

    /// ReactorKit's `@Pulse`: the alert reaches the view on every assignment, the same text twice included; an
    /// assertion asserts a pulse by assigning it, and the tester fails for a pulse delivered but not asserted.
    @Test func invalidOperationsRaiseTheAlertPulseEveryTime() async {
        let tester = ReactorTester(TodoReactor())
        await tester.send(.toggle(id: 7)) { $0.alert = "There is no todo with id 7 to toggle." }
        await tester.send(.toggle(id: 7)) { $0.alert = "There is no todo with id 7 to toggle." }
        await tester.send(.add(title: " ")) { $0.alert = "A todo needs a title." }
        await tester.send(.add(title: "ok")) {
            $0.items = [Item(id: 1, title: "ok")]
            $0.nextID = 2
        }
        await tester.send(.clearCompleted) { $0.alert = "No todo is completed, so there is nothing to clear." }
        #expect(tester.state.$alert.count == 4)
        await tester.finish()
    }

    /// What the tester says when a test forgets the alert: in an assertion, and left unasserted at the end.
    @Test func anAlertNotAssertedIsReported() async {
        let tester = ReactorTester(TodoReactor())
        await withKnownIssue {
            await tester.send(.toggle(id: 3)) { _ in }
        } matching: { issue in
            let said = issue.comments.map(\.rawValue).joined()
            return said.contains(#"alert: null → "There is no todo with id 3 to toggle.""#)
                && said.contains("alert (@Pulse): the assertion assigns it 0 times, the reactor assigned it 1 time")
        }
        await tester.send(.remove(id: 3))
        await withKnownIssue {
            await tester.finish()
        } matching: { issue in
            issue.comments.map(\.rawValue).joined().contains(
                #"version 2 from remove(id: 3): {"items":[],"nextID":1,"#
                    + #""alert":"There is no todo with id 3 to remove."} (pulses: alert)"#)
        }
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
