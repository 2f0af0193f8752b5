import Reactors

// The first tester's form, kept for tests that read better with whole states: each expected state is compared
// whole (pulse counts included), under the same exhaustivity, diff and reporting as the mutation form.
extension ReactorTester {
    /// Sends `action`, then asserts that the next states are exactly `first`, then `more`, in order.
    public func send(
        _ action: R.Action, expecting first: R.State, _ more: R.State...,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        let site = CallSite(fileID: fileID, filePath: filePath, line: line, column: column)
        skipPending(before: "send(\(action))", at: site)
        guard submit(action, at: site) else { return }
        await receiveWhole([first] + more, context: "send(\(action))", at: site)
    }

    /// Asserts that the next states are exactly `first`, then `more`, in order, waiting for them if needed.
    public func receive(
        _ first: R.State, _ more: R.State...,
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        await receiveWhole(
            [first] + more, context: "receive",
            at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Asserts that the next states are exactly `expected`, in order, waiting for them if needed.
    public func receive(
        _ expected: [R.State],
        fileID: StaticString = #fileID, filePath: StaticString = #filePath, line: UInt = #line, column: UInt = #column
    ) async {
        await receiveWhole(
            expected, context: "receive",
            at: CallSite(fileID: fileID, filePath: filePath, line: line, column: column))
    }

    /// Asserts each of `expected` in turn as the next state.
    private func receiveWhole(_ expected: [R.State], context: String, at site: CallSite) async {
        for (index, state) in expected.enumerated() {
            let label = expected.count > 1 ? "\(context), state \(index + 1) of \(expected.count)" : context
            await expectState(matching: nil, timeout: nil, time: nil, { $0 = state }, context: label, at: site)
        }
    }
}
