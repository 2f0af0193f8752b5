import Dispatch
import Foundation
import Logs
import ReactorServerTesting
import Reactors
import SessionService
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A reducer that holds until the test lets it go (`hold`), or spins for `spinMilliseconds` of real CPU time
/// (work, not a wait), on the scheduler it is given.
private struct BusyReducer: Reactor {
    enum Action: Codable, Sendable { case work }
    struct State: Codable, Sendable { var done = 0 }
    let initialState = State()
    let hold: DispatchSemaphore?
    let spinMilliseconds: Int
    let scheduler: ReactorScheduler

    func reduce(state: State, mutation: Action) -> State {
        if let hold { _ = hold.wait(timeout: .now() + 60) }
        var start = timespec()
        clock_gettime(CLOCK_MONOTONIC, &start)
        while true {
            var now = timespec()
            clock_gettime(CLOCK_MONOTONIC, &now)
            let elapsed = (now.tv_sec - start.tv_sec) * 1_000_000_000 + (now.tv_nsec - start.tv_nsec)
            if elapsed >= spinMilliseconds * 1_000_000 { break }
        }
        return State(done: state.done + 1)
    }
}

@Suite(.offThePool) struct ReduceSchedulerTests {
    /// With one event loop, a `.workers` session whose reduce is held still lets that loop answer: the action is
    /// accepted (202), `/healthz` and another session answer, and the held state arrives once it is let go.
    @Test func aHeldWorkersReduceLeavesTheOnlyEventLoopFree() async throws {
        let hold = DispatchSemaphore(value: 0)
        let server = try TestServer {
            $0.http.loops = 1
        } catalog: {
            $0.register("held") { BusyReducer(hold: hold, spinMilliseconds: 0, scheduler: .workers) }
        }
        let id = try server.createSession("held")
        let accepted = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"work"}"#)
        #expect(accepted.status == 202)
        #expect(try server.request("GET", "/healthz").status == 200)
        let counter = try server.createSession("counter")
        let increased = try server.request(
            "POST", "/sessions/\(counter)/actions?wait=true", body: #"{"type":"increase"}"#)
        #expect(increased.status == 200)
        #expect(try server.request("GET", "/sessions/\(id)").json()["version"] as? Int == 0, "still held")
        hold.signal()
        try await eventually("the held action to be reduced") {
            try server.request("GET", "/sessions/\(id)").json()["version"] as? Int == 1
        }
    }

    /// A `.workers` session whose reduce is held takes `sessions.maxQueuedActions` actions behind the one it is
    /// reducing; the next gets 503 session_busy with Retry-After, is neither logged nor given a seq, and is counted
    /// on `/metrics`; once the reactor catches up, actions are accepted again with the next seq.
    @Test func aBusyWorkersSessionRefusesActionsBeyondItsQueueWith503() async throws {
        let hold = DispatchSemaphore(value: 0)
        let server = try TestServer {
            $0.sessions.maxQueuedActions = 2
        } catalog: {
            $0.register("held") { BusyReducer(hold: hold, spinMilliseconds: 0, scheduler: .workers) }
        }
        let id = try server.createSession("held")
        for seq in 1...3 {
            let accepted = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"work"}"#)
            #expect(accepted.status == 202)
            #expect(try accepted.json()["seq"] as? Int == seq, "one being reduced, two waiting")
        }
        let refused = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"work"}"#)
        #expect(refused.status == 503)
        #expect(refused.errorCode == "session_busy")
        #expect(refused.header("Retry-After") == "1")
        #expect(refused.errorMessage?.contains("sessions.maxQueuedActions") == true, "\(refused.text)")
        let waiting = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"work"}"#)
        #expect(waiting.status == 503, "waiting for the answer changes nothing")
        let metrics = try server.request("GET", "/metrics").text
        #expect(metrics.contains("reactor_actions_refused_busy_total 2"), "\(metrics)")
        for _ in 1...4 { hold.signal() }
        try await eventually("the three taken actions to be reduced") {
            try server.request("GET", "/sessions/\(id)").json()["version"] as? Int == 3
        }
        let next = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"work"}"#)
        #expect(next.status == 200)
        #expect(try next.json()["seq"] as? Int == 4, "the refused actions took no seq")
        #expect(try next.json()["version"] as? Int == 4)
        let log = try server.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).json()
        #expect((log["actions"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [1, 2, 3, 4])
    }

    /// A reduce over `log.slowReduceMilliseconds` logs its reactor, session and duration (once a second per
    /// reactor at most), and `reactor_reduce_seconds` counts by reactor.
    @Test(arguments: [ReactorScheduler.inline, .workers])
    func aSlowReduceIsLoggedAndMeasuredByReactor(scheduler: ReactorScheduler) async throws {
        let server = try TestServer {
            $0.log.slowReduceMilliseconds = 5
        } catalog: {
            $0.register("slow") { BusyReducer(hold: nil, spinMilliseconds: 6, scheduler: scheduler) }
        }
        let id = try server.createSession("slow")
        for _ in 1...3 {
            let done = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"work"}"#)
            #expect(done.status == 200)
        }
        let line = try await server.logs.waitForMessage(containing: "a slow reduce")
        #expect(line.field("reactor") == .string("slow"))
        #expect(line.field("session") == .string(id))
        if case .double(let milliseconds) = line.field("milliseconds") {
            #expect(milliseconds >= 6)
        } else {
            Issue.record("no duration in \(line.fields)")
        }
        // Three slow reduces within one second of the server's clock: one line, the rest counted as unlogged
        // and reported by the next line, a second later.
        #expect(server.logs.values.filter { $0.message.contains("a slow reduce") }.count == 1)
        #expect(line.field("slow_unlogged") == .int(0))
        await server.clock.advance(by: .seconds(1))
        let fourth = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"work"}"#)
        #expect(fourth.status == 200)
        let lines = try await server.logs.waitUntil("a second slow-reduce line") {
            $0.filter { $0.message.contains("a slow reduce") }.count == 2
        }
        let next = lines.filter { $0.message.contains("a slow reduce") }[1]
        #expect(next.field("slow_unlogged") == .int(2), "\(next.fields)")
        let metrics = try server.request("GET", "/metrics").text
        #expect(metrics.contains(#"reactor_reduce_seconds_count{reactor="slow"} 4"#), "\(metrics)")
        #expect(metrics.contains(#"reactor_reduce_seconds_bucket{reactor="slow",le="0.005"} 0"#))
        #expect(!metrics.contains(#"reactor_reduce_seconds_count{reactor="counter"}"#), "no session of it reduced")
    }

    /// The threshold 0 turns the line off.
    @Test func aThresholdOfZeroNeverLogs() async throws {
        let server = try TestServer {
            $0.log.slowReduceMilliseconds = 0
        } catalog: {
            $0.register("slow") { BusyReducer(hold: nil, spinMilliseconds: 2, scheduler: .inline) }
        }
        let id = try server.createSession("slow")
        #expect(
            try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"work"}"#).status == 200)
        #expect(!server.logs.values.contains { $0.message.contains("a slow reduce") })
    }
}

extension LogRecord {
    /// The value of field `key`, if the record has it.
    fileprivate func field(_ key: String) -> LogValue? { fields.first { $0.key == key }?.value }
}
