/// What a publish expects of the stream; a mismatch is refused with a JetStream error and stores nothing.
public struct PublishOptions: Sendable, Equatable {
    /// `Nats-Msg-Id`: a second publish with the same id within the duplicate window is acknowledged
    /// as a duplicate and not stored again (safe retries).
    public var messageID: String?
    /// `Nats-Expected-Stream`: the stream that must capture the subject.
    public var expectedStream: String?
    /// `Nats-Expected-Last-Sequence`: the stream's last sequence must be this (error 10071 otherwise).
    public var expectedLastSequence: UInt64?
    /// `Nats-Expected-Last-Subject-Sequence`: the sequence of the last message on this subject must be
    /// this, 0 meaning "no message yet" (error 10071 otherwise). The single-writer check.
    public var expectedLastSubjectSequence: UInt64?
    /// `Nats-Expected-Last-Msg-Id`: the stream's last message id must be this (error 10070 otherwise).
    public var expectedLastMessageID: String?
    /// The acknowledgement timeout (nil: the JetStream context's).
    public var timeout: Duration?

    /// Options; every expectation is off unless given.
    public init(
        messageID: String? = nil, expectedStream: String? = nil, expectedLastSequence: UInt64? = nil,
        expectedLastSubjectSequence: UInt64? = nil, expectedLastMessageID: String? = nil, timeout: Duration? = nil
    ) {
        self.messageID = messageID
        self.expectedStream = expectedStream
        self.expectedLastSequence = expectedLastSequence
        self.expectedLastSubjectSequence = expectedLastSubjectSequence
        self.expectedLastMessageID = expectedLastMessageID
        self.timeout = timeout
    }

    /// The header block of `headers` with these options' headers set, nil when empty. Written in one pass, without
    /// the intermediate fields of ``apply(to:)`` (a publish's hot path), unless `headers` names an option's header
    /// or carries a status.
    func encodedHeaders(_ headers: NATSHeaders?) throws(NATSError) -> [UInt8]? {
        let given = headers?.fields ?? []
        let names = [
            "Nats-Msg-Id", "Nats-Expected-Stream", "Nats-Expected-Last-Sequence",
            "Nats-Expected-Last-Subject-Sequence", "Nats-Expected-Last-Msg-Id",
        ]
        if headers?.status != nil || headers?.statusDescription != nil
            || given.contains(where: { field in names.contains { field.name.equalsIgnoringASCIICase($0) } })
        {
            return try apply(to: headers)?.encoded()
        }
        guard
            !given.isEmpty || messageID != nil || expectedStream != nil || expectedLastSequence != nil
                || expectedLastSubjectSequence != nil || expectedLastMessageID != nil
        else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(160)
        bytes += "NATS/1.0\r\n".utf8
        for field in given { try NATSHeaders.append(field.name, field.value, to: &bytes) }
        if let messageID { try NATSHeaders.append(names[0], messageID, to: &bytes) }
        if let expectedStream { try NATSHeaders.append(names[1], expectedStream, to: &bytes) }
        if let expectedLastSequence { NATSHeaders.append(names[2], expectedLastSequence, to: &bytes) }
        if let expectedLastSubjectSequence { NATSHeaders.append(names[3], expectedLastSubjectSequence, to: &bytes) }
        if let expectedLastMessageID { try NATSHeaders.append(names[4], expectedLastMessageID, to: &bytes) }
        bytes += "\r\n".utf8
        return bytes
    }

    /// `headers` with these options' headers set.
    func apply(to headers: NATSHeaders?) -> NATSHeaders? {
        var result = headers ?? NATSHeaders()
        if let messageID { result["Nats-Msg-Id"] = messageID }
        if let expectedStream { result["Nats-Expected-Stream"] = expectedStream }
        if let expectedLastSequence { result["Nats-Expected-Last-Sequence"] = String(expectedLastSequence) }
        if let expectedLastSubjectSequence {
            result["Nats-Expected-Last-Subject-Sequence"] = String(expectedLastSubjectSequence)
        }
        if let expectedLastMessageID { result["Nats-Expected-Last-Msg-Id"] = expectedLastMessageID }
        return result.isEmpty ? nil : result
    }
}

/// JetStream's acknowledgement of a publish: the message is stored (on a quorum of the replicas).
public struct PubAck: Sendable, Equatable {
    /// The stream that stored it.
    public var stream: String
    /// Its sequence in that stream.
    public var sequence: UInt64
    /// True when a message with the same `Nats-Msg-Id` was already stored (this one was not).
    public var duplicate: Bool

