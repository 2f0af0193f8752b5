import NATS
import Testing

/// Which JetStream answers are worth retrying (``NATSError/isTransient``), as start-up and the storage backend
/// retry them.
struct JetStreamErrorTests {
    func error(_ errorCode: Int, code: Int = 404, on subject: String) -> NATSError {
        .jetStream(
            JetStreamAPIError(
                code: code, errorCode: errorCode, text: "stream not found", subject: subject,
                server: "nats://127.0.0.1:4222"))
    }

    /// The answer a cluster's instances met when they created the same stream at once (nats-server 2.9.10): the
    /// create was answered by a copy of the stream not made yet. A later create finds it; a stream that is not
    /// found when read or deleted is simply not there.
    @Test func aStreamNotFoundAnsweringACreateIsRetriedAndOnlyThen() {
        #expect(error(JetStreamAPIError.streamNotFound, on: "$JS.API.STREAM.CREATE.KV_sessions").isTransient)
        #expect(!error(JetStreamAPIError.streamNotFound, on: "$JS.API.STREAM.INFO.KV_sessions").isTransient)
        #expect(!error(JetStreamAPIError.streamNotFound, on: "$JS.API.STREAM.DELETE.KV_sessions").isTransient)
        #expect(!error(JetStreamAPIError.streamNameInUse, code: 400, on: "$JS.API.STREAM.CREATE.S").isTransient)
        #expect(error(JetStreamAPIError.clusterNotLeader, code: 500, on: "$JS.API.STREAM.CREATE.S").isTransient)
    }
}
