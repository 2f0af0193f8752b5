/// What a route needs before its responder runs, declared with it in ``Route/table``: whether it shows a
/// session (so its answer waits for the stored records it shows), whether it looks up the session of its
/// path and may load it from storage, and so whether it must wait on storage off the event loop (only
/// with a backend over the network, `StorageBackend.waitsOnNetwork`).
public enum RouteNeeds: Sendable, Equatable {
    /// No session: pages, the icon, health, metrics, the documents. Its answer waits for no stored record,
    /// and it never leaves the event loop (`/healthz` and `/metrics` must answer at once while storage fails).
    case noSession
    /// The sessions in memory here and the list of those stored (the admin listing): it loads none.
    case residentSessions
    /// The session of the path's `{id}`, loaded from storage when it is not in memory here: then, with
    /// storage over the network, the route runs off the event loop.
    case session
    /// Storage round trips whatever memory holds (it creates, deletes or forks a session, or follows several
    /// that may be anywhere): with storage over the network, the route always runs off the event loop.
    case storageRoundTrips

    /// Whether its answer shows some session's state, so what it shows must be durable before it leaves.
    public var showsSessionState: Bool { self != .noSession }

    /// Whether answering may wait on storage over the network, given whether the path's session is in
    /// memory here (asked only for ``session``).
    @inline(__always)
    func waitsOnStorage(sessionResident: @autoclosure () -> Bool) -> Bool {
        switch self {
        case .noSession, .residentSessions: false
        case .session: !sessionResident()
        case .storageRoundTrips: true
        }
    }
}
