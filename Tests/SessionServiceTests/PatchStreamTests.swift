import Foundation
import JSONCodec
import ReactorServerTesting
import Testing

/// `?delta=json-patch` over real sockets (API.md "Patches instead of whole states"): a whole state first, then one
/// `event: patch` per version, each turning the stream's state before into this version's when applied by the
/// toolkit's independent applier; whole states again after a resume and after a skip; `select`; the multiplexed
/// stream; one patch per version however many subscribers; 400 `invalid_delta`.
@Suite(.offThePool) struct PatchStreamTests {
    static func parse(_ text: String?) throws -> JSONValue { try JSONParser().parse(Array((text ?? "").utf8)) }

    /// Sends `action` with `?wait=true` and returns the version and state it produced.
    static func act(_ client: TestClient, _ id: String, _ action: String) throws -> (version: Int, state: JSONValue) {
        let response = try client.request("POST", "/sessions/\(id)/actions?wait=true", body: action)
        guard response.status == 200 else {
            throw TestFailure("\(action) answered \(response.status) \(response.text)")
        }
        let body = try parse(response.text)
        guard case .number(let version)? = body["version"], let state = body["state"] else {
            throw TestFailure("no version and state in \(response.text)")
        }
        return (Int(version.int64Value ?? -1), state)
    }

