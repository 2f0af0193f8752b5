import Synchronization

/// Stored sessions found unable to load, by reactor (`reactor_session_load_failures_total`): each session
/// counted once per process, whether the check at start or a request found it.
public final class SessionLoadFailures: Sendable {
    private let sessions = Mutex<[String: Set<String>]>([:])

    public init() {}

    /// Notes that session `id` of reactor `reactor` would not load; once per session.
    public func note(reactor: String, session id: String) {
        sessions.withLock { _ = $0[reactor, default: []].insert(id) }
    }

    /// How many sessions of `reactor` were found unable to load.
    public func count(reactor: String) -> Int {
        sessions.withLock { $0[reactor]?.count ?? 0 }
    }

    /// Adds the family, one sample per reactor with a failure.
    func render(into text: inout PrometheusText) {
        let name = "reactor_session_load_failures_total"
        text.family(
            name, type: "counter",
            help:
                "Stored sessions that would not load (stored types that neither decode nor migrate, damaged records), "
                + "by reactor; each counted once per process, found by the check at start or by a request.")
        let counts = sessions.withLock { $0.mapValues(\.count) }
        for (reactor, count) in counts.sorted(by: { $0.key < $1.key }) {
            text.sample(name, labels: ["reactor": reactor], value: count)
        }
    }
}
