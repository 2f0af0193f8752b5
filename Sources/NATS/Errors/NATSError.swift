/// Everything that can go wrong with a NATS or JetStream call. Every case that involves a server
/// names it (as `nats://host:port`, never with credentials).
public enum NATSError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The connection was closed (by ``NATSConnection/close()`` or after too many failed reconnects).
    case closed
    /// No server could be reached in time; the last failure of each attempt, server first.
    case cannotConnect(attempts: [String])
    /// The server refused the credentials (`-ERR 'Authorization Violation'`).
    case authorizationViolation(server: String, message: String)
    /// The server requires TLS, which this client does not speak.
    case tlsRequired(server: String)
    /// The connection broke while this operation was in flight: it may or may not have taken effect.
    case connectionLost(server: String, reason: String)
    /// No reply arrived within the timeout.
    case timedOut(subject: String, server: String, after: Duration)
    /// Nobody subscribes to the subject (the server answered with status 503).
    case noResponders(subject: String, server: String)
    /// The server reported an error (`-ERR`) that is not about credentials.
    case serverError(server: String, message: String)
    /// The server's output broke the protocol; the connection was dropped.
    case protocolViolation(server: String, violation: NATSProtocolViolation)
    /// The message is larger than the server's `max_payload`.
    case payloadTooLarge(bytes: Int, limit: Int)
    /// A subject, header or option that cannot be sent.
    case invalidArgument(String)
    /// The outbound buffer is full: the server reads slower than we write, or is unreachable.
    case outboundBufferFull(limit: Int)
    /// JetStream answered with an error; the code tells which (see ``JetStreamAPIError``).
    case jetStream(JetStreamAPIError)
    /// Nothing answers on the JetStream API: JetStream is not enabled, or not ready yet (a cluster
    /// still electing its leader), or no stream captures the subject of a publish.
    case jetStreamUnavailable(subject: String, server: String)
    /// A JetStream reply that could not be understood.
    case invalidResponse(subject: String, server: String, detail: String)
    /// The waiting task was cancelled; the operation may still take effect.
    case cancelled
    /// The connection could not be set up: a system call failed (no descriptor or thread left).
    case systemCall(String)

    /// The JetStream error code (`err_code`, e.g. 10071 for a wrong last sequence), if this is a JetStream error.
    public var jetStreamErrorCode: Int? {
        if case .jetStream(let error) = self { return error.errorCode }
        return nil
    }

    /// Whether retrying later may succeed: the network, a missing leader, or a timeout, as opposed
    /// to a refusal that will repeat (bad credentials, a wrong expected sequence, a bad argument).
    public var isTransient: Bool {
        switch self {
        case .cannotConnect, .connectionLost, .timedOut, .noResponders, .jetStreamUnavailable, .outboundBufferFull: true
        case .jetStream(let error): error.isTransient
        case .closed, .authorizationViolation, .tlsRequired, .serverError, .protocolViolation, .payloadTooLarge,
            .invalidArgument, .invalidResponse, .cancelled, .systemCall:
            false
        }
    }

    /// The error in words, naming the server.
    public var description: String {
        switch self {
        case .closed: "the NATS connection is closed"
        case .cannotConnect(let attempts): "could not connect to any NATS server: " + attempts.joined(separator: "; ")
        case .authorizationViolation(let server, let message): "\(server) refused the credentials: \(message)"
        case .tlsRequired(let server): "\(server) requires TLS, which this client does not support"
        case .connectionLost(let server, let reason):
            "the connection to \(server) was lost (\(reason)); the operation may or may not have taken effect"
        case .timedOut(let subject, let server, let after): "no reply on \(subject) from \(server) within \(after)"
        case .noResponders(let subject, let server): "no responders for \(subject) on \(server)"
        case .serverError(let server, let message): "\(server) reported an error: \(message)"
        case .protocolViolation(let server, let violation): "\(server) broke the NATS protocol: \(violation)"
        case .payloadTooLarge(let bytes, let limit):
            "a message of \(bytes) bytes exceeds the server's max_payload of \(limit)"
        case .invalidArgument(let message): message
        case .outboundBufferFull(let limit):
            "the NATS outbound buffer is full (\(limit) bytes not yet written to the server)"
        case .jetStream(let error): error.description
        case .jetStreamUnavailable(let subject, let server):
            "JetStream not enabled/not ready on \(server) (nothing answered \(subject); "
                + "for a publish: no stream captures that subject)"
        case .invalidResponse(let subject, let server, let detail):
            "unexpected reply to \(subject) from \(server): \(detail)"
        case .cancelled: "the waiting task was cancelled"
        case .systemCall(let failure): "the NATS connection could not be set up: \(failure)"
        }
    }
}
