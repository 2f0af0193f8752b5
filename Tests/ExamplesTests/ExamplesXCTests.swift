import Examples
import ReactorsTesting
import XCTest

/// The same tester under XCTest: an assertion that fails is an XCTest failure at its line.
final class ExamplesXCTests: XCTestCase {
    func testCounterIncreasesAndDecreases() async {
        let tester = ReactorTester(CounterReactor())
        await tester.send(.increase) { $0.value = 1 }
        await tester.send(.decrease) { $0.value = 0 }
        await tester.finish()
    }

    func testFruitShowsItsNameAfter500msOnTheTestClock() async {
        let clock = TestClock()
        let tester = ReactorTester(FruitReactor(clock: clock), clock: clock)
        await tester.send(.orange) { $0.isLoading = true }
        await tester.receive(.setFruitName("orange"), timeout: .milliseconds(500)) { $0.fruitName = "orange" }
        await tester.receive(.setLoading(false)) { $0.isLoading = false }
        await tester.finish()
    }
}
