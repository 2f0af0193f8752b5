import Synchronization

/// Answers one request: exactly one `respond` or `startEventStream`, once, from any thread.
/// Later calls are ignored; a writer dropped without answering sends a 500.
public final class HTTPResponseWriter: Sendable {
    private let connection: Connection
    private let number: UInt64
    private let used = Atomic<Bool>(false)

    init(connection: Connection, number: UInt64) {
        self.connection = connection
        self.number = number
    }

    deinit {
        if !used.load(ordering: .acquiring) {
            connection.loop.logger.error("a responder dropped a request without answering; sending 500")
            let connection = connection
            let number = number
            connection.loop.execute {
                let rejection = HTTPRejection(.noResponse, "the server dropped the request without answering it")
                connection.complete(connection.loop.responder.response(for: rejection), number: number)
            }
        }
    }

    /// Sends `response` (the server adds `Date`, `Content-Length` and `Connection` as needed) once
    /// the server's ``OutputBarrier`` reports `position` durable: what the answer shows. nil (the
    /// default) waits for everything appended when it is queued; 0 for an answer that shows nothing
    /// stored (a refusal because nothing can be stored). `refusedUnlessStored` for an answer that
    /// acknowledges a change: should the barrier fail to store what it shows, a 503
    /// (``HTTPRejection/Kind/notStored``) goes in its place and the connection closes after it.
    public func respond(
        _ response: HTTPResponse, dependingOn position: UInt64? = nil, refusedUnlessStored: Bool = false
    ) {
        guard claim("respond") else { return }
        let connection = connection
        let number = number
        if connection.loop.inLoop {
            // Answered inside respond(to:writer:): no closure, no hand-off.
            connection.complete(response, number: number, dependingOn: position, refusable: refusedUnlessStored)
        } else {
            connection.loop.enqueue(
                .run {
                    connection.complete(response, number: number, dependingOn: position, refusable: refusedUnlessStored)
                })
        }
    }

    /// Sends a response built from its parts (see ``respond(_:dependingOn:refusedUnlessStored:)``).
    public func respond(
        status: Int, headers: HTTPHeaders = [:], body: [UInt8] = [], dependingOn position: UInt64? = nil,
        refusedUnlessStored: Bool = false
    ) {
        respond(
            HTTPResponse(status: HTTPStatus(code: status), headers: headers, body: body), dependingOn: position,
            refusedUnlessStored: refusedUnlessStored)
    }

    /// Sends an answer whose small body is bytes the caller holds for the call (a 202's `{"seq":N}` on its stack; see
    /// ``respond(_:dependingOn:refusedUnlessStored:)``): on the connection's loop it is encoded straight into the
    /// output, no array made for the body; from another thread the bytes are copied into one first.
    public func respond(
        status: Int, headers: HTTPHeaders, bodyBytes: UnsafeRawBufferPointer, dependingOn position: UInt64? = nil,
        refusedUnlessStored: Bool = false
    ) {
        guard connection.loop.inLoop else {
            return respond(
                status: status, headers: headers, body: Array(bodyBytes), dependingOn: position,
                refusedUnlessStored: refusedUnlessStored)
        }
        guard claim("respond") else { return }
        // The code alone: its standard phrase is written from the encoder's table, no `HTTPStatus` made.
        connection.complete(
            code: status, headers: headers, body: bodyBytes, number: number, dependingOn: position,
            refusable: refusedUnlessStored)
    }

    /// Answers with `200 text/event-stream` and returns the stream to push events to. `onNotice`
    /// runs on the connection's loop when the stream drains after an overflow or ends.
    public func startEventStream(headers: HTTPHeaders = [:], onNotice: @escaping @Sendable (EventStreamNotice) -> Void)
        -> ServerSentEventStream
    {
        let stream = ServerSentEventStream(connection: connection, onNotice: onNotice)
        guard claim("startEventStream") else {
            stream.connectionClosed(reason: "the request was already answered")
            return stream
        }
        let connection = connection
        let number = number
        connection.loop.execute { connection.startStream(stream, headers: headers, number: number) }
        return stream
    }

    private func claim(_ call: String) -> Bool {
        if used.exchange(true, ordering: .acquiringAndReleasing) {
            connection.loop.logger.error("\(call) called on a request that was already answered; ignored")
            return false
        }
        return true
    }
}
