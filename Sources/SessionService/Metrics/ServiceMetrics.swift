import Synchronization

/// The service's metrics, served at `GET /metrics` in the Prometheus text format.
public final class ServiceMetrics: Sendable {
    public let actionsAccepted = Counter()
    public let statesEmitted = Counter()
    public let subscriberDrops = Counter()
    public let subscribersClosedSlow = Counter()
    /// Patches made for subscribers that asked for them (`?delta=json-patch`): one per version and `select`.
    public let statePatches = Counter()
    public let sessions = Gauge()
    public let subscribers = Gauge()
    /// Sessions quarantined because their reactor crashed the server (their crash records are kept).
    public let sessionsQuarantined = Gauge()
    /// Event streams refused because their client address held `sse.maxSubscribersPerAddress` subscribers.
    public let subscribersRefusedPerAddress = Counter()
    /// Actions refused because their client address spent `limits.actionBytesPerMinute`.
    public let actionsRefusedForBytes = Counter()
    /// Actions refused (503 session_busy) because `sessions.maxQueuedActions` already waited for their reactor.
    public let actionsRefusedBusy = Counter()
    /// Answers acknowledging a change replaced by 503 because their records could not be stored.
    public let answersNotStored = Counter()
    /// Event streams ended (`unauthorized`) because their token was replaced, or their JWT expired.
    public let streamsEndedTokenReplaced = Counter()
    public let streamsEndedJWTExpired = Counter()
    /// Timers whose action was sent (`Effect.schedule`), and sessions with a pending timer (in memory or not).
    public let timersFired = Counter()
    public let timerSessions = Gauge()
    /// Time one `reduce` call takes, by reactor, measured around the reactor's own function.
    private let reduceTimings = Mutex<[String: ReduceTiming]>([:])
    /// Stored sessions found unable to load, by reactor.
    public let loadFailures = SessionLoadFailures()
    private let requests = RequestCounters()
    /// The storage backend, which adds its own families (the NATS backend's latencies and take-overs).
    /// An object, not a closure: a closure stored as a `Mutex`'s value is wrapped in two more
    /// reabstraction thunks at every `withLock` that reads it (swiftlang/swift#91348), so each scrape
    /// leaked them and called through all the earlier ones (96 B more and a little slower per scrape).
    let storageMetrics = Mutex<(any MetricsSource)?>(nil)

    public init() {}

    /// The reduce times of `reactor`'s sessions (made on first use; a session asks once, when it starts).
    public func reduceTiming(reactor: String) -> ReduceTiming {
        reduceTimings.withLock { timings in
            if let timing = timings[reactor] { return timing }
            let timing = ReduceTiming(reactor: reactor)
            timings[reactor] = timing
            return timing
        }
    }

    /// Counts one answered request.
    public func countRequest(route: Route?, status: Int) {
        requests.count(route: route, status: status)
    }

    /// How many requests were answered with this route (nil: unmatched) and status.
    public func requestCount(route: Route?, status: Int) -> Int {
        requests.value(route: route, status: status)
    }

