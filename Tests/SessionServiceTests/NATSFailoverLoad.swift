import Foundation
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// What clients of a cluster were told, per session: every `seq` acknowledged, the highest version
/// seen, and how many acknowledgements each instance gave.
final class AcknowledgementLedger: Sendable {
    struct Session {
        var acknowledged: Set<Int> = []
        var highest = 0
        var byInstance: [Int: Int] = [:]
    }

    private let sessions = Mutex<[String: Session]>([:])

    func record(_ id: String, seq: Int, version: Int, instance: Int) {
        sessions.withLock { sessions in
            sessions[id, default: Session()].acknowledged.insert(seq)
            sessions[id, default: Session()].highest = max(sessions[id]?.highest ?? 0, version)
            sessions[id, default: Session()].byInstance[instance, default: 0] += 1
        }
    }

    /// A client saw `id` at `version` (an event stream's state), without an acknowledgement.
    func saw(_ id: String, version: Int) {
        sessions.withLock { sessions in
            sessions[id, default: Session()].highest = max(sessions[id]?.highest ?? 0, version)
        }
    }

    subscript(id: String) -> Session { sessions.withLock { $0[id] ?? Session() } }

    /// Acknowledgements of `id` that `instance` gave.
    func count(_ id: String, instance: Int) -> Int { self[id].byInstance[instance] ?? 0 }
}

/// One client thread per session posting `{"type":"increase"}?wait=true` in a loop to the preferred
/// instance, on a fresh connection each time (at most about 200 a second); a failure (refused, timed
/// out, 503) is tried again on whichever instance is preferred then, after a short pause. With
/// `alternating`, every other request goes without `?wait=true` (a `202` acknowledges its `seq`).
final class ActionLoad: Sendable {
    private let ports: Mutex<[Int]>
    private let preferred = Atomic<Int>(0)
    private let running = Atomic<Bool>(true)
    private let finished = DispatchGroup()
    private let alternating: Bool
    private let credentials: ClusterCredentials?
    private let failed = Mutex<[String: Int]>([:])
    let ledger = AcknowledgementLedger()

    /// `credentials`, when given, say what each session's requests carry (token and jwt modes).
    init(ports: [Int], alternating: Bool = false, credentials: ClusterCredentials? = nil) {
        self.ports = Mutex(ports)
        self.alternating = alternating
        self.credentials = credentials
    }

    /// Requests that got no acknowledgement, by what came instead (`503`, `no answer`…).
    var failures: [String: Int] { failed.withLock { $0 } }

    /// Sends new requests to instance `index` (a port of ``init(ports:)`` or ``setPort(_:of:)``).
    func prefer(_ index: Int) { preferred.store(index, ordering: .relaxed) }

    /// Instance `index` listens on `port` now (it was restarted).
    func setPort(_ port: Int, of index: Int) { ports.withLock { $0[index] = port } }

    func start(_ ids: [String]) {
        for id in ids {
            finished.enter()
            let thread = Thread { [self] in
                defer { finished.leave() }
                var count = 0
                while running.load(ordering: .relaxed) {
                    post(id, wait: !alternating || count % 2 == 0)
                    count += 1
                }
            }
            thread.start()
        }
    }

    private func post(_ id: String, wait: Bool) {
        let target = preferred.load(ordering: .relaxed)
        let port = ports.withLock { $0[target] }
        let response = (try? TestClient(port: port, readTimeout: .seconds(3))).flatMap {
            try? $0.request(
                "POST", "/sessions/\(id)/actions\(wait ? "?wait=true" : "")", headers: credentials?.headers(id) ?? [],
                body: #"{"type":"increase"}"#)
        }
        if let response, response.status == (wait ? 200 : 202), let body = try? response.json(),
            let seq = body["seq"] as? Int,
            let version = wait ? body["version"] as? Int : 0
        {
            ledger.record(id, seq: seq, version: version, instance: target)
            // Paced, so the load leaves the machine to the other tests running at the same time.
            usleep(5_000)
            return
        }
        failed.withLock { $0[response.map { "\($0.status)" } ?? "no answer", default: 0] += 1 }
        usleep(20_000)
    }

    /// Stops the clients and waits (bounded) for the requests in flight.
    func stop() throws {
        running.store(false, ordering: .relaxed)
        guard finished.wait(timeout: .now() + 30) == .success else {
            throw TestFailure("the load's clients did not stop within 30 s")
        }
    }
}
