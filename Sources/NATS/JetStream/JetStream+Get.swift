import JSONCodec

/// Which stored message to read.
public enum MessageSelector: Sendable, Equatable {
    /// The message with this sequence.
    case sequence(UInt64)
    /// The newest message on this subject.
    case lastBySubject(String)
    /// The first message on this subject at or after this sequence (replay: start at 1, then at
    /// the previous sequence + 1, until nothing is found).
    case nextBySubject(String, from: UInt64)

    var json: JSONValue {
        switch self {
        case .sequence(let sequence): ["seq": .number(.uint(sequence))]
        case .lastBySubject(let subject): ["last_by_subj": .string(subject)]
        case .nextBySubject(let subject, let from): ["seq": .number(.uint(from)), "next_by_subj": .string(subject)]
        }
    }
}

/// A message as a stream stored it.
public struct StoredMessage: Sendable, Equatable {
    /// The stream it is in.
    public var stream: String
    /// The subject it was published to.
    public var subject: String
    /// Its sequence in the stream.
    public var sequence: UInt64
    /// The headers it was published with.
    public var headers: NATSHeaders
    /// Its payload.
    public var payload: [UInt8]
    /// When it was stored (RFC 3339, UTC), when the server said.
    public var time: String?
    /// Messages after this one that the reading consumer has yet to deliver (consumer fetches only).
    public var pending: UInt64?
    /// Its delivery number from the reading consumer (consumer fetches only).
    public var consumerSequence: UInt64?
}

/// Reading single messages: by direct get (any replica answers; needs `allow_direct`) or from the
/// stream's leader (`STREAM.MSG.GET`: consistent with every acknowledged publish).
extension JetStream {
    /// Reads one message by direct get and calls `completion` (on the connection's thread) with it,
    /// or nil when there is none. A replica may lag the leader by the last few publishes. On a
    /// stream without `allow_direct`, nats-server 2.9 ignores the request: it times out.
    public func directGet(
        stream: String, _ selector: MessageSelector,
        completion: @escaping @Sendable (Result<StoredMessage?, NATSError>) -> Void
    ) throws(NATSError) {
        let subject = "\(apiPrefix).DIRECT.GET.\(stream)"
        let connection = self.connection
        try connection.request(subject, payload: selector.json.serialized(), timeout: timeout) { result in
            switch result {
            case .failure(.noResponders(_, let server)):
                completion(.failure(.jetStreamUnavailable(subject: subject, server: server)))
            case .failure(let error):
                completion(.failure(error))
            case .success(let message):
                completion(
                    Self.storedMessage(
                        fromDirect: message, stream: stream, subject: subject, server: connection.serverName))
            }
        }
    }

    /// Reads one message by direct get; nil when there is none. See ``directGet(stream:_:completion:)``.
    public func directGet(stream: String, _ selector: MessageSelector) async throws(NATSError) -> StoredMessage? {
        try await Self.awaiting {
            (completion: @escaping @Sendable (Result<StoredMessage?, NATSError>) -> Void) throws(NATSError) in
            try directGet(stream: stream, selector, completion: completion)
        }
    }

    /// Every message on `subject` from sequence `from` on, oldest first, one direct get each (for
    /// short histories; ``replay(stream:subject:from:batch:)`` reads long ones in batches).
    public func directMessages(stream: String, subject: String, from: UInt64 = 1) async throws(NATSError)
        -> [StoredMessage]
    {
        var messages: [StoredMessage] = []
        var next = from
        while let message = try await directGet(stream: stream, .nextBySubject(subject, from: next)) {
            messages.append(message)
            next = message.sequence + 1
        }
        return messages
    }

    /// Reads one message from the stream's leader; nil when there is none.
    public func getMessage(stream: String, _ selector: MessageSelector) async throws(NATSError) -> StoredMessage? {
        try await Self.awaiting {
            (completion: @escaping @Sendable (Result<StoredMessage?, NATSError>) -> Void) throws(NATSError) in
            try getMessage(stream: stream, selector, completion: completion)
        }
    }

