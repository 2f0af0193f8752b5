import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// `GET /events?sessions=a,b,c` over real sockets (API.md "Many sessions over one stream"): every event
/// names its session, one cursor resumes every part, a part ends alone, the per-stream session limit,
/// the subscriber limits and `HEAD`. Access modes: ``MultiplexedStreamAccessTests``.
@Suite(.offThePool) struct MultiplexedEventStreamTests {
    static func increase(_ server: TestServer, _ id: String) throws {
        let response = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
        guard response.status == 200 else {
            throw TestFailure("increase on \(id) answered \(response.status) \(response.text)")
        }
    }

    /// `session: event version` of each of the next `count` events, e.g. `a: state 3`, `c: end unknown_session`.
    static func next(_ count: Int, on stream: TestClient) throws -> [String] {
        try (0..<count).map { _ in try describe(stream.nextEvent()) }
    }

    static func describe(_ event: TestEvent) throws -> String {
        let data = try event.object()
        let session = data["session"] as? String ?? "?"
        switch event.event {
        case "state": return "\(session): state \(data["version"] as? Int ?? -1)"
        case "pulse": return "\(session): pulse \(data["name"] as? String ?? "?") #\(data["count"] as? Int ?? -1)"
        case "end": return "\(session): end \(data["reason"] as? String ?? "?")"
        default: return "\(session): \(event.event ?? "message") \(data["code"] as? String ?? "")"
        }
    }

    @Test func everyEventNamesItsSessionAndCarriesTheStreamCursor() throws {
        let server = try TestServer()
        let a = try server.createSession("counter", id: "a")
        try server.createSession("todo", id: "t")
        try Self.increase(server, a)
        let stream = try server.subscribe("/events?sessions=a,t")
        let first = try stream.nextEvent()
        #expect(first.event == "state")
        #expect(first.data == #"{"session":"a","version":1,"state":{"value":1}}"#)
        let second = try stream.nextEvent()
        #expect(second.session == "t" && second.version == 0)
        #expect((try second.object()["state"] as? [String: Any])?["nextID"] as? Int == 1)
        #expect(
            first.id != nil && second.id != nil && first.id != second.id,
            "every event's id is the stream's cursor, which moved")

        _ = try server.request("POST", "/sessions/t/actions?wait=true", body: #"{"type":"toggle","id":99}"#)
        try Self.increase(server, a)
        #expect(try Self.next(3, on: stream) == ["t: state 1", "t: pulse alert #1", "a: state 2"])
    }

