import Foundation
import Testing

@testable import ReactorClient

/// The action log's `at` times, read without a formatter.
@Suite struct RFC3339Tests {
    @Test(arguments: [
        ("1970-01-01T00:00:00Z", 0.0),
        ("1970-01-01T00:00:00.000Z", 0.0),
        ("2000-02-29T12:34:56.789Z", 951_827_696.789),
        ("2025-03-01T00:00:00Z", 1_740_787_200.0),
        ("1969-12-31T23:59:59Z", -1.0),
        ("2025-03-01T01:30:00+01:30", 1_740_787_200.0),
        ("2025-02-28T22:00:00-02:00", 1_740_787_200.0),
        ("2024-12-31T23:59:60Z", 1_735_689_600.0),
    ])
    func validTimes(text: String, seconds: Double) throws {
        let date = try #require(RFC3339.date(text))
        #expect(abs(date.timeIntervalSince1970 - seconds) < 0.0005, "\(text)")
    }

    @Test(arguments: [
        "", "2025-03-01", "2025-03-01T00:00:00", "2025-13-01T00:00:00Z", "2025-03-01T24:00:00Z",
        "2025-03-01T00:00:00.Z", "2025-03-01 00:00:00Z", "2025-03-01T00:00:00Zjunk", "2025-03-01T00:00:00+0100",
        "+025-03-01T00:00:00Z",
    ])
    func invalidTimes(text: String) {
        #expect(RFC3339.date(text) == nil)
    }
}
