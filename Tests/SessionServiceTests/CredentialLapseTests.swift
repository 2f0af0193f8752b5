import ReactorServerTesting
import Synchronization
import Testing
import Tokens

@testable import SessionService

/// The two tables behind "a stream ends when its credential lapses", without sockets: the streams noted
/// with the token each opened with (a replacement ends those of other tokens only), and the JWT deadlines
/// (one timer for the earliest, re-armed for the next).
@Suite struct CredentialLapseTests {
    /// A stream that records what ended it.
    final class RecordingStream: RevocableStream {
        let revoked = Mutex<[String?]>([])
        func revoke(_ id: String?, message: String) { revoked.withLock { $0.append(id) } }
        var ends: [String?] { revoked.withLock { $0 } }
    }

    static func hash(_ digit: Character) throws -> SessionTokenHash {
        try #require(SessionTokenHash(storedText: String(repeating: digit, count: 64)))
    }

    @Test func aReplacementEndsTheStreamsOfEveryOtherToken() throws {
        let streams = RevocableStreams()
        let (old, new, other) = (RecordingStream(), RecordingStream(), RecordingStream())
        streams.register(old, for: "a", matched: try Self.hash("1"))
        streams.register(new, for: "a", matched: try Self.hash("2"))
        streams.register(other, for: "b", matched: try Self.hash("1"))
        // Replaced by token 2 (this instance learns late: a stream already opened with 2 stays).
        #expect(streams.revoke("a", current: try Self.hash("2"), message: "replaced") == 1)
        #expect(old.ends == ["a"] && new.ends.isEmpty && other.ends.isEmpty)
        #expect(streams.revoke("a", current: try Self.hash("3"), message: "replaced") == 1)
        #expect(new.ends == ["a"] && old.ends == ["a"], "each stream is ended once")
        #expect(streams.revoke("a", current: try Self.hash("3"), message: "replaced") == 0)
        // Deleted (no stored hash): every stream of the session.
        #expect(streams.revoke("b", current: nil, message: "gone") == 1)
        #expect(other.ends == ["b"])
        #expect(streams.count == 0)
    }

    @Test func streamsThatWentAreSweptAway() throws {
        let streams = RevocableStreams()
        let kept = RecordingStream()
        streams.register(kept, for: "kept", matched: try Self.hash("1"))
        for index in 0..<1000 {
            streams.register(RecordingStream(), for: "s\(index % 10)", matched: try Self.hash("1"))
        }
        #expect(
            streams.count < 200, "the table is swept each time it doubles: \(streams.count) entries for 1 live stream")
        #expect(streams.revoke("kept", current: nil, message: "replaced") == 1)
        #expect(kept.ends == ["kept"])
    }

    @Test func eachStreamEndsAtItsDeadlineOnOneTimerReArmedForTheNext() async throws {
        let clock = InjectedClock()
        let ended = Counter()
        let expiring = ExpiringStreams(clock: clock, ended: ended)
        let now = Double(clock.wallNanoseconds() / 1_000_000_000)
        let (late, early, same) = (RecordingStream(), RecordingStream(), RecordingStream())
        expiring.add(late, endingAt: now + 100, message: "expired")
        expiring.add(early, endingAt: now + 50, message: "expired")
        expiring.add(same, endingAt: now + 49.5, message: "expired")
        // Armed for 100 s, then re-armed for 50 s (49.5 rounds up to the same second: no third timer).
        #expect(clock.scheduled.values == [.seconds(100), .seconds(50)])
        #expect(clock.pendingCount == 1, "the timer for 100 s was cancelled")

        await clock.advance(by: .seconds(49))
        #expect(early.ends.isEmpty && same.ends.isEmpty)
        await clock.advance(by: .seconds(1))
        #expect(early.ends == [nil] && same.ends == [nil], "every part of them")
        #expect(late.ends.isEmpty)
        #expect(clock.scheduled.values.last == .seconds(50), "re-armed for the next deadline")
        await clock.advance(by: .seconds(50))
        #expect(late.ends == [nil])
        #expect(ended.value == 3)
        #expect(expiring.count == 0 && clock.pendingCount == 0)

        // A stream gone before its deadline is not counted, and a deadline past the year 2262 arms a year ahead.
        expiring.add(RecordingStream(), endingAt: now + 200, message: "expired")
        expiring.add(late, endingAt: .greatestFiniteMagnitude, message: "expired")
        await clock.advance(by: .seconds(100))
        #expect(ended.value == 3)
        #expect(clock.scheduled.values.last == .seconds(365 * 86_400))
    }
}