    @Test func statesComeInVersionOrderPerSessionWhileSessionsInterleave() throws {
        let server = try TestServer()
        for id in ["a", "b"] { try server.createSession("counter", id: id) }
        let stream = try server.subscribe("/events?sessions=a,b")
        #expect(try Self.next(2, on: stream) == ["a: state 0", "b: state 0"])
        for _ in 1...3 {
            try Self.increase(server, "b")
            try Self.increase(server, "a")
        }
        #expect(
            try Self.next(6, on: stream) == [
                "b: state 1", "a: state 1", "b: state 2", "a: state 2", "b: state 3", "a: state 3",
            ])
    }

    @Test func oneCursorResumesEverySessionWithoutRepeats() throws {
        let server = try TestServer()
        for id in ["a", "b", "c"] { try server.createSession("counter", id: id) }
        var stream: TestClient? = try server.subscribe("/events?sessions=a,b,c")
        #expect(try Self.next(3, on: #require(stream)) == ["a: state 0", "b: state 0", "c: state 0"])
        try Self.increase(server, "a")
        let seen = try #require(stream).nextEvent()
        #expect(seen.session == "a" && seen.version == 1)
        let cursor = try #require(seen.id)
        stream = nil

        // While the client was away: b moved twice, a once, c not at all.
        try Self.increase(server, "b")
        try Self.increase(server, "b")
        try Self.increase(server, "a")
        let resumed = try server.subscribe("/events?sessions=a,b,c", headers: [("Last-Event-ID", cursor)])
        #expect(
            try Self.next(2, on: resumed) == ["a: state 2", "b: state 2"],
            "only what is newer than the cursor, c not at all")
        try Self.increase(server, "c")
        let moved = try resumed.nextEvent()
        #expect(try Self.describe(moved) == "c: state 1")

        // The newest cursor repeats nothing at all.
        let current = try server.subscribe(
            "/events?sessions=a,b,c", headers: [("Last-Event-ID", try #require(moved.id))])
        try Self.increase(server, "b")
        #expect(try Self.next(1, on: current) == ["b: state 3"])

        // A cursor of another list (or no cursor at all) starts every session from its current state.
        let other = try server.subscribe("/events?sessions=c,a", headers: [("Last-Event-ID", cursor)])
        #expect(try Self.next(2, on: other) == ["c: state 1", "a: state 2"])
        let garbage = try server.subscribe("/events?sessions=a", headers: [("Last-Event-ID", "nonsense:1.2")])
        #expect(try Self.next(1, on: garbage) == ["a: state 2"])
    }

    @Test func anUnknownOrDeletedSessionEndsOnlyItsOwnPart() throws {
        let server = try TestServer()
        for id in ["a", "b"] { try server.createSession("counter", id: id) }
        let stream = try server.subscribe("/events?sessions=a,ghost,b")
        #expect(try Self.next(3, on: stream) == ["a: state 0", "ghost: end unknown_session", "b: state 0"])
        #expect(try server.request("DELETE", "/sessions/a").status == 204)
        #expect(try Self.next(1, on: stream) == ["a: end session deleted"])
        try Self.increase(server, "b")
        #expect(try Self.next(1, on: stream) == ["b: state 1"], "b's part outlives the others")
        #expect(try server.request("DELETE", "/sessions/b").status == 204)
        #expect(try Self.next(1, on: stream) == ["b: end session deleted"])
        #expect(try stream.readToEnd().isEmpty, "after the last part's end the stream closes")

        // Only unknown sessions: each part ends, then the stream.
        let nobody = try server.subscribe("/events?sessions=x,y")
        #expect(try Self.next(2, on: nobody) == ["x: end unknown_session", "y: end unknown_session"])
        #expect(try nobody.readToEnd().isEmpty)
    }

    @Test func aSessionOutOfMemoryIsLoadedBackForItsPart() async throws {
        try await withTemporaryDirectory("multiplexed") { directory in
            let server = try TestServer(dataDirectory: directory) { $0.sessions.maxResident = 1 }
            try server.createSession("counter", id: "a")
            try Self.increase(server, "a")
            try server.createSession("counter", id: "b")
            try await eventually("a to leave memory for b") {
                try server.adminEntry("a")?["resident"] as? Bool == false
            }
            let stream = try server.subscribe("/events?sessions=a,b")
            #expect(try Self.next(2, on: stream) == ["a: state 1", "b: state 0"])
            try Self.increase(server, "a")
            try Self.increase(server, "b")
            #expect(try Self.next(2, on: stream) == ["a: state 2", "b: state 1"], "both parts follow their session")
        }
    }

    @Test func theNumberOfSessionsPerStreamIsConfigured() throws {
        let server = try TestServer { $0.sse.maxSessionsPerStream = 2 }
        let tooMany = try server.request("GET", "/events?sessions=a,b,c")
        #expect(tooMany.status == 400)
        #expect(tooMany.errorCode == "invalid_sessions")
        #expect(tooMany.errorMessage?.contains("sse.maxSessionsPerStream") == true)
        #expect(tooMany.errorMessage?.contains("at most 2") == true)
        let two = try server.subscribe("/events?sessions=a,b")
        #expect(try Self.next(2, on: two) == ["a: end unknown_session", "b: end unknown_session"])
        for (target, code) in [
            ("/events", "invalid_sessions"), ("/events?sessions=", "invalid_sessions"),
            ("/events?sessions=a,a", "invalid_sessions"),
            ("/events?sessions=a,", "invalid_id"), ("/events?sessions=a%20b", "invalid_id"),
            ("/events?sessions=a&select=nope", "invalid_select"),
            ("/events?sessions=a&select=/a&select=/b", "invalid_select"),
        ] {
            let refused = try server.request("GET", target)
            #expect(refused.status == 400, "\(target)")
            #expect(refused.errorCode == code, "\(target): \(refused.text)")
        }
    }

    @Test func selectAppliesToEverySession() throws {
        let server = try TestServer()
        try server.createSession("todo", id: "t")
        try server.createSession("counter", id: "c")
        let stream = try server.subscribe("/events?sessions=t,c&select=/nextID")
        let first = try stream.nextEvent()
        #expect(first.data == #"{"session":"t","version":0,"state":1}"#)
        // The counter has no /nextID: its selected value is what its own stream sends.
        let second = try stream.nextEvent()
        let own = try server.subscribe("/sessions/c/events?select=/nextID").nextEvent()
        #expect(second.data == #"{"session":"c","version":0,"state":\#(own.data ?? "")}"#)
    }

    /// The admin listing's subscriber count of each id.
    static func subscribers(_ server: TestServer, _ ids: [String]) throws -> [Int] {
        try ids.map { try server.adminEntry($0)?["subscribers"] as? Int ?? -1 }
    }

    @Test func everyPartCountsAsOneSubscriberOfItsSessionAndOfTheServer() async throws {
        let server = try TestServer {
            $0.sse.maxSubscribersPerSession = 2
            $0.sse.maxSubscribers = 4
        }
        for id in ["a", "b", "c"] { try server.createSession("counter", id: id) }
        var both: TestClient? = try server.subscribe("/events?sessions=a,b,ghost")
        #expect(try Self.next(3, on: #require(both)) == ["a: state 0", "b: state 0", "ghost: end unknown_session"])
        let single = try server.subscribe("/sessions/a/events")
        _ = try single.nextEvent()
        #expect(
            try Self.subscribers(server, ["a", "b", "c"]) == [2, 1, 0], "an unknown session's part counts for nothing")
        #expect(try server.request("GET", "/metrics").text.contains("\nreactor_subscribers 3"))

        let perSession = try server.request("GET", "/events?sessions=c,a")
        #expect(perSession.status == 503)
        #expect(perSession.errorCode == "too_many_subscribers")
        #expect(perSession.errorMessage?.contains("sse.maxSubscribersPerSession") == true)
        // 3 subscribers now; b and c would make 5.
        let overall = try server.request("GET", "/events?sessions=b,c")
        #expect(overall.status == 503)
        #expect(overall.errorMessage?.contains("sse.maxSubscribers)") == true)
        #expect(overall.errorMessage?.contains("would add 2") == true)
        #expect(try Self.subscribers(server, ["a", "b", "c"]) == [2, 1, 0], "a refused stream subscribes nothing")
        let fits = try server.subscribe("/events?sessions=c")
        #expect(try Self.next(1, on: fits) == ["c: state 0"])

        both = nil
        try await eventually("the closed stream's parts to leave a and b") {
            try Self.subscribers(server, ["a", "b", "c"]) == [1, 0, 1]
        }
        let again = try server.subscribe("/events?sessions=a,b")
        #expect(try Self.next(2, on: again) == ["a: state 0", "b: state 0"])
    }

    // What HEAD owes to the route: the checks GET gets, and GET's head. That a HEAD stream carries no event
    // and subscribes nothing is the connection layer's doing: it closes a HEAD stream as it starts it, before
    // a responder can subscribe (isolated, without any route, by ServerAnswerTests'
    // headOnAnEventStreamGetsItsHeadAndNoEvents). The route's own HEAD branch only spares building a stream
    // that would close at once: with the connection layer's in place nothing on the wire tells them apart,
    // so the last checks here see the property end to end and fail only with both branches removed.
    @Test func headIsCheckedAsGetIsAndGetsItsHead() async throws {
        let server = try TestServer { $0.sse.maxSubscribersPerSession = 1 }
        try server.createSession("counter", id: "a")
        try server.createSession("counter", id: "b")
        let get = try server.connect()
        try get.send("GET /events?sessions=a,ghost HTTP/1.1\r\nHost: test\r\n\r\n")
        let getHead = try get.read(until: "\r\n\r\n")
        let client = try server.connect()
        try client.send("HEAD /events?sessions=b,ghost HTTP/1.1\r\nHost: test\r\n\r\n")
        let headHead = try client.read(until: "\r\n\r\n")
        let fields: (String) -> [String] = {
            $0.split(separator: "\r\n").filter { !$0.hasPrefix("Date:") }.map(String.init)
        }
        #expect(fields(headHead) == fields(getHead), "HEAD gets the head GET gets, bar the date")
        #expect(headHead.contains("Content-Type: text/event-stream"))

        #expect(
            try server.request("HEAD", "/events?sessions=a,a").status == 400, "a list named twice is refused as for GET"
        )
        #expect(try server.request("HEAD", "/events").status == 400, "no list is refused as for GET")
        #expect(
            try server.request("HEAD", "/events?sessions=a&select=nope").status == 400,
            "a bad select is refused as for GET")
        #expect(
            try server.request("HEAD", "/events?sessions=a,b").status == 503, "a full session is refused as for GET")

        // End to end: no event follows, and only the GET's part subscribed.
        #expect(try client.readToEnd().isEmpty, "no events follow a HEAD answer")
        #expect(try Self.subscribers(server, ["a", "b"]) == [1, 0])
        #expect(try server.request("GET", "/metrics").text.contains("\nreactor_subscribers 1\n"))
    }
}
