import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Admin routes on any instance of a NATS cluster, with real `reactor-server` processes: they act on
/// a session where it runs (the instance that got the request forwards it over NATS), so an operator
/// looking at a session through the load balancer does not move it; the session list covers every
/// instance and says where each resident session runs.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"),
    .serialized)
struct NATSAdminRoutingTests {
    static let admin = NATSFailoverTests.admin

    @Test func adminRoutesOnAnotherInstanceActWhereTheSessionRuns() async throws {
        try await NATSFailoverTests.withPair { a, b in

            #expect(
                try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"watched"}"#).status
                    == 201)
            for _ in 1...2 {
                #expect(
                    try a.client().request("POST", "/sessions/watched/actions?wait=true", body: #"{"type":"increase"}"#)
                        .status == 200)
            }
            let subscriber = try a.client()
            try subscriber.openEventStream("/sessions/watched/events")
            #expect(try subscriber.nextEvent().id == "2")

            // Read through b: the log as a has it.
            let log = try b.client().request("GET", "/admin/sessions/watched/actions", headers: Self.admin)
            #expect(log.status == 200, "\(log.status) \(log.text)")
            #expect(try (log.json()["actions"] as? [[String: Any]])?.compactMap { $0["seq"] as? Int } == [1, 2])

            // Stub mode and a forced state through b take effect on a, where the subscriber sees them.
            let stub = try b.client().request(
                "PUT", "/admin/sessions/watched/stub", headers: Self.admin, body: #"{"enabled":true}"#)
            #expect(stub.status == 200 && stub.text.contains(#""stub":true"#), "\(stub.status) \(stub.text)")
            let recorded = try a.client().request("POST", "/sessions/watched/actions", body: #"{"type":"increase"}"#)
            #expect(recorded.status == 202)
            let forced = try b.client().request(
                "PUT", "/admin/sessions/watched/state", headers: Self.admin, body: #"{"value":42}"#)
            #expect(forced.status == 200, "\(forced.status) \(forced.text)")
            #expect(try forced.json()["version"] as? Int == 3)
            let event = try subscriber.nextEvent()
            #expect(event.id == "3" && event.data?.contains(#""value":42"#) == true, "a's subscriber got \(event)")

            // The list on b shows a's session as a's, with a's subscriber and stub flag.
            let list = try b.client().request("GET", "/admin/sessions", headers: Self.admin)
            let sessions = try #require(list.json()["sessions"] as? [[String: Any]])
            let entry = try #require(sessions.first { $0["id"] as? String == "watched" }, "not listed: \(list.text)")
            #expect(entry["instance"] as? String == "a")
            #expect(entry["subscribers"] as? Int == 1)
            #expect(entry["stub"] as? Bool == true)
            #expect(entry["version"] as? Int == 3)
            #expect(sessions.filter { $0["id"] as? String == "watched" }.count == 1, "listed twice: \(list.text)")

            // Nothing moved: a still runs it, b never took it.
            #expect(try NATSHandOffTests.metric("reactor_storage_handoffs_total", on: a) == 0)
            #expect(
                try b.client().request("GET", "/admin/sessions?scope=local", headers: Self.admin).text.contains(
                    "watched") == false)
            // A session nobody has is answered as usual.
            #expect(try b.client().request("GET", "/admin/sessions/nobody/actions", headers: Self.admin).status == 404)
            // The forwarded routes still need the admin token on the instance that got them.
            #expect(try b.client().request("GET", "/admin/sessions/watched/actions").status == 401)
        }
    }