    /// The exposition text.
    public func render() -> String {
        var text = PrometheusText()
        text.family(
            "reactor_http_requests_total", type: "counter", help: "HTTP requests answered, by route and status.")
        for sample in requests.samples() {
            text.sample(
                "reactor_http_requests_total", labels: ["route": sample.route, "status": sample.status],
                value: sample.count)
        }
        text.family("reactor_sessions", type: "gauge", help: "Sessions currently hosted.")
        text.sample("reactor_sessions", value: sessions.value)
        text.family("reactor_subscribers", type: "gauge", help: "Open Server-Sent Event subscriptions.")
        text.sample("reactor_subscribers", value: subscribers.value)
        text.family(
            "reactor_sessions_quarantined", type: "gauge",
            help: "Sessions quarantined because their reactor crashed the server: "
                + "they answer 409 until released or deleted.")
        text.sample("reactor_sessions_quarantined", value: sessionsQuarantined.value)
        text.family("reactor_actions_accepted_total", type: "counter", help: "Actions accepted (202 or 200 with wait).")
        text.sample("reactor_actions_accepted_total", value: actionsAccepted.value)
        text.family(
            "reactor_timers_fired_total", type: "counter", help: "Timers whose action was sent to their session.")
        text.sample("reactor_timers_fired_total", value: timersFired.value)
        text.family("reactor_timer_sessions", type: "gauge", help: "Sessions with a pending timer, in memory or not.")
        text.sample("reactor_timer_sessions", value: timerSessions.value)
        text.family(
            "reactor_states_emitted_total", type: "counter",
            help: "New state versions produced by reducers or forced by stub mode.")
        text.sample("reactor_states_emitted_total", value: statesEmitted.value)
        text.family(
            "reactor_subscriber_drops_total", type: "counter",
            help: "States skipped for subscribers too slow to read them (they get the latest later).")
        text.sample("reactor_subscriber_drops_total", value: subscriberDrops.value)
        text.family(
            "reactor_state_patches_total", type: "counter",
            help: "JSON Patches made for delta=json-patch streams, one per version (and select pointer) for them all.")
        text.sample("reactor_state_patches_total", value: statePatches.value)
        text.family(
            "reactor_subscribers_closed_slow_total", type: "counter",
            help: "Subscriptions closed with event: error because pulses overflowed their buffer.")
        text.sample("reactor_subscribers_closed_slow_total", value: subscribersClosedSlow.value)
        text.family(
            "reactor_limit_refusals_total", type: "counter",
            help: "Requests refused by a per-client limit other than the request rate, by its setting.")
        text.sample(
            "reactor_limit_refusals_total", labels: ["limit": "sse.maxSubscribersPerAddress"],
            value: subscribersRefusedPerAddress.value)
        text.sample(
            "reactor_limit_refusals_total", labels: ["limit": "limits.actionBytesPerMinute"],
            value: actionsRefusedForBytes.value)
        text.family(
            "reactor_actions_refused_busy_total", type: "counter",
            help: "Actions refused with 503 session_busy: sessions.maxQueuedActions already waited for their reactor.")
        text.sample("reactor_actions_refused_busy_total", value: actionsRefusedBusy.value)
        text.family(
            "reactor_answers_not_stored_total", type: "counter",
            help:
                "Answers acknowledging a change that were replaced by 503 storage_unavailable "
                + "because their records could not be stored "
                + "(reactor_http_requests_total and the access log show the status the route chose)."
        )
        text.sample("reactor_answers_not_stored_total", value: answersNotStored.value)
        let ended = "reactor_streams_ended_unauthorized_total"
        text.family(
            ended, type: "counter",
            help: "Event streams ended with unauthorized because the credential that opened them lapsed: its token was "
                + "replaced, or its JWT reached exp plus the leeway (a multiplexed stream counts once per session part "
                + "for a token, once for a JWT).")
        text.sample(ended, labels: ["reason": "token_replaced"], value: streamsEndedTokenReplaced.value)
        text.sample(ended, labels: ["reason": "jwt_expired"], value: streamsEndedJWTExpired.value)
        let timings = reduceTimings.withLock { $0.values.sorted { $0.reactor < $1.reactor } }
        text.family("reactor_reduce_seconds", type: "histogram", help: "Time spent in one reduce call, by reactor.")
        for timing in timings {
            text.histogramSamples("reactor_reduce_seconds", labels: ["reactor": timing.reactor], timing.histogram)
        }
        loadFailures.render(into: &text)
        let heap = ProcessHeap.current()
        text.family(
            "reactor_process_heap_bytes", type: "gauge",
            help:
                "The C allocator's heap: in_use by live allocations, free held by the allocator for reuse "
                + "(resident memory growing with in_use flat is the allocator's, not data kept)."
        )
        text.sample("reactor_process_heap_bytes", labels: ["state": "in_use"], value: Int(clamping: heap.inUse))
        text.sample("reactor_process_heap_bytes", labels: ["state": "free"], value: Int(clamping: heap.free))
        storageMetrics.withLock { $0 }?.renderMetrics(into: &text)
        return text.output
    }
}
