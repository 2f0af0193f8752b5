import Foundation
import JSONCodec
import ReactorServerTesting
import Testing

/// `?delta=json-patch` on an instance that relays a session another instance runs (real `reactor-server` processes
/// on NATS): the relay subscribes there for whole states, and the instance the client reached makes the patches.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"),
    .serialized)
struct NATSRelayPatchTests {
    @Test func patchesOfARelayedSessionAreMadeWhereTheClientIs() async throws {
        try await NATSFailoverTests.withPair { a, b in
            let create = #"{"reactor":"todo","id":"relaypatch"}"#
            #expect(try a.client().request("POST", "/sessions", body: create).status == 201)
            let actions = "/sessions/relaypatch/actions?wait=true"
            for title in ["milk", "eggs"] {
                let add = #"{"type":"add","title":"\#(title)"}"#
                #expect(try a.client().request("POST", actions, body: add).status == 200)
            }
            let single = try b.client()
            try single.openEventStream("/sessions/relaypatch/events?delta=json-patch")
            let first = try single.nextEvent()
            #expect(first.event == "state" && first.id == "2", "b's stream began with \(first)")
            let many = try b.client()
            try many.openEventStream("/events?sessions=relaypatch&delta=json-patch")
            #expect(try many.nextEvent().event == "state")

            let toggle = #"{"type":"toggle","id":2}"#
            #expect(try a.client().request("POST", actions, body: toggle).status == 200)
            let patch = try single.nextEvent()
            #expect(patch.event == "patch" && patch.id == "3", "b's stream then got \(patch)")
            #expect(patch.data == #"[{"op":"replace","path":"/items/1/done","value":true}]"#)
            let before = try JSONParser().parse(Array((first.data ?? "").utf8))
            let patched = try TestJSONPatch.apply(try JSONParser().parse(Array((patch.data ?? "").utf8)), to: before)
            let state = try JSONParser().parse(a.client().request("GET", "/sessions/relaypatch").body)["state"]
            #expect(patched == state)
            let multiplexed = try many.nextEvent()
            #expect(multiplexed.event == "patch" && multiplexed.data?.contains(#""patch":[{"op":"replace""#) == true)
        }
    }
}
