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
final class ResumingSubscribers: Sendable {
    private let port: Int
    private let ledger: AcknowledgementLedger
    private let rotation: Duration
    private let running = Atomic<Bool>(true)
    private let finished = DispatchGroup()
    private let problems = Mutex<[String]>([])
    private let counts = Mutex<[String: Int]>([:])

    init(port: Int, ledger: AcknowledgementLedger, rotation: Duration = .seconds(2)) {
        self.port = port
        self.ledger = ledger
        self.rotation = rotation
    }

    /// Versions that went backwards or repeated, with the session.
    var violations: [String] { problems.withLock { $0 } }
    /// What happened to the streams: `streams` opened, `states` seen, `refused <status>`, `cut`,
    /// `error <code>`, `rotated`.
    var tally: [String: Int] { counts.withLock { $0 } }

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
        guard let client = try? TestClient(port: port, readTimeout: .seconds(3)) else {
            count("no connection")
            usleep(20_000)
            return
        }
        do {
            try client.openEventStream("/sessions/\(id)/events", headers: last.map { [("Last-Event-ID", "\($0)")] } ?? [])
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
                    problems.withLock { $0.append("\(id): version \(version) came after \(last)") }
                }
                last = version
                ledger.saw(id, version: version)
                count("states")
            case "error":
                let code = (event.data.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) } as? [String: Any])?["code"] as? String
                return count("error \(code ?? "?")")
            case "end":
                problems.withLock { $0.append("\(id): the stream ended (\(event.data ?? "")) though nothing deletes it") }
                return
            default:
                continue
            }
        }
    }

    /// Stops the clients and waits (bounded) for them.
    func stop() throws {
        running.store(false, ordering: .relaxed)
        guard finished.wait(timeout: .now() + 30) == .success else { throw TestFailure("the event-stream clients did not stop within 30 s") }
    }
}
