import Examples
import Foundation
import Reactors
import ReactorsTesting
import Testing

@Suite struct FruitReactorTests {
    /// The post's five buttons, in its order, and the name its reducer shows for each.
    static let fruits: [(FruitReactor.Action, String)] = [
        (.apple, "apple"), (.grapes, "grapes"), (.banana, "banana"), (.cherries, "cherries"), (.orange, "orange"),
    ]

    @Test func theFiveFruitsOfThePostInTheOrderOfItsButtons() {
        #expect(FruitReactor.Action.allCases == Self.fruits.map(\.0))
        #expect(FruitReactor.exampleActions == Self.fruits.map { #"{"type":"\#($0.1)"}"# })
        #expect(FruitReactor.schema.actions.map(\.type) == Self.fruits.map(\.1))
    }

    @Test(arguments: fruits)
    func choosingAFruitShowsTheSpinnerThenItsNameAfter500ms(fruit: FruitReactor.Action, name: String) async {
        let clock = TestClock()
        let tester = ReactorTester(FruitReactor(clock: clock), clock: clock)
        await tester.send(fruit) { $0.isLoading = true }
        // Still spinning at 499 ms: nothing arrives while the clock runs that far.
        await tester.advance(by: .milliseconds(499))
        tester.expectNoUnassertedStates()
        await tester.receive(.setFruitName(name), timeout: .milliseconds(1), at: .milliseconds(500)) {
            $0.fruitName = name
        }
        await tester.receive(.setLoading(false), at: .milliseconds(500)) { $0.isLoading = false }
        await tester.finish()
    }

    /// RxTest style: taps at virtual times. Unlike the post's reactor, a new choice cancels the one in flight, so a
    /// slow earlier fruit can neither replace the later one nor hide the spinner early.
    @Test func aNewChoiceCancelsTheOneInFlight() async {
        let clock = TestClock()
        let tester = ReactorTester(FruitReactor(clock: clock), clock: clock)
        tester.schedule(.orange, at: .zero)
        tester.schedule(.cherries, at: .milliseconds(200))
        await tester.run()
        await tester.receive(.setLoading(true), at: .zero) { $0.isLoading = true }
        await tester.receive(.setLoading(true), at: .milliseconds(200))
        await tester.receive(.setFruitName("cherries"), at: .milliseconds(700)) { $0.fruitName = "cherries" }
        await tester.receive(.setLoading(false), at: .milliseconds(700)) { $0.isLoading = false }
        await tester.finish()
    }

    @Test func theNextChoiceStartsFromTheFruitShown() async {
        let clock = TestClock()
        let tester = ReactorTester(FruitReactor(clock: clock), clock: clock)
        await tester.send(.apple) { $0.isLoading = true }
        await tester.receive(.setFruitName("apple"), timeout: .milliseconds(500)) { $0.fruitName = "apple" }
        await tester.receive(.setLoading(false)) { $0.isLoading = false }
        // The apple stays on screen under the spinner until the grapes are there.
        await tester.send(.grapes) { $0.isLoading = true }
        #expect(tester.state == .init(fruitName: "apple", isLoading: true))
        await tester.receive(.setFruitName("grapes"), timeout: .milliseconds(500)) { $0.fruitName = "grapes" }
        await tester.receive(.setLoading(false)) { $0.isLoading = false }
        await tester.finish()
    }

    @Test func aChoiceCutOffByAServerStopLeavesNoSpinner() {
        let reactor = FruitReactor()
        let spinning = FruitReactor.State(fruitName: "apple", isLoading: true)
        #expect(reactor.recover(interrupted: .banana, state: spinning) == [.setLoading(false)])
        #expect(reactor.recover(interrupted: .banana, state: .init(fruitName: "apple", isLoading: false)).isEmpty)
    }

    @Test(arguments: FruitReactor.Action.allCases)
    func actionsRoundTripTheWireShape(action: FruitReactor.Action) throws {
        let json = #"{"type":"\#(action.rawValue)"}"#
        #expect(try JSONDecoder().decode(FruitReactor.Action.self, from: Data(json.utf8)) == action)
        #expect(try JSONDecoder().decode(FruitReactor.Action.self, from: JSONEncoder().encode(action)) == action)
    }
}