    /// Reads one message from the stream's leader (consistent with every acknowledged publish) and
    /// calls `completion` (on the connection's thread) with it, or nil when there is none.
    public func getMessage(
        stream: String, _ selector: MessageSelector,
        completion: @escaping @Sendable (Result<StoredMessage?, NATSError>) -> Void
    ) throws(NATSError) {
        let subject = "\(apiPrefix).STREAM.MSG.GET.\(stream)"
        let connection = self.connection
        try request("STREAM.MSG.GET.\(stream)", body: selector.json) { result in
            switch result {
            case .failure(.jetStream(let error)) where error.errorCode == JetStreamAPIError.noMessageFound:
                completion(.success(nil))
            case .failure(let error):
                completion(.failure(error))
            case .success(let reply):
                completion(
                    Self.storedMessage(fromGet: reply, stream: stream, subject: subject, server: connection.serverName)
                        .map(Optional.some))
            }
        }
    }

    /// A `STREAM.MSG.GET` reply: the message with its payload and headers in base64.
    static func storedMessage(fromGet reply: JSONValue, stream: String, subject: String, server: String) -> Result<
        StoredMessage, NATSError
    > {
        guard let message = reply["message"], let messageSubject = message["subject"]?.stringValue,
            let sequence = message.uint64("seq")
        else {
            return .failure(.invalidResponse(subject: subject, server: server, detail: "no message in \(reply)"))
        }
        guard let payload = Base64.decode(message["data"]?.stringValue ?? ""),
            let headerBytes = Base64.decode(message["hdrs"]?.stringValue ?? "")
        else {
            return .failure(.invalidResponse(subject: subject, server: server, detail: "invalid base64 in the message"))
        }
        var headers = NATSHeaders()
        if !headerBytes.isEmpty {
            do {
                headers = try headerBytes.withUnsafeBufferPointer { buffer throws(NATSProtocolViolation) in
                    try NATSHeaders.parse(buffer)
                }
            } catch {
                return .failure(
                    .invalidResponse(subject: subject, server: server, detail: "malformed headers: \(error)"))
            }
        }
        return .success(
            StoredMessage(
                stream: stream, subject: messageSubject, sequence: sequence, headers: headers, payload: payload,
                time: message["time"]?.stringValue))
    }

    /// A direct get's reply: the message with `Nats-Stream`/`Nats-Subject`/`Nats-Sequence`/
    /// `Nats-Time-Stamp` headers, or a status (404: nothing found).
    static func storedMessage(fromDirect message: NATSMessage, stream: String, subject: String, server: String)
        -> Result<StoredMessage?, NATSError>
    {
        if message.status == 404 { return .success(nil) }
        if let status = message.status {
            return .failure(
                .invalidResponse(
                    subject: subject, server: server,
                    detail: "status \(status) \(message.headers.statusDescription ?? "")"))
        }
        var headers = message.headers
        guard let messageSubject = headers["Nats-Subject"],
            let sequence = headers["Nats-Sequence"].flatMap({ UInt64($0) })
        else {
            // A JSON error instead of a message: direct gets are not allowed on this stream, say.
            if case .failure(let error) = decodeJSON(message, subject: subject, server: server), case .jetStream = error
            {
                return .failure(error)
            }
            return .failure(
                .invalidResponse(
                    subject: subject, server: server,
                    detail: "a direct get reply without Nats-Subject and Nats-Sequence"))
        }
        let time = headers["Nats-Time-Stamp"]
        for name in [
            "Nats-Stream", "Nats-Subject", "Nats-Sequence", "Nats-Time-Stamp", "Nats-Last-Sequence", "Nats-Num-Pending",
        ] { headers[name] = nil }
        return .success(
            StoredMessage(
                stream: stream, subject: messageSubject, sequence: sequence, headers: headers, payload: message.payload,
                time: time))
    }
}