    /// The value of a counter on `/metrics`.
    static func metric(_ server: TestServer, _ name: String) throws -> Int {
        let text = try server.request("GET", "/metrics").text
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix(name + " ") }, "no \(name)")
        return try #require(Int(line.dropFirst(name.count + 1)), "\(line)")
    }

    /// Reads state and patch events until one of `version` (or later) arrives.
    static func read(_ version: Int, from stream: TestClient) throws {
        while true {
            let event = try stream.nextEvent()
            let isState = event.event == "state" || event.event == "patch"
            if isState, let id = event.id.flatMap(Int.init), id >= version { return }
        }
    }

    @Test func aWholeStateFirstThenPatchesThatEachTurnTheStateBeforeIntoThisVersions() throws {
        let server = try TestServer()
        let id = try server.createSession("todo")
        let stream = try server.subscribe("/sessions/\(id)/events?delta=json-patch")
        let first = try stream.nextEvent()
        #expect(first.event == "state" && first.id == "0")
        var state = try Self.parse(first.data)
        let client = try server.connect()
        let added = try Self.act(client, id, #"{"type":"add","title":"milk"}"#)
        let patch = try stream.nextEvent()
        #expect(patch.event == "patch" && patch.id == "1")
        #expect(
            patch.data == #"[{"op":"add","path":"/items/0","value":{"id":1,"title":"milk","done":false}},"#
                + #"{"op":"replace","path":"/nextID","value":2}]"#)
        state = try TestJSONPatch.apply(try Self.parse(patch.data), to: state)
        #expect(state == added.state)
        // Every kind of change, in an order that makes the list grow, shrink and fill with done items; an
        // invalid toggle assigns the alert pulse, which follows its patch as it follows a state.
        let actions = [
            #"{"type":"add","title":"bread"}"#, #"{"type":"add","title":"tea"}"#, #"{"type":"toggle","id":2}"#,
            #"{"type":"remove","id":1}"#, #"{"type":"toggle","id":99}"#, #"{"type":"add","title":"jam"}"#,
            #"{"type":"toggle","id":3}"#, #"{"type":"clearCompleted"}"#, #"{"type":"add","title":"a/b ~ \"q\""}"#,
        ]
        for action in actions {
            let expected = try Self.act(client, id, action)
            let event = try stream.nextEvent()
            #expect(event.event == "patch" && event.id == String(expected.version), "\(action) gave \(event)")
            state = try TestJSONPatch.apply(try Self.parse(event.data), to: state)
            #expect(state == expected.state, "after \(action)")
            if action.contains("99") {
                let pulse = try stream.nextEvent()
                #expect(pulse.event == "pulse" && pulse.id == nil)
                #expect(try pulse.object()["name"] as? String == "alert")
            }
        }
    }

    @Test func aToggleInAThousandItemsIsOneReplaceOnTheWire() throws {
        let server = try TestServer()
        let id = try server.createSession("todo")
        let client = try server.connect()
        for index in 1...1000 {
            _ = try client.request("POST", "/sessions/\(id)/actions", body: #"{"type":"add","title":"item \#(index)"}"#)
        }
        let last = try Self.act(client, id, #"{"type":"add","title":"last"}"#)
        let stream = try server.subscribe("/sessions/\(id)/events?delta=json-patch")
        let first = try stream.nextEvent()
        #expect(first.event == "state" && first.id == String(last.version))
        #expect((first.data ?? "").utf8.count > 30_000, "the whole list comes first")
        let toggled = try Self.act(client, id, #"{"type":"toggle","id":518}"#)
        let patch = try stream.nextEvent()
        #expect(patch.event == "patch" && patch.id == String(toggled.version))
        #expect(patch.data == #"[{"op":"replace","path":"/items/517/done","value":true}]"#)
        #expect(try TestJSONPatch.apply(try Self.parse(patch.data), to: try Self.parse(first.data)) == toggled.state)
    }

    @Test func withSelectThePatchIsOfTheSelectedValue() throws {
        let server = try TestServer()
        let id = try server.createSession("todo")
        let client = try server.connect()
        for title in ["a", "b"] { _ = try Self.act(client, id, #"{"type":"add","title":"\#(title)"}"#) }
        let stream = try server.subscribe("/sessions/\(id)/events?select=/items/1&delta=json-patch")
        let first = try stream.nextEvent()
        #expect(first.event == "state" && first.id == "2" && first.data == #"{"id":2,"title":"b","done":false}"#)
        _ = try Self.act(client, id, #"{"type":"toggle","id":2}"#)
        let toggled = try stream.nextEvent()
        #expect(toggled.event == "patch" && toggled.id == "3")
        #expect(toggled.data == #"[{"op":"replace","path":"/done","value":true}]"#)
        // Version 4 leaves the selected item alone: nothing is sent, and the patch to 5 starts from what was.
        _ = try Self.act(client, id, #"{"type":"add","title":"c"}"#)
        _ = try Self.act(client, id, #"{"type":"remove","id":1}"#)
        let shifted = try stream.nextEvent()
        #expect(shifted.event == "patch" && shifted.id == "5")
        let before = try Self.parse(#"{"id":2,"title":"b","done":true}"#)
        let value = try TestJSONPatch.apply(try Self.parse(shifted.data), to: before)
        #expect(value == (try Self.parse(#"{"id":3,"title":"c","done":false}"#)))
    }

    @Test func aResumedStreamStartsWithAWholeState() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        let client = try server.connect()
        for _ in 0..<3 { _ = try Self.act(client, id, #"{"type":"increase"}"#) }
        // Behind: the current state, whole.
        let behind = try server.subscribe("/sessions/\(id)/events?delta=json-patch", headers: [("Last-Event-ID", "1")])
        let caughtUp = try behind.nextEvent()
        #expect(caughtUp.event == "state" && caughtUp.id == "3" && caughtUp.data == #"{"value":3}"#)
        // Current: the next version is this stream's first event, so it comes whole although the client has 3.
        let current = try server.subscribe("/sessions/\(id)/events?delta=json-patch", headers: [("Last-Event-ID", "3")])
        _ = try Self.act(client, id, #"{"type":"increase"}"#)
        let next = try current.nextEvent()
        #expect(next.event == "state" && next.id == "4" && next.data == #"{"value":4}"#)
        let patched = try behind.nextEvent()
        #expect(patched.event == "patch" && patched.id == "4")
        #expect(patched.data == #"[{"op":"replace","path":"/value","value":4}]"#)
        _ = try Self.act(client, id, #"{"type":"increase"}"#)
        #expect(try current.nextEvent().event == "patch")
    }

    @Test func anUnknownDeltaIsRefused() throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        let paths = [
            "/sessions/\(id)/events?delta=merge-patch", "/events?sessions=\(id)&delta=",
            "/sessions/\(id)/events?delta=JSON-PATCH",
            // Given twice, each value counts: an unknown one beside json-patch is refused, not passed over.
            "/sessions/\(id)/events?delta=json-patch&delta=x", "/events?sessions=\(id)&delta=json-patch&delta=",
        ]
        for path in paths {
            let response = try server.request("GET", path)
            #expect(response.status == 400, "\(path)")
            #expect(response.errorCode == "invalid_delta", "\(path)")
            #expect(response.errorMessage?.contains("json-patch") == true, "\(path)")
        }
    }

    @Test func theMultiplexedStreamSendsEachSessionsPatchesWithTheCursor() throws {
        let server = try TestServer()
        try server.createSession("counter", id: "a")
        try server.createSession("todo", id: "t")
        let client = try server.connect()
        let stream = try server.subscribe("/events?sessions=a,t&delta=json-patch")
        #expect(try stream.nextEvent().data == #"{"session":"a","version":0,"state":{"value":0}}"#)
        let todo = try stream.nextEvent()
        #expect(todo.event == "state" && todo.session == "t")
        _ = try Self.act(client, "a", #"{"type":"increase"}"#)
        let patch = try stream.nextEvent()
        #expect(patch.event == "patch")
        #expect(patch.data == #"{"session":"a","version":1,"patch":[{"op":"replace","path":"/value","value":1}]}"#)
        #expect(patch.id != nil && patch.id != todo.id, "the cursor moved")
        _ = try Self.act(client, "t", #"{"type":"add","title":"x"}"#)
        let added = try stream.nextEvent()
        #expect(added.event == "patch" && added.session == "t" && added.version == 1)
        // Resumed with the last cursor: each session's next version comes whole, then patches again.
        let cursor = try #require(added.id)
        let resumed = try server.subscribe(
            "/events?sessions=a,t&delta=json-patch", headers: [("Last-Event-ID", cursor)])
        _ = try Self.act(client, "a", #"{"type":"increase"}"#)
        #expect(try resumed.nextEvent().data == #"{"session":"a","version":2,"state":{"value":2}}"#)
        _ = try Self.act(client, "a", #"{"type":"increase"}"#)
        let patched = try resumed.nextEvent()
        #expect(patched.data == #"{"session":"a","version":3,"patch":[{"op":"replace","path":"/value","value":3}]}"#)
    }

    @Test func theMultiplexedStreamPatchesTheSelectedValues() throws {
        let server = try TestServer()
        for id in ["x", "y"] { try server.createSession("todo", id: id) }
        let client = try server.connect()
        _ = try Self.act(client, "x", #"{"type":"add","title":"a"}"#)
        let stream = try server.subscribe("/events?sessions=x,y&select=/items&delta=json-patch")
        let first = try stream.nextEvent()
        #expect(first.data == #"{"session":"x","version":1,"state":[{"id":1,"title":"a","done":false}]}"#)
        #expect(try stream.nextEvent().data == #"{"session":"y","version":0,"state":[]}"#)
        _ = try Self.act(client, "y", #"{"type":"add","title":"b"}"#)
        _ = try Self.act(client, "x", #"{"type":"toggle","id":1}"#)
        let added = try stream.nextEvent()
        #expect(added.event == "patch")
        #expect(
            added.data == #"{"session":"y","version":1,"patch":[{"op":"add","path":"/0","#
                + #""value":{"id":1,"title":"b","done":false}}]}"#)
        let toggled = try stream.nextEvent()
        let expected = #"{"session":"x","version":2,"patch":[{"op":"replace","path":"/0/done","value":true}]}"#
        #expect(toggled.data == expected)
    }

    /// Five subscribers of the whole state and two of one selected value: one patch per version for the five,
    /// one per changed version for the two, the same bytes for each.
    @Test func eachPatchIsMadeOncePerVersionForEverySubscriber() throws {
        let server = try TestServer()
        let id = try server.createSession("todo")
        let whole = try (0..<5).map { _ in try server.subscribe("/sessions/\(id)/events?delta=json-patch") }
        let selected = try (0..<2).map { _ in
            try server.subscribe("/sessions/\(id)/events?delta=json-patch&select=/nextID")
        }
        for stream in whole + selected { #expect(try stream.nextEvent().event == "state") }
        let before = try Self.metric(server, "reactor_state_patches_total")
        let client = try server.connect()
        for title in ["a", "b", "c"] { _ = try Self.act(client, id, #"{"type":"add","title":"\#(title)"}"#) }
        for version in 1...3 {
            let events = try (whole + selected).map { try $0.nextEvent() }
            #expect(events.allSatisfy { $0.event == "patch" && $0.id == String(version) })
            #expect(Set(events.prefix(5).map(\.data)).count == 1)
            #expect(events.suffix(2).allSatisfy { $0.data == #"[{"op":"replace","path":"","value":\#(version + 1)}]"# })
        }
        #expect(try Self.metric(server, "reactor_state_patches_total") - before == 6)
    }

    /// A subscriber that does not read falls behind and skips versions; once it reads again, the first event after
    /// the skip is a whole state, and the patches after it apply to it.
    @Test func aSubscriberThatSkippedVersionsGetsAWholeStateNext() throws {
        let server = try TestServer { $0.sse.subscriberBufferBytes = 4096 }
        let id = try server.createSession("todo")
        let stream = try server.connect(receiveBuffer: 2048)
        try stream.send("GET /sessions/\(id)/events?delta=json-patch HTTP/1.1\r\nHost: t\r\n\r\n")
        // A subscriber that keeps up, so that (nearly) every version's patch is made: the stalled one must still not
        // get one after its skip. It reads each version as it comes, as a patch or (when even its 30 KB did not fit
        // at once) whole; the version is what counts.
        let reader = try server.subscribe("/sessions/\(id)/events?delta=json-patch")
        _ = try reader.nextEvent()
        let client = try server.connect()
        // Patches are small where states are large: each added item carries 30 KB, and is removed again, so the
        // socket buffers fill within a few dozen versions while the state stays small.
        let title = String(repeating: "x", count: 30_000)
        let initial = try Self.parse(try server.request("GET", "/sessions/\(id)").text)["state"]
        var states: [Int: JSONValue] = [0: try #require(initial)]
        var (drops, streak, last) = (0, 0, 0)
        // As in SlowSubscriberTests: five drops in a row across as many round trips mean the buffers stay full.
        while streak < 5 {
            let result = try Self.act(client, id, #"{"type":"add","title":"\#(title)"}"#)
            states[result.version] = result.state
            let itemID = try #require(result.state["nextID"]?.numberValue?.int64Value) - 1
            let removed = try Self.act(client, id, #"{"type":"remove","id":\#(itemID)}"#)
            states[removed.version] = removed.state
            for version in [result.version, removed.version] { try Self.read(version, from: reader) }
            let details = try server.adminEntry(id)?["subscriberDetails"] as? [[String: Any]]
            let now = details?.compactMap { $0["drops"] as? Int }.max() ?? 0
            streak = now > drops ? streak + 1 : 0
            drops = now
            try #require(result.version < 600, "the subscriber never fell behind for good within 600 states")
        }
        for _ in 0..<3 {
            let result = try Self.act(client, id, #"{"type":"add","title":"y"}"#)
            states[result.version] = result.state
            last = result.version
            try Self.read(result.version, from: reader)
        }
        _ = try stream.read(until: "\r\n\r\n")
        var events: [TestEvent] = []
        while events.last?.id != String(last) {
            let event = try stream.nextEvent()
            if event.event == "state" || event.event == "patch" { events.append(event) }
        }
        var held: (version: Int, state: JSONValue)?
        var wholeAfterSkip = 0
        for event in events {
            let version = try #require(event.id.flatMap(Int.init))
            if let previous = held, version == previous.version + 1, event.event == "patch" {
                held = (version, try TestJSONPatch.apply(try Self.parse(event.data), to: previous.state))
            } else {
                #expect(event.event == "state", "version \(version) after \(held?.version ?? -1) is not whole")
                if held != nil { wholeAfterSkip += 1 }
                held = (version, try Self.parse(event.data))
            }
            #expect(held?.state == states[version], "version \(version)")
        }
        #expect(wholeAfterSkip >= 1, "it skipped versions, and the next event after them was whole")
    }
}
