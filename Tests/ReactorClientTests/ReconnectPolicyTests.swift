import ReactorClient
import Testing

/// The waits between attempts: doubling from the base, capped, the server's `retry:` as the base, jitter.
@Suite struct ReconnectPolicyTests {
    let policy = ReconnectPolicy(initialDelay: .seconds(1), maximumDelay: .seconds(10), multiplier: 2, jitter: 0.5)

    @Test func doublesUpToTheCap() {
        let delays = (0..<7).map { policy.delay(failures: $0, serverRetry: nil, random: 0) }
        #expect(
            delays == [.seconds(1), .seconds(2), .seconds(4), .seconds(8), .seconds(10), .seconds(10), .seconds(10)])
    }

    @Test func theServersRetryIsTheBaseAndMayExceedTheCap() {
        #expect(policy.delay(failures: 0, serverRetry: .milliseconds(250), random: 0) == .milliseconds(250))
        #expect(policy.delay(failures: 3, serverRetry: .milliseconds(250), random: 0) == .seconds(2))
        #expect(policy.delay(failures: 0, serverRetry: .seconds(60), random: 0) == .seconds(60))
        #expect(policy.delay(failures: 5, serverRetry: .seconds(60), random: 0) == .seconds(60))
    }

    @Test func jitterOnlyShortens() {
        #expect(policy.delay(failures: 1, serverRetry: nil, random: 0.999) > .milliseconds(1000))
        #expect(policy.delay(failures: 1, serverRetry: nil, random: 0.5) == .milliseconds(1500))
        #expect(ReconnectPolicy(jitter: 7).delay(failures: 0, serverRetry: nil, random: 0.5) == .milliseconds(500))
    }

    @Test func hugeCountsDoNotOverflow() {
        #expect(policy.delay(failures: 10_000, serverRetry: nil, random: 0) == .seconds(10))
        #expect(ReconnectPolicy(initialDelay: .zero).delay(failures: 50, serverRetry: nil, random: 0) == .zero)
    }
}
