import Synchronization

/// The profile example's user service, in process: who is followed, by user id, shared by every session
/// that asks it (two profile sessions of one user agree after a refresh). Each call takes `latency` on
/// `clock` (a test's injected clock), as a network call would.
///
/// ```swift
/// let users = FakeUserService(clock: clock, latency: .milliseconds(300))
/// try await users.follow(7)          // true, 300 ms later
/// try await users.isFollowing(7)     // true
/// ```
public final class FakeUserService: Sendable {
    /// How long every call takes.
    public let latency: Duration
    private let clock: any Clock<Duration>
    private let following = Mutex<Set<Int>>([])

    /// A service where nobody is followed yet, answering after `latency` on `clock`.
    public init(clock: any Clock<Duration> = ContinuousClock(), latency: Duration = .milliseconds(300)) {
        self.clock = clock
        self.latency = latency
    }

    /// Whether `userID` is followed.
    public func isFollowing(_ userID: Int) async throws -> Bool {
        try await clock.sleep(for: latency)
        return following.withLock { $0.contains(userID) }
    }

    /// Follows `userID`; returns whether it is followed now (true).
    public func follow(_ userID: Int) async throws -> Bool {
        try await clock.sleep(for: latency)
        following.withLock { _ = $0.insert(userID) }
        return true
    }

    /// Stops following `userID`; returns whether it is followed now (false).
    public func unfollow(_ userID: Int) async throws -> Bool {
        try await clock.sleep(for: latency)
        following.withLock { _ = $0.remove(userID) }
        return false
    }
}
