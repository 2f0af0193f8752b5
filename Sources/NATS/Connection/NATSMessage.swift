/// A message delivered to a subscription or as a reply.
public struct NATSMessage: Sendable, Equatable {
    /// The subject it was published to.
    public var subject: String
    /// Where to send a reply, if the publisher asked for one.
    public var replyTo: String?
    /// Its headers (empty for a message published without any); carries the status of server replies.
    public var headers: NATSHeaders
    /// Its payload.
    public var payload: [UInt8]

    /// A message from its parts.
    public init(subject: String, replyTo: String? = nil, headers: NATSHeaders = NATSHeaders(), payload: [UInt8] = []) {
        self.subject = subject
        self.replyTo = replyTo
        self.headers = headers
        self.payload = payload
    }

    /// The status code of a server-generated message (`503` no responders, `404`, `408` …), if any.
    public var status: Int? { headers.status }

    /// The payload as UTF-8 text (invalid sequences replaced).
    public var text: String { String(decoding: payload, as: UTF8.self) }
}
