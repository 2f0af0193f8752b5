import ReactorServerTesting
import Testing

@testable import NATS

/// The acknowledgements a real nats-server sends for the reactor's kind of publish are read without a JSON tree.
@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
struct PubAckWireTests {
    /// A publish with a message id and an expected subject sequence, as the session log sends it: the server's
    /// acknowledgement bytes (whatever its spelling) are read by `PubAck(plain:)`: its stream and sequence.
    @Test func theServersAcknowledgementTakesThePlainPath() async throws {
        try await withJetStream { js, _ in
            _ = try await js.createOrUpdateStream(StreamConfig(name: "ACKS", subjects: ["acks.>"]))
            for sequence: UInt64 in 1...3 {
                let headers: NATSHeaders = [
                    "Nats-Msg-Id": "m\(sequence)", "Nats-Expected-Last-Subject-Sequence": "\(sequence - 1)",
                ]
                let reply = try await js.connection.request("acks.a", payload: "x".bytes, headers: headers)
                #expect(
                    PubAck(plain: reply.payload) == PubAck(stream: "ACKS", sequence: sequence, duplicate: false),
                    "not read by the plain path: \(reply.text)")
            }
        }
    }
}
