import JSONCodec

/// The JetStream API over a ``NATSConnection``: streams, publishes with acknowledgement and
/// optimistic concurrency, reads by direct get or pull consumer, key-value buckets.
///
/// Every call comes in two forms: a completion handler, called once on the connection's thread
/// (for callers on an event loop, which must never wait on the network), and `async`. Errors name
/// the server and, for JetStream's own refusals, carry its error code (``JetStreamAPIError``).
///
/// ```swift
/// let js = JetStream(connection: connection)
/// try await js.waitUntilReady(timeout: .seconds(60), logger: logger)
/// _ = try await js.createOrUpdateStream(StreamConfig(name: "SESSIONS", subjects: ["sessions.>"], replicas: 3))
/// let ack = try await js.publish(
///     "sessions.s1", payload: record, options: PublishOptions(expectedLastSubjectSequence: 4))
/// ```
public struct JetStream: Sendable {
    /// The connection requests go over.
    public let connection: NATSConnection
    /// The API subject prefix: `$JS.API`, or `$JS.<domain>.API` for a JetStream domain.
    public var apiPrefix: String
    /// The reply timeout of API requests and publishes that do not give their own.
    public var timeout: Duration

    /// JetStream over `connection`.
    public init(connection: NATSConnection, apiPrefix: String = "$JS.API", timeout: Duration = .seconds(5)) {
        self.connection = connection
        self.apiPrefix = apiPrefix
        self.timeout = timeout
    }

    /// Sends `body` to `$JS.API.<api>` and calls `completion` with the decoded reply, or with the
    /// JetStream error it contains, or with ``NATSError/jetStreamUnavailable(subject:server:)`` when
    /// nothing answers.
    public func request(
        _ api: String, body: JSONValue?, timeout: Duration? = nil,
        completion: @escaping @Sendable (Result<JSONValue, NATSError>) -> Void
    ) throws(NATSError) {
        let subject = apiPrefix + "." + api
        let connection = self.connection
        try connection.request(subject, payload: body?.serialized() ?? [], timeout: timeout ?? self.timeout) { result in
            completion(Self.decode(result, subject: subject, connection: connection))
        }
    }

    /// Sends `body` to `$JS.API.<api>` and returns the decoded reply; see ``request(_:body:timeout:completion:)``.
    public func request(_ api: String, body: JSONValue?, timeout: Duration? = nil) async throws(NATSError) -> JSONValue
    {
        try await Self.awaiting {
            (completion: @escaping @Sendable (Result<JSONValue, NATSError>) -> Void) throws(NATSError) in
            try request(api, body: body, timeout: timeout, completion: completion)
        }
    }

    /// A reply as JSON, with JetStream's `error` object and "no responders" turned into errors.
    static func decode(_ result: Result<NATSMessage, NATSError>, subject: String, connection: NATSConnection) -> Result<
        JSONValue, NATSError
    > {
        switch result {
        case .failure(.noResponders(_, let server)):
            return .failure(.jetStreamUnavailable(subject: subject, server: server))
        case .failure(let error):
            return .failure(error)
        case .success(let message):
            return decodeJSON(message, subject: subject, server: connection.serverName)
        }
    }

    /// A reply's payload as a JSON object, with JetStream's `error` object turned into an error.
    static func decodeJSON(_ message: NATSMessage, subject: String, server: String) -> Result<JSONValue, NATSError> {
        guard let value = try? JSONParser(maxDepth: 32, maxBytes: 64 << 20).parse(message.payload), case .object = value
        else {
            return .failure(
                .invalidResponse(
                    subject: subject, server: server, detail: "not a JSON object: \(message.text.prefix(200))"))
        }
        if let error = apiError(in: value, subject: subject, server: server) { return .failure(.jetStream(error)) }
        return .success(value)
    }

    /// JetStream's `{"error":{"code":…,"err_code":…,"description":…}}`, if the reply is one.
    static func apiError(in value: JSONValue, subject: String, server: String) -> JetStreamAPIError? {
        guard let error = value["error"], case .object = error else { return nil }
        return JetStreamAPIError(
            code: Int(error["code"]?.numberValue?.int64Value ?? 0),
            errorCode: Int(error["err_code"]?.numberValue?.int64Value ?? 0),
            text: error["description"]?.stringValue ?? "", subject: subject, server: server)
    }

    /// Turns a completion-handler call into an `async` one.
    static func awaiting<T: Sendable>(
        _ start: (@escaping @Sendable (Result<T, NATSError>) -> Void) throws(NATSError) -> Void
    ) async throws(NATSError) -> T {
        let result: Result<T, NATSError> = await withCheckedContinuation { continuation in
            do throws(NATSError) {
                try start { continuation.resume(returning: $0) }
            } catch {
                continuation.resume(returning: .failure(error))
            }
        }
        return try result.get()
    }
}

extension NATSConnection {
    /// The connected server as `nats://host:port` (without credentials), for error messages.
    public var serverName: String { state.withLock { $0.serverName } }
}

extension JSONValue {
    /// The member as an `Int`, if it is an integer.
    func int(_ key: String) -> Int? { self[key]?.numberValue?.int64Value.map { Int($0) } }

    /// The member as a `UInt64`, if it is a non-negative integer.
    func uint64(_ key: String) -> UInt64? { self[key]?.numberValue?.uint64Value }
}

extension Duration {
    /// Whole nanoseconds, as JetStream's JSON wants durations.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
