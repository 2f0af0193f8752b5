import Foundation
import Testing

/// A subscriber that cannot keep up skips intermediate states and ends at the latest one; its pulses
/// are never dropped silently: past `sse.pulseBuffer` its stream closes with `event: error`.
@Suite struct SlowSubscriberTests {
    static let title = String(repeating: "x", count: 2000)

    /// A todo session with a subscriber that does not read, and actions (each state larger than the
    /// last) until the admin listing reports that subscriber dropping states.
    static func stalledSubscriber(_ server: TestServer) throws -> (id: String, stream: TestConnection, version: Int) {
        let id = try server.createSession("todo")
        let stream = try TestConnection(port: server.port, receiveBuffer: 2048)
        try stream.write("GET /sessions/\(id)/events HTTP/1.1\r\nHost: t\r\n\r\n")
        let client = try server.connect()
        var version = 0
        while true {
            let response = try client.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"add","title":"\#(title)"}"#)
            version = try #require(try response.json()["version"] as? Int)
            let listing = try client.request("GET", "/admin/sessions", headers: server.admin).json()
            let session = (listing["sessions"] as? [[String: Any]])?.first { $0["id"] as? String == id }
            let drops = ((session?["subscriberDetails"] as? [[String: Any]])?.first?["drops"] as? Int) ?? 0
            if drops > 0 { return (id, stream, version) }
            try #require(version < 2000, "the subscriber never fell behind")
        }
    }

    @Test func skipsIntermediateStatesAndEndsAtTheLatest() throws {
        let server = try TestServer { $0.sse.subscriberBufferBytes = 4096 }
        let (id, stream, _) = try Self.stalledSubscriber(server)
        let client = try server.connect()
        var last = 0
        for _ in 0..<5 {
            last = try #require(try client.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"toggle","id":1}"#).json()["version"] as? Int)
        }
        _ = try stream.read(until: Array("\r\n\r\n".utf8))
        var seen: [Int] = []
        while seen.last != last {
            let event = try stream.nextEvent()
            if event.event == "state", let id = event.id.flatMap(Int.init) { seen.append(id) }
        }
        #expect(seen == seen.sorted(), "versions only go up")
        // (Whether a version was skipped depends on when the kernel took bytes: a refused state that is
        // still the latest when the stream drains is sent then. The drop itself is asserted below.)
        #expect(seen.last == last, "it ends at the latest state")
        let metrics = try client.request("GET", "/metrics").text
        #expect(!metrics.contains("reactor_subscriber_drops_total 0\n"))
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
        _ = try stream.read(until: Array("\r\n\r\n".utf8))
        var last = TestEvent()
        while let event = try? stream.nextEvent() { last = event }
        #expect(last.event == "error")
        let body = try #require(try last.json() as? [String: Any])
        #expect(body["code"] as? String == "subscriber_too_slow")
        #expect((body["message"] as? String)?.contains("sse.pulseBuffer") == true)
        #expect(try client.request("GET", "/metrics").text.contains("reactor_subscribers_closed_slow_total 1\n"))
    }
}
