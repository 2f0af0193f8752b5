import Foundation
import ReactorServerTesting
import Testing

/// A subscriber that cannot keep up skips intermediate states and ends at the latest one; its pulses
/// are never dropped silently: past `sse.pulseBuffer` its stream closes with `event: error`.
@Suite(.offThePool) struct SlowSubscriberTests {
    static let title = String(repeating: "x", count: 2000)

    /// A todo session with a subscriber that does not read, and actions (each state larger than the
    /// last) until the subscriber is stuck behind: the admin listing shows it dropping five states in a
    /// row. (One drop alone can be the server's own queue running ahead of its writes; five in a row,
    /// across as many round trips, means the socket buffers are full, and they stay full while the
    /// subscriber reads nothing.)
    static func stalledSubscriber(_ server: TestServer) throws -> (id: String, stream: TestClient, version: Int) {
        let id = try server.createSession("todo")
        let stream = try server.connect(receiveBuffer: 2048)
        try stream.send("GET /sessions/\(id)/events HTTP/1.1\r\nHost: t\r\n\r\n")
        let client = try server.connect()
        var version = 0
        var drops = 0
        var streak = 0
        while streak < 5 {
            let response = try client.request(
                "POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"add","title":"\#(title)"}"#)
            version = try #require(try response.json()["version"] as? Int)
            let details = try server.adminEntry(id)?["subscriberDetails"] as? [[String: Any]]
            let now = details?.first?["drops"] as? Int ?? 0
            streak = now > drops ? streak + 1 : 0
            drops = now
            try #require(version < 300, "the subscriber never fell behind for good within 300 states")
        }
        return (id, stream, version)
    }

    /// The value of a counter in the Prometheus text, failing when it is not there.
    static func metric(_ name: String, in text: String) throws -> Int {
        let line = try #require(
            text.split(separator: "\n").first { $0.hasPrefix(name + " ") }, "no \(name) in /metrics")
        return try #require(Int(line.dropFirst(name.count + 1)), "\(line)")
    }

    @Test func skipsIntermediateStatesAndEndsAtTheLatest() throws {
        let server = try TestServer { $0.sse.subscriberBufferBytes = 4096 }
        let (id, stream, stalledAt) = try Self.stalledSubscriber(server)
        // The subscriber is behind and reads nothing: every state from here on is held back, and
        // only the latest may reach it once it reads again.
        let client = try server.connect()
        var last = 0
        for _ in 0..<5 {
            last = try #require(
                try client.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"toggle","id":1}"#)
                    .json()["version"] as? Int)
        }
        _ = try stream.read(until: "\r\n\r\n")
        var seen: [Int] = []
        while seen.last != last {
            let event = try stream.nextEvent()
            if event.event == "state", let id = event.id.flatMap(Int.init) { seen.append(id) }
        }
        #expect(seen == seen.sorted(), "versions only go up")
        #expect(seen.last == last, "it ends at the latest state")
        let skipped = Set((stalledAt + 1)..<last)
        #expect(
            skipped.isDisjoint(with: seen),
            "states made while it was behind reached it: \(skipped.intersection(seen).sorted())")
        let metrics = try client.request("GET", "/metrics").text
        #expect(try Self.metric("reactor_subscriber_drops_total", in: metrics) >= skipped.count + 1)
    }

    @Test func pulsesPastTheBufferCloseTheStreamWithAReason() throws {
        let server = try TestServer {
            $0.sse.subscriberBufferBytes = 4096
            $0.sse.pulseBuffer = 3
        }
        let (id, stream, _) = try Self.stalledSubscriber(server)
        let client = try server.connect()
        // Each toggle emits the (large) state and a pulse. While the kernel still grows its socket
        // buffers the stream drains now and then and the held pulses go out; keep going until the
        // server gives up on the subscriber (the admin listing no longer shows it).
        var toggles = 0
        while true {
            _ = try client.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"toggle","id":999}"#)
            toggles += 1
            let listing = try client.request("GET", "/admin/sessions", headers: server.admin).json()
            let session = (listing["sessions"] as? [[String: Any]])?.first { $0["id"] as? String == id }
            if session?["subscribers"] as? Int == 0 { break }
            try #require(toggles < 3000, "the stream was never closed")
        }
        _ = try stream.read(until: "\r\n\r\n")
        var last = try stream.nextEvent()
        while last.event != "error" { last = try stream.nextEvent() }
        try stream.readToEnd()
        let body = try #require(try last.json() as? [String: Any])
        #expect(body["code"] as? String == "subscriber_too_slow")
        #expect((body["message"] as? String)?.contains("sse.pulseBuffer") == true)
        #expect(
            try Self.metric("reactor_subscribers_closed_slow_total", in: client.request("GET", "/metrics").text) == 1)
    }
}
