import Examples
import Foundation
import HostedExamples
import Reactors
import ReactorsTesting
import SessionService
import Testing

@Suite struct CounterReactorTests {
    @Test func increaseAndDecrease() async {
        let tester = ReactorTester(CounterReactor())
        await tester.send(.increase) { $0.value = 1 }
        await tester.send(.increase) { $0.value = 2 }
        await tester.send(.decrease) { $0.value = 1 }
        await tester.finish()
    }

    /// ReactorKit's RxTest way: actions at virtual times, then the states with the times they came.
    @Test func actionsScheduledAtVirtualTimes() async {
        let clock = TestClock()
        let tester = ReactorTester(CounterReactor(), clock: clock)
        tester.schedule(.increase, at: .seconds(1))
        tester.schedule(.increase, at: .seconds(2))
        tester.schedule(.decrease, at: .seconds(3))
        await tester.run()
        await tester.receive(.increase, at: .seconds(1)) { $0.value = 1 }
        await tester.receive(.increase, at: .seconds(2)) { $0.value = 2 }
        await tester.receive(.decrease, at: .seconds(3)) { $0.value = 1 }
        await tester.finish()
    }

    @Test(arguments: [
        (#"{"type":"increase"}"#, CounterReactor.Action.increase),
        (#"{"type":"decrease","extra":1}"#, .decrease),
    ])
    func actionsDecodeFromTheWireShape(json: String, action: CounterReactor.Action) throws {
        #expect(try JSONDecoder().decode(CounterReactor.Action.self, from: Data(json.utf8)) == action)
        let encoded = try JSONEncoder().encode(action)
        #expect(try JSONDecoder().decode(CounterReactor.Action.self, from: encoded) == action)
    }

    @Test(arguments: [#"{"type":"reset"}"#, #"{"kind":"increase"}"#, #"{"type":1}"#])
    func malformedActionsDoNotDecode(json: String) {
        #expect(throws: DecodingError.self) {
            try JSONDecoder().decode(CounterReactor.Action.self, from: Data(json.utf8))
        }
    }

    /// At the ends of `Int` the count stays put instead of wrapping to the other end.
    @Test func theCountSaturatesAtTheEndsOfInt() {
        let counter = CounterReactor()
        #expect(counter.reduce(state: .init(value: .max), mutation: .increase).value == .max)
        #expect(counter.reduce(state: .init(value: .min), mutation: .decrease).value == .min)
        #expect(counter.reduce(state: .init(value: .max), mutation: .decrease).value == .max - 1)
        #expect(counter.reduce(state: .init(value: .min), mutation: .increase).value == .min + 1)
    }

    @Test func stateEncodesAsValue() throws {
        let json = String(decoding: try JSONEncoder().encode(CounterReactor().initialState), as: UTF8.self)
        #expect(json == #"{"value":0}"#)
    }
}

@Suite struct ExampleCatalogTests {
    @Test func everyExampleActionDecodes() throws {
        let decoder = JSONDecoder()
        for json in CounterReactor.exampleActions {
            _ = try decoder.decode(CounterReactor.Action.self, from: Data(json.utf8))
        }
        for json in FruitReactor.exampleActions {
            _ = try decoder.decode(FruitReactor.Action.self, from: Data(json.utf8))
        }
        for json in ProfileReactor.exampleActions {
            _ = try decoder.decode(ProfileReactor.Action.self, from: Data(json.utf8))
        }
        for json in TodoReactor.exampleActions {
            _ = try decoder.decode(TodoReactor.Action.self, from: Data(json.utf8))
        }
        for json in SearchReactor.exampleActions {
            _ = try decoder.decode(SearchReactor.Action.self, from: Data(json.utf8))
        }
        for json in RemindersReactor.exampleActions {
            _ = try decoder.decode(RemindersReactor.Action.self, from: Data(json.utf8))
        }
        var catalog = ReactorCatalog()
        ExampleCatalog.register(in: &catalog, search: SearchReactor.sampleFetch)
        #expect(catalog.definitions.map(\.name) == ["counter", "fruit", "profile", "todo", "reminders", "search"])
        #expect(catalog.definitions.map(\.takesParams) == [false, false, true, false, false, false])
        #expect(catalog.definitions.allSatisfy { $0.schema != nil && !$0.exampleActions.isEmpty })
    }
}
