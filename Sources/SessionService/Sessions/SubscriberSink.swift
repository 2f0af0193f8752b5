/// Where the events of one subscription go: an SSE response, one session's part of a multiplexed
/// stream, or any later transport. The session decides what a subscriber gets and when (versions in
/// order and never twice, states skipped while it is behind, pulses held up to `sse.pulseBuffer`,
/// `select`); a sink only turns events into its wire format and queues them.
///
/// Every call comes under the session's lock: a sink must not call into any session from it (a
/// multiplexed stream that must leave its other sessions does so later, from its own thread).
///
/// ```swift
/// final class LineSink: SubscriberSink {
///     func send(_ event: SessionEvent, in batch: inout DeliveryBatch) -> DeliveryResult {
///         print(String(decoding: event.json, as: UTF8.self))
///         return .queued
///     }
///     func finish(_ end: SubscriptionEnd) { print("ended: \(end)") }
///     var queuedByteCount: Int { 0 }
/// }
/// ```
public protocol SubscriberSink: AnyObject, Sendable {
    /// Queues `event` for the subscriber. `.overflow` queues nothing: the transport then reports
    /// ``SubscriberNotice/drained`` once it can take more, and the session sends what was held back.
    func send(_ event: SessionEvent, in batch: inout DeliveryBatch) -> DeliveryResult
    /// Ends the subscription with a last event saying why; nothing is sent after it.
    func finish(_ end: SubscriptionEnd)
    /// Bytes queued and not yet written (the admin listing shows them).
    var queuedByteCount: Int { get }
}

/// What became of one ``SubscriberSink/send(_:in:)``.
public enum DeliveryResult: Sendable, Equatable {
    /// The event will be written.
    case queued
    /// The transport's buffer is full: nothing was queued.
    case overflow
    /// The subscription's transport has ended.
    case closed
}

/// Why a session ends a subscription (the transport words it: API.md's `event: end` and `event: error`).
public enum SubscriptionEnd: Sendable, Equatable {
    /// The session was deleted (or expired).
    case deleted
    /// The session cannot be followed through this subscription any more (`session_moved`,
    /// `session_passivated`, …); subscribing again from the last version follows it.
    case unavailable(code: String, message: String)
    /// The subscriber's transport fell too far behind: more pulses waited than `sse.pulseBuffer`.
    case tooSlow(message: String)

    /// API.md's `session_moved`, the one place the code is spelled.
    public static let movedCode = "session_moved"

    /// The session runs elsewhere now (taken over, handed off, or no longer relayed here): `message` says why;
    /// reconnecting follows it.
    public static func moved(_ message: String) -> SubscriptionEnd { .unavailable(code: movedCode, message: message) }
}

/// What a transport reports about one subscription, from its own thread with no lock held.
public enum SubscriberNotice: Sendable, Equatable {
    /// Its buffer emptied after an `.overflow`: the session sends the latest state and held pulses.
    case drained
    /// The transport ended it (peer gone, timeout, shutdown): the session forgets the subscriber.
    case closed
}

/// Whether ``SessionStreamSource/subscribe(_:sink:)`` registered the subscriber; when not, its sink was not used.
public enum SubscribeOutcome: Sendable, Equatable {
    case subscribed
    /// The session has ended (deleted meanwhile).
    case ended
    /// The session left memory as the subscriber came: look it up again (it loads back) and retry.
    case passivated
}
