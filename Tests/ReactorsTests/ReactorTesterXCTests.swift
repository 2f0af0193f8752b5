import Reactors
import ReactorsTesting
import XCTest

/// The tester under XCTest: a passing test records nothing, and a failed assertion is an XCTest failure at the
/// line of the call, with the diff (Swift Testing's `Issue.record` would be lost here, silently).
final class ReactorTesterXCTests: XCTestCase {
    private var capturing = false
    private var captured: [(description: String, file: String, line: Int)] = []

    // While `capturing`, failures are kept for the test to examine instead of failing it; otherwise (the test's
    // own XCTAsserts) they fail the test as usual.
    override func recordFailure(
        withDescription description: String, inFile filePath: String, atLine lineNumber: Int,
        expected: Bool
    ) {
        if capturing {
            captured.append((description, filePath, lineNumber))
        } else {
            super.recordFailure(withDescription: description, inFile: filePath, atLine: lineNumber, expected: expected)
        }
    }

    func testAPassingTestRecordsNoFailure() async {
        capturing = true
        let clock = TestClock()
        let tester = ReactorTester(TesterSubject(clock: clock), clock: clock)
        await tester.send(.set(1)) { $0.value = 1 }
        await tester.send(.later(2, milliseconds: 100)) { $0.isLoading = true }
        await tester.receive(.value(2), timeout: .milliseconds(100)) { $0.value = 2 }
        await tester.receive(.loading(false)) { $0.isLoading = false }
        await tester.finish()
        capturing = false
        XCTAssertEqual(captured.map(\.description), [])
    }

    func testAFailedAssertionIsAnXCTestFailureAtTheLineOfTheCall() async {
        let tester = ReactorTester(TesterSubject())
        capturing = true
        let line = #line + 1
        await tester.send(.set(2)) { $0.value = 3 }
        await tester.send(.set(4))
        await tester.finish()
        capturing = false
        XCTAssertEqual(captured.count, 2, "\(captured)")
        XCTAssertEqual(captured.first?.line, line)
        XCTAssertEqual(captured.first?.file, #filePath)
        let first = captured.first?.description ?? ""
        XCTAssertTrue(first.contains("send(set(2)): the state (version 1) is not the expected one"), first)
        XCTAssertTrue(captured.first?.description.contains("value: 3 → 2") == true, "\(captured)")
        XCTAssertTrue(captured.last?.description.contains("arrived before finish() and were not asserted") == true)
        XCTAssertEqual(captured.last?.line, line + 2)
    }
}
