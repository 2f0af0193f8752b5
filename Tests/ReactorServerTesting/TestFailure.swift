/// The one error the toolkit and the tests throw when something did not happen; its description says
/// what was awaited and what was seen instead.
///
/// ```swift
/// guard response.status == 201 else {
///     throw TestFailure("creating the session answered \(response.status): \(response.text)")
/// }
/// ```
public struct TestFailure: Error, Equatable, CustomStringConvertible {
    /// What did not happen, for the test report.
    public var description: String

    /// A failure saying `description`.
    public init(_ description: String) { self.description = description }
}

/// How long a test waits for something before it fails, unless it says otherwise. Generous (the CI
/// machine has two cores shared by parallel tests): reaching it means the awaited thing never happens.
public let defaultBound: Duration = .seconds(30)

extension Duration {
    /// `"30 s"`, `"250 ms"`: a bound as a failure message shows it.
    var spoken: String {
        let milliseconds = components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}
