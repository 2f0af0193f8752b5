import Foundation
import ReactorServerTesting
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One event-stream client thread per session, as a browser's EventSource behaves: it follows
/// `/sessions/{id}/events` and, whenever the stream ends (cut by a kill, `event: error`, a read that
/// timed out) or has been open for `rotation`, reconnects with `Last-Event-ID` set to the last
/// version it saw. Every version it sees goes to the ledger; one not above the last it saw (a version
/// gone backwards or repeated across a reconnection) is a violation. Rotating streams makes every
/// client resume many times, not only when an instance dies or a session moves.
///
/// With ``startMultiplexed(_:)`` one more client follows every session over one `GET /events?sessions=…`, and
/// reconnects with the stream's cursor whenever the stream ends or one of its parts does (a session moved).
final class ResumingSubscribers: Sendable {
    private let port: Int
    private let ledger: AcknowledgementLedger
    private let rotation: Duration
    private let credentials: ClusterCredentials?
    private let running = Atomic<Bool>(true)
    private let finished = DispatchGroup()
    private let problems = Mutex<[String]>([])
    private let counts = Mutex<[String: Int]>([:])
    /// The newest version each session's own stream and the multiplexed stream showed.
    private let seen = Mutex<(single: [String: Int], multiplexed: [String: Int])>(([:], [:]))

    init(
        port: Int, ledger: AcknowledgementLedger, rotation: Duration = .seconds(2),
        credentials: ClusterCredentials? = nil
    ) {
        self.port = port
        self.ledger = ledger
        self.rotation = rotation
        self.credentials = credentials
    }

    /// Versions that went backwards or repeated, with the session.
    var violations: [String] { problems.withLock { $0 } }
    /// What happened to the streams: `streams` opened, `states` seen, `refused <status>`, `cut`,
    /// `error <code>`, `rotated`; the multiplexed stream's counts start with `multiplexed`.
    var tally: [String: Int] { counts.withLock { $0 } }
    /// The newest version each session's own stream showed.
    var newestSingle: [String: Int] { seen.withLock { $0.single } }
    /// The newest version the multiplexed stream showed of each session.
    var newestMultiplexed: [String: Int] { seen.withLock { $0.multiplexed } }

    func start(_ ids: [String]) {
        for id in ids {
            finished.enter()
            let thread = Thread { [self] in
                defer { finished.leave() }
                var last: Int?
                while running.load(ordering: .relaxed) { follow(id, after: &last) }
            }
            thread.start()
        }
    }

    private func count(_ what: String) { counts.withLock { $0[what, default: 0] += 1 } }

    /// Follows one stream of `id` until it ends or rotates; `last` is the version seen last.
    private func follow(_ id: String, after last: inout Int?) {
        var servedBy = "?"
        guard let client = try? TestClient(port: port, readTimeout: .seconds(3)) else {
            count("no connection")
            usleep(20_000)
            return
        }
        do {
            let resume = last.map { [("Last-Event-ID", "\($0)")] } ?? []
            let head = try client.openEventStream(
                "/sessions/\(id)/events", headers: resume + (credentials?.headers(id) ?? []))
            servedBy = head.header("X-Served-By") ?? "?"
        } catch {
            // A 503 while the session changes instance, or a connection cut on a killed one.
            count("refused")
            usleep(20_000)
            return
        }
        count("streams")
        let opened = ContinuousClock.now
        while running.load(ordering: .relaxed) {
            guard ContinuousClock.now - opened < rotation else { return count("rotated") }
            guard let event = try? client.nextEvent() else { return count("cut") }
            switch event.event {
            case "state":
                guard let version = event.id.flatMap({ Int($0) }) else {
                    problems.withLock { $0.append("\(id): a state event without a version id: \(event)") }
                    return
                }
                if let last, version <= last {
                    problems.withLock {
                        $0.append("\(id): version \(version) came after \(last) (a stream served by \(servedBy))")
                    }
                }
                last = version
                ledger.saw(id, version: version)
                seen.withLock { $0.single[id] = version }
                count("states")
            case "error":
                let code =
                    (event.data.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Any])?[
                        "code"] as? String
                return count("error \(code ?? "?")")
            case "end":
                problems.withLock {
                    $0.append("\(id): the stream ended (\(event.data ?? "")) though nothing deletes it")
                }
                return
            default:
                continue
            }
        }
    }

    /// Starts the client that follows every session of `ids` over one multiplexed stream.
    func startMultiplexed(_ ids: [String]) {
        finished.enter()
        let thread = Thread { [self] in
            defer { finished.leave() }
            var cursor: String?
            var last: [String: Int] = [:]
            while running.load(ordering: .relaxed) { followMultiplexed(ids, cursor: &cursor, last: &last) }
        }
        thread.start()
    }

    /// Follows the multiplexed stream until it (or any part of it) ends or rotates.
    private func followMultiplexed(_ ids: [String], cursor: inout String?, last: inout [String: Int]) {
        guard let client = try? TestClient(port: port, readTimeout: .seconds(3)) else {
            count("multiplexed no connection")
            usleep(20_000)
            return
        }
        let (headers, query) = credentials?.multiplexed(ids) ?? ([], "")
        do {
            let resume = cursor.map { [("Last-Event-ID", $0)] } ?? []
            try client.openEventStream(
                "/events?sessions=\(ids.joined(separator: ","))\(query)", headers: resume + headers)
        } catch {
            count("multiplexed refused")
            usleep(20_000)
            return
        }
        count("multiplexed streams")
        let opened = ContinuousClock.now
        while running.load(ordering: .relaxed) {
            guard ContinuousClock.now - opened < rotation else { return count("multiplexed rotated") }
            guard let event = try? client.nextEvent() else { return count("multiplexed cut") }
            if let id = event.id { cursor = id }
            let data = event.data.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Any]
            let session = data?["session"] as? String ?? "?"
            switch event.event {
            case "state":
                guard let version = data?["version"] as? Int else {
                    problems.withLock { $0.append("multiplexed: a state event without a version: \(event)") }
                    return
                }
                if let previous = last[session], version <= previous {
                    problems.withLock { $0.append("multiplexed \(session): version \(version) came after \(previous)") }
                }
                last[session] = version
                ledger.saw(session, version: version)
                seen.withLock { $0.multiplexed[session] = version }
                count("multiplexed states")
            case "error":
                // A part ended (its session moved, …): the client opens the stream again to follow it.
                return count("multiplexed error \(data?["code"] as? String ?? "?")")
            case "end":
                problems.withLock {
                    $0.append(
                        "multiplexed: the part of \(session) ended (\(event.data ?? "")) though nothing deletes it")
                }
                return
            default:
                continue
            }
        }
    }

    /// Stops the clients and waits (bounded) for them.
    func stop() throws {
        running.store(false, ordering: .relaxed)
        guard finished.wait(timeout: .now() + 30) == .success else {
            throw TestFailure("the event-stream clients did not stop within 30 s")
        }
    }
}
