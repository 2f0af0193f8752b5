import Synchronization

/// Every live session by id, with the session limit.
public final class SessionStore: Sendable {
    private let sessions = Mutex<[String: any HostedSession]>([:])
    public let limit: Int

    public init(limit: Int) { self.limit = limit }

    /// Why a session could not be added.
    public enum InsertError: Error, Sendable {
        case exists
        case full
    }

    /// The session with this id.
    public func session(_ id: String) -> (any HostedSession)? {
        sessions.withLock { $0[id] }
    }

    /// Adds a session built by `make` under `id`, unless the id is taken or the limit is reached.
    public func insert(id: String, _ make: () -> any HostedSession) throws(InsertError) -> any HostedSession {
        try sessions.withLock { (sessions: inout [String: any HostedSession]) throws(InsertError) -> any HostedSession in
            guard sessions[id] == nil else { throw .exists }
            guard sessions.count < limit else { throw .full }
            let session = make()
            sessions[id] = session
            return session
        }
    }

    /// Removes and returns the session (the caller ends it outside the lock).
    public func remove(_ id: String) -> (any HostedSession)? {
        sessions.withLock { $0.removeValue(forKey: id) }
    }

    public var count: Int { sessions.withLock { $0.count } }

    /// All sessions, sorted by id (admin listing).
    public func all() -> [any HostedSession] {
        sessions.withLock { Array($0.values) }.sorted { $0.id < $1.id }
    }

    /// Removes sessions without subscribers whose last activity is before `cutoff`; returns them.
    public func removeIdle(before cutoff: UInt64) -> [any HostedSession] {
        sessions.withLock { sessions in
            let idle = sessions.values.filter { $0.lastActive < cutoff && $0.subscriberCount == 0 }
            for session in idle { sessions.removeValue(forKey: session.id) }
            return idle
        }
    }
}