    /// Time travel and fork asked of an instance that does not run the session: past the first snapshots,
    /// while the owner runs it (answered there) and once the owner is dead (read from the stored records,
    /// whatever the session list last said of its version).
    @Test func timeTravelAndForkWorkOnAnInstanceThatDoesNotRunTheSession() async throws {
        let settings = ["--set", "storage.snapshotEvery=4"]
        try await NATSFailoverTests.withPair(claimTTL: 60, extraA: settings, extraB: settings) { a, b in
            #expect(
                try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"past"}"#).status == 201)
            for _ in 1...10 {
                #expect(
                    try a.client().request("POST", "/sessions/past/actions?wait=true", body: #"{"type":"increase"}"#)
                        .status == 200)
            }
            func value(_ response: TestResponse) -> Int? {
                ((try? response.json())?["state"] as? [String: Any])?["value"] as? Int
            }
            for version in [10, 9, 5, 3, 0] {
                let past = try b.client().request(
                    "GET", "/admin/sessions/past/versions/\(version)", headers: Self.admin)
                #expect(past.status == 200, "version \(version) through b: \(past.status) \(past.text)")
                #expect(value(past) == version, "version \(version) through b: \(past.text)")
            }
            let future = try b.client().request("GET", "/admin/sessions/past/versions/11", headers: Self.admin)
            #expect(future.status == 404 && future.errorCode == "unknown_version", "\(future.status) \(future.text)")
            let fork = try b.client().request(
                "POST", "/admin/sessions/past/fork", headers: Self.admin, body: #"{"version":7,"id":"fork7"}"#)
            #expect(fork.status == 201, "\(fork.status) \(fork.text)")
            #expect(try fork.json()["version"] as? Int == 7 && value(fork) == 7, "\(fork.text)")
            let forked = try b.client().request("GET", "/sessions/fork7")
            #expect(forked.status == 200 && (value(forked)) == 7, "\(forked.status) \(forked.text)")
            // Looking did not move the session.
            #expect(try NATSHandOffTests.metric("reactor_storage_handoffs_total", on: a) == 0)
            #expect(
                try b.client().request("GET", "/admin/sessions?scope=local", headers: Self.admin).text.contains(
                    #""past""#) == false)

            // The owner dies without leaving the session: b reads what it stored (nothing is forwarded to
            // a dead instance, and b does not take the session over by looking at its past).
            let ended = try await a.stop(signal: SIGKILL)
            #expect(ended == .signalled(SIGKILL))
            try await eventually("b to stop counting a as alive", within: .seconds(60)) {
                let past = try b.client().request("GET", "/admin/sessions/past/versions/10", headers: Self.admin)
                return past.status == 200 && (value(past)) == 10
            }
            let seven = try b.client().request("GET", "/admin/sessions/past/versions/7", headers: Self.admin)
            #expect(seven.status == 200 && (value(seven)) == 7, "\(seven.status) \(seven.text)")
            let again = try b.client().request(
                "POST", "/admin/sessions/past/fork", headers: Self.admin, body: #"{"version":10,"id":"fork10"}"#)
            #expect(again.status == 201 && (value(again)) == 10, "\(again.status) \(again.text)")
            let beyond = try b.client().request("GET", "/admin/sessions/past/versions/11", headers: Self.admin)
            #expect(beyond.status == 404 && beyond.errorCode == "unknown_version", "\(beyond.status) \(beyond.text)")
        }
    }

    @Test func streamsOnAnotherInstanceFollowTheSessionWhereItRuns() async throws {
        try await NATSFailoverTests.withPair { a, b in
            #expect(
                try a.client().request("POST", "/sessions", body: #"{"reactor":"counter","id":"relayed"}"#).status
                    == 201)
            for _ in 1...2 {
                #expect(
                    try a.client().request("POST", "/sessions/relayed/actions?wait=true", body: #"{"type":"increase"}"#)
                        .status == 200)
            }

            // Both kinds of stream on b, for a session a runs: they start from its current state.
            let single = try b.client()
            try single.openEventStream("/sessions/relayed/events")
            let first = try single.nextEvent()
            #expect(first.id == "2" && first.data == #"{"value":2}"#, "b's stream began with \(first)")
            let many = try b.client()
            try many.openEventStream("/events?sessions=relayed")
            let firstOfMany = try many.nextEvent()
            #expect(
                firstOfMany.event == "state" && firstOfMany.data?.contains(#""version":2"#) == true,
                "b's multiplexed stream began with \(firstOfMany)")

            // A change on a reaches both, in order; a still runs the session, watched once from b.
            #expect(
                try a.client().request("POST", "/sessions/relayed/actions?wait=true", body: #"{"type":"increase"}"#)
                    .status == 200)
            #expect(try single.nextEvent().id == "3")
            #expect(try many.nextEvent().data?.contains(#""version":3"#) == true)
            #expect(try NATSHandOffTests.metric("reactor_storage_handoffs_total", on: a) == 0)
            let listed = try a.client().request("GET", "/admin/sessions?scope=local", headers: Self.admin).json()
            let entry = try #require(
                (listed["sessions"] as? [[String: Any]])?.first { $0["id"] as? String == "relayed" })
            #expect(entry["subscribers"] as? Int == 1, "b's two streams should share one subscription on a: \(entry)")

            // Resuming on b sends nothing already seen.
            let resumed = try b.client()
            try resumed.openEventStream("/sessions/relayed/events", headers: [("Last-Event-ID", "3")])
            #expect(
                try a.client().request("POST", "/sessions/relayed/actions?wait=true", body: #"{"type":"increase"}"#)
                    .status == 200)
            #expect(try resumed.nextEvent().id == "4")
            #expect(try single.nextEvent().id == "4")

            // select and pulses follow the same rules through the relay (a todo list with an alert pulse).
            #expect(
                try a.client().request("POST", "/sessions", body: #"{"reactor":"todo","id":"chores"}"#).status == 201)
            #expect(
                try a.client().request(
                    "POST", "/sessions/chores/actions?wait=true", body: #"{"type":"add","title":"milk"}"#
                ).status == 200)
            let selected = try b.client()
            try selected.openEventStream("/sessions/chores/events?select=/items/0/title")
            let title = try selected.nextEvent()
            #expect(title.id == "1" && title.data == #""milk""#, "the selected part began with \(title)")
            let pulses = try b.client()
            try pulses.openEventStream("/sessions/chores/events")
            #expect(try pulses.nextEvent().id == "1")
            #expect(
                try a.client().request(
                    "POST", "/sessions/chores/actions?wait=true", body: #"{"type":"toggle","id":99}"#
                ).status == 200)
            let state = try pulses.nextEvent()
            let alert = try pulses.nextEvent()
            #expect(state.id == "2", "\(state)")
            #expect(
                alert.event == "pulse" && alert.data?.contains(#""name":"alert""#) == true
                    && alert.data?.contains("no todo with id 99") == true, "\(alert)")
            // The selected part did not change, so nothing more came: the next event there is the next change of it.
            #expect(
                try a.client().request(
                    "POST", "/sessions/chores/actions?wait=true", body: #"{"type":"add","title":"eggs"}"#
                ).status == 200)
            #expect(
                try a.client().request("POST", "/sessions/chores/actions?wait=true", body: #"{"type":"remove","id":1}"#)
                    .status == 200)
            let next = try selected.nextEvent()
            #expect(next.id == "4" && next.data == #""eggs""#, "the selected part then got \(next)")

            // Deleted on a: b's streams end as a's would.
            #expect(try a.client().request("DELETE", "/sessions/relayed").status == 204)
            #expect(try single.nextEvent().event == "end")
            #expect(try resumed.nextEvent().event == "end")
        }
    }
}
