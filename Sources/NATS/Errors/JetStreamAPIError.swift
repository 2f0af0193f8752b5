/// An error JetStream returned (`{"error":{"code":400,"err_code":10071,"description":"wrong last sequence: 5"}}`),
/// with the server that returned it and the subject that was asked.
///
/// ```swift
/// do { _ = try await js.publish("orders.17", payload, options: .init(expectedLastSubjectSequence: 4)) }
/// catch .jetStream(let error) where error.errorCode == JetStreamAPIError.wrongLastSequence { … }
/// ```
public struct JetStreamAPIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The HTTP-like status (`400`, `404`, `503` …).
    public var code: Int
    /// The JetStream error code (`err_code`), which says exactly what went wrong.
    public var errorCode: Int
    /// The server's words.
    public var text: String
    /// The subject that was asked (an API subject, or the subject of a publish).
    public var subject: String
    /// The server that answered.
    public var server: String

    /// An error from its parts.
    public init(code: Int, errorCode: Int, text: String, subject: String, server: String) {
        self.code = code
        self.errorCode = errorCode
        self.text = text
        self.subject = subject
        self.server = server
    }

    /// A publish's `Nats-Expected-Last-Sequence` or `Nats-Expected-Last-Subject-Sequence` did not match.
    public static let wrongLastSequence = 10071
    /// A publish's `Nats-Expected-Last-Msg-Id` did not match.
    public static let wrongLastMessageID = 10070
    /// A publish's `Nats-Expected-Stream` did not match.
    public static let expectedStreamMismatch = 10060
    /// The stream does not exist.
    public static let streamNotFound = 10059
    /// A stream of that name exists with a different configuration.
    public static let streamNameInUse = 10058
    /// The consumer does not exist.
    public static let consumerNotFound = 10014
    /// No message matched (e.g. a get by sequence or subject).
    public static let noMessageFound = 10037
    /// JetStream is not enabled for the account.
    public static let notEnabledForAccount = 10039
    /// JetStream is not enabled on the server.
    public static let notEnabled = 10076
    /// The JetStream system is temporarily unavailable (a cluster without a leader yet).
    public static let temporarilyUnavailable = 10008
    /// Not enough peers to place the stream's replicas (a cluster still forming).
    public static let insufficientResources = 10023
    /// No suitable peers for placement (a cluster still forming, or fewer nodes than replicas).
    public static let noSuitablePeers = 10005
    /// The server that received the request cannot handle it now (not the leader).
    public static let clusterNotLeader = 10009
    /// More than one replica asked of a server that is not part of a cluster.
    public static let replicasNotSupported = 10074

    /// Whether the same call may succeed later, once the cluster has settled.
    public var isTransient: Bool {
        if errorCode == Self.notEnabled || errorCode == Self.notEnabledForAccount { return false }
        // A create of a stream that another client has just created with the same configuration is answered
        // by that stream's copies, and one not made yet says "not found" (seen on 2.9 when a cluster's
        // instances start together): the stream exists, and the same create succeeds once its copy does.
        if errorCode == Self.streamNotFound && subject.contains(".STREAM.CREATE.") { return true }
        return code == 503
            || [Self.temporarilyUnavailable, Self.insufficientResources, Self.noSuitablePeers, Self.clusterNotLeader]
                .contains(errorCode)
    }

    /// `JetStream error 10071 (status 400) from nats://127.0.0.1:4222 on $KV.b.k: wrong last sequence: 5`.
    public var description: String {
        "JetStream error \(errorCode) (status \(code)) from \(server) on \(subject): \(text)"
    }
}
