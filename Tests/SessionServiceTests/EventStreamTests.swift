import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// `GET /sessions/{id}/events` over real sockets: first event, versions, Last-Event-ID, pulses,
/// select, end on delete.
@Suite(.offThePool) struct EventStreamTests {
    static func value(_ event: TestEvent) throws -> Int? {
        (try event.json() as? [String: Any])?["value"] as? Int
    }

    @Test func firstEventIsTheCurrentStateThenEveryNewOneInOrder() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        _ = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
        let stream = try server.connect()
        let head = try stream.openEventStream("/sessions/\(id)/events")
        #expect(head.header("Cache-Control") == "no-cache")
        let first = try stream.nextEvent()
        #expect(first.event == "state")
        #expect(first.id == "1")
        #expect(first.data == #"{"value":1}"#)
        for _ in 0..<5 { _ = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"increase"}"#) }
        for version in 2...6 {
            let event = try stream.nextEvent()
            #expect(event.event == "state")
            #expect(event.id == String(version))
            #expect(try Self.value(event) == version)
        }
    }

    @Test func lastEventIDSkipsWhatTheClientHas() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        for _ in 0..<3 {
            _ = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#)
        }
        // Older id: the current state comes first.
        let behind = try server.subscribe("/sessions/\(id)/events", headers: [("Last-Event-ID", "1")])
        #expect(try behind.nextEvent().id == "3")
        // Current id: nothing is repeated; the next state is the first event.
        let current = try server.subscribe("/sessions/\(id)/events", headers: [("Last-Event-ID", "3")])
        _ = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"decrease"}"#)
        let next = try current.nextEvent()
        #expect(next.id == "4")
        #expect(try Self.value(next) == 2)
        #expect(try behind.nextEvent().id == "4")
    }

    @Test func pulsesFollowTheirStateEvenWithEqualValues() throws {
        let server = try TestServer()
        let id = try server.createSession("todo")
        let stream = try server.subscribe("/sessions/\(id)/events")
        #expect(try stream.nextEvent().id == "0")
        for expectedCount in 1...2 {
            _ = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"toggle","id":99}"#)
            let state = try stream.nextEvent()
            #expect(state.event == "state")
            let pulse = try stream.nextEvent()
            #expect(pulse.event == "pulse")
            let body = try #require(try pulse.json() as? [String: Any])
            #expect(body["name"] as? String == "alert")
            #expect(body["count"] as? Int == expectedCount)
            #expect((body["value"] as? String)?.contains("99") == true)
        }
        // A reconnecting subscriber is not sent earlier pulses.
        let late = try server.subscribe("/sessions/\(id)/events")
        #expect(try late.nextEvent().event == "state")
        _ = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"add","title":"milk"}"#)
        let added = try late.nextEvent()
        #expect(added.event == "state")
        #expect(added.data?.contains("milk") == true)
    }

    @Test func selectSendsOnlyWhenTheSelectedValueChanges() throws {
        let server = try TestServer()
        let id = try server.createSession("todo")
        let stream = try server.subscribe("/sessions/\(id)/events?select=/nextID")
        let first = try stream.nextEvent()
        #expect(first.data == "1")
        #expect(first.id == "0")
        // v1: nextID unchanged
        _ = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"toggle","id":5}"#)
        // v2: nextID 2
        _ = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"add","title":"a"}"#)
        var event = try stream.nextEvent()
        while event.event == "pulse" { event = try stream.nextEvent() }
        #expect(event.id == "2")
        #expect(event.data == "2")
        let invalid = try server.request("GET", "/sessions/\(id)/events?select=nope")
        #expect(invalid.status == 400)
        #expect(invalid.errorCode == "invalid_select")
    }

    @Test func deleteEndsEveryStream() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        let streams = try (0..<3).map { _ in try server.subscribe("/sessions/\(id)/events") }
        for stream in streams { #expect(try stream.nextEvent().id == "0") }
        #expect(try server.request("DELETE", "/sessions/\(id)").status == 204)
        for stream in streams {
            #expect(try stream.nextEvent().event == "end")
            _ = try stream.readToEnd()
        }
        #expect(try server.request("GET", "/sessions/\(id)/events").errorCode == "unknown_session")
    }

    @Test func aKeepAliveCommentFollowsAQuietIntervalOnTheInjectedClock() async throws {
        // An hour: only the injected clock can bring it within the test's bounds.
        // One loop, and a request after moving the clock: the loop has run the timers due then before
        // the next state is sent.
        let server = try TestServer {
            $0.sse.keepAliveSeconds = 3600
            $0.http.loops = 1
        }
        let id = try server.createSession("counter")
        let stream = try server.subscribe("/sessions/\(id)/events")
        #expect(try stream.nextEvent().id == "0")
        // Quiet for just under the interval: the next thing on the wire is the next state.
        await server.clock.advance(by: .seconds(3599))
        #expect(try server.request("GET", "/healthz").status == 200)
        #expect(try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"increase"}"#).status == 202)
        #expect(try stream.nextEvent(includeComments: true).id == "1")
        // Quiet for the interval since that state: a comment.
        await server.clock.advance(by: .seconds(3601))
        let comment = try stream.nextEvent(includeComments: true)
        #expect(comment.comment == "keep-alive")
        #expect(comment.isComment)
    }
}