    /// An acknowledgement from its parts.
    public init(stream: String, sequence: UInt64, duplicate: Bool) {
        self.stream = stream
        self.sequence = sequence
        self.duplicate = duplicate
    }

    /// What a plain acknowledgement starts with (built once, not per acknowledgement).
    private static let plainHead = Array(#"{"stream":""#.utf8)
    /// What may follow its stream name: with and without the space nats-server puts after the comma.
    private static let plainMiddles = [Array(#"", "seq":"#.utf8), Array(#"","seq":"#.utf8)]

    /// The common acknowledgement read without a JSON tree: exactly `{"stream":"<name>","seq":<n>}` or, as
    /// nats-server writes it, `{"stream":"<name>", "seq":<n>}`, the name without escapes. Nil for anything else (a
    /// duplicate, a domain, an error), which the JSON parser reads.
    init?(plain bytes: [UInt8]) {
        let head = Self.plainHead
        guard bytes.starts(with: head), bytes.last == UInt8(ascii: "}") else { return nil }
        var index = head.count
        while index < bytes.count, bytes[index] != UInt8(ascii: "\""), bytes[index] != UInt8(ascii: "\\"),
            bytes[index] >= 0x20
        {
            index += 1
        }
        let nameEnd = index
        guard nameEnd > head.count,
            let middle = Self.plainMiddles.first(where: { bytes[nameEnd...].starts(with: $0) })
        else { return nil }
        index += middle.count
        var sequence: UInt64 = 0
        let digitsStart = index
        while index < bytes.count - 1 {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10, index - digitsStart < 19 else { return nil }
            sequence = sequence * 10 + UInt64(digit)
            index += 1
        }
        guard index > digitsStart, index == bytes.count - 1 else { return nil }
        self.init(
            stream: String(decoding: bytes[head.count..<nameEnd], as: UTF8.self), sequence: sequence, duplicate: false)
    }
}

/// Publishing into streams with acknowledgement.
extension JetStream {
    /// Publishes to a subject a stream captures and calls `completion` once, on the connection's
    /// thread, with the acknowledgement or the error (a JetStream error such as 10071 for a failed
    /// expectation; ``NATSError/jetStreamUnavailable(subject:server:)`` when no stream captures the
    /// subject; a timeout or lost connection, after which the message may or may not be stored: retry
    /// with the same ``PublishOptions/messageID`` to be safe). Any number may be in flight at once.
    public func publish(
        _ subject: String, payload: some Collection<UInt8> & Sendable, headers: NATSHeaders? = nil,
        options: PublishOptions = PublishOptions(),
        completion: @escaping @Sendable (Result<PubAck, NATSError>) -> Void
    ) throws(NATSError) {
        let connection = self.connection
        let headerBytes = try options.encodedHeaders(headers)
        let handler = PendingReply.Handler.single { result in
            if case .success(let message) = result, message.headers.isEmpty, let ack = PubAck(plain: message.payload) {
                return completion(.success(ack))
            }
            completion(
                Self.decode(result, subject: subject, connection: connection).flatMap { reply in
                    guard let stream = reply["stream"]?.stringValue, let sequence = reply.uint64("seq") else {
                        return .failure(
                            .invalidResponse(
                                subject: subject, server: connection.serverName,
                                detail: "no stream and seq in the acknowledgement: \(reply)"))
                    }
                    return .success(
                        PubAck(stream: stream, sequence: sequence, duplicate: reply["duplicate"]?.boolValue ?? false))
                })
        }
        _ = try connection.sendRequest(
            subject, payload: payload, headerBytes: headerBytes, timeout: options.timeout ?? timeout, handler: handler)
    }

    /// Publishes and returns the acknowledgement; see ``publish(_:payload:headers:options:completion:)``.
    public func publish(
        _ subject: String, payload: some Collection<UInt8> & Sendable, headers: NATSHeaders? = nil,
        options: PublishOptions = PublishOptions()
    ) async throws(NATSError) -> PubAck {
        try await Self.awaiting {
            (completion: @escaping @Sendable (Result<PubAck, NATSError>) -> Void) throws(NATSError) in
            try publish(subject, payload: payload, headers: headers, options: options, completion: completion)
        }
    }
}
