// swift-format-ignore-file
// (a test holds this file to the documentation line for line, so it keeps the layout the docs show)
// README.md's ReactorTester example, compiled and run here (ReadmeTesterExampleTests keeps the two texts equal).

import Examples
import ReactorsTesting
import Testing

@Test func cherriesShowAfterHalfASecond() async {
    let clock = TestClock()                                   // the clock the reactor's effects sleep on
    let tester = ReactorTester(FruitReactor(clock: clock), clock: clock)
    await tester.send(.cherries) { $0.isLoading = true }     // the first state the action produces
    await tester.receive(.setFruitName("cherries"), timeout: .milliseconds(500)) {
        $0.fruitName = "cherries"                             // the clock runs, up to 500 ms, until it comes
    }
    await tester.receive(.setLoading(false)) { $0.isLoading = false }
    await tester.finish()                                     // fails for anything unasserted or still running
}

@Test func aSecondChoiceCancelsTheFirst() async {             // ReactorKit's RxTest style
    let clock = TestClock()
    let tester = ReactorTester(FruitReactor(clock: clock), clock: clock)
    tester.schedule(.orange, at: .zero)
    tester.schedule(.cherries, at: .milliseconds(200))
    await tester.run()                                        // deadline by deadline, until nothing is left
    await tester.receive(.setLoading(true), at: .zero) { $0.isLoading = true }
    await tester.receive(.setLoading(true), at: .milliseconds(200))   // no closure: the state did not change
    await tester.receive(.setFruitName("cherries"), at: .milliseconds(700)) { $0.fruitName = "cherries" }
    await tester.receive(.setLoading(false), at: .milliseconds(700)) { $0.isLoading = false }
    await tester.finish()
}

@Test func everyAlertIsAPulse() async {
    let tester = ReactorTester(TodoReactor())
    await tester.send(.add(title: " ")) { $0.alert = "A todo needs a title." }   // assigning asserts the pulse
    await tester.send(.add(title: " ")) { $0.alert = "A todo needs a title." }   // the same text is a new one
    await tester.finish()
}
