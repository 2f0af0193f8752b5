import Examples
import Foundation
import Reactors
import ReactorsTesting
import Testing

@Suite struct FruitReactorTests {
    @Test func choosingAFruitShowsTheSpinnerThenTheNameAfter500ms() async {
        let clock = TestClock()
        let tester = ReactorTester(FruitReactor(clock: clock))
        await tester.send(.apple, expecting: .init(fruitName: "", isLoading: true))
        await clock.waitForSleepers()
        await clock.advance(by: .milliseconds(499))
        // Still asleep at 499 ms (a wake is seen here at once: the sleeper leaves the clock as it is woken).
        #expect(clock.sleeperCount == 1, "the delay ended before 500 ms")
        #expect(tester.runtime.currentState == .init(fruitName: "", isLoading: true))
        tester.expectNoUnassertedStates()
        await clock.advance(by: .milliseconds(1))
        await tester.receive(.init(fruitName: "Apple", isLoading: true), .init(fruitName: "Apple", isLoading: false))
        await tester.waitForEffects()
        await tester.finish()
    }

    @Test func aChoiceCutOffByAServerStopLeavesNoSpinner() {
        let reactor = FruitReactor()
        let spinning = FruitReactor.State(fruitName: "Apple", isLoading: true)
        #expect(reactor.recover(interrupted: .banana, state: spinning) == [.setLoading(false)])
        #expect(reactor.recover(interrupted: .banana, state: .init(fruitName: "Apple", isLoading: false)).isEmpty)
    }

    @Test func aNewChoiceCancelsTheOneInFlight() async {
        let clock = TestClock()
        let tester = ReactorTester(FruitReactor(clock: clock))
        await tester.send(.apple, expecting: .init(fruitName: "", isLoading: true))
        await clock.waitForSleepers()
        await tester.send(.grapes, expecting: .init(fruitName: "", isLoading: true))
        // Apple's sleep was cancelled; this is grapes' own.
        await clock.waitForSleepers()
        await clock.run()
        await tester.receive(.init(fruitName: "Grapes", isLoading: true), .init(fruitName: "Grapes", isLoading: false))
        await tester.waitForEffects()
        await tester.finish()
    }

    @Test(arguments: FruitReactor.Action.allCases)
    func actionsRoundTripTheWireShape(action: FruitReactor.Action) throws {
        let json = #"{"type":"\#(action.rawValue)"}"#
        #expect(try JSONDecoder().decode(FruitReactor.Action.self, from: Data(json.utf8)) == action)
        #expect(try JSONDecoder().decode(FruitReactor.Action.self, from: JSONEncoder().encode(action)) == action)
    }
}
