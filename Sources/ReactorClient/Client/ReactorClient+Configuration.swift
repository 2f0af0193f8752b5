import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension ReactorClient {
    /// Timeouts, reconnection, limits and the clock of a client.
    ///
    /// ```swift
    /// var configuration = ReactorClient.Configuration()
    /// configuration.reconnect.maximumDelay = .seconds(10)
    /// configuration.streamIdleTimeout = .seconds(45)     // > the server's sse.keepAliveSeconds
    /// let client = ReactorClient(baseURL: url, configuration: configuration)
    /// ```
    public struct Configuration: Sendable {
        /// The session for ordinary requests (ephemeral: no cookies, no cache).
        public var urlSession: URLSession
        /// Longest wait for one ordinary request, including `?wait=true` (the server's own bound is
        /// `sessions.waitTimeoutSeconds`, 30 s by default).
        public var requestTimeout: Duration
        /// An event stream that stays silent this long is taken for dead and reconnected (the server sends a
        /// keep-alive comment every `sse.keepAliveSeconds`, 15 s by default).
        public var streamIdleTimeout: Duration
        /// When to reconnect an event stream.
        public var reconnect: ReconnectPolicy
        /// Bounds on what one event stream may make the client hold.
        public var eventLimits: ServerSentEventParser.Limits
        /// Where single-session streams carry their credential: the `Authorization` header (default; keeps
        /// secrets out of URLs and proxy logs) or the `access_token` query parameter.
        public var streamCredentials: StreamCredentials
        /// The clock reconnection waits are measured on (tests pass one they control).
        public var clock: any Clock<Duration>
        /// Whether event streams ask for RFC 6902 patches after their first state (`?delta=json-patch`; default
        /// true): the client applies them and still delivers whole states, and a patch that does not apply makes
        /// it reconnect for a whole state. False asks for whole states (servers before patches ignore `delta`).
        public var statePatches = true

        /// The defaults: 60 s requests, 60 s stream silence, ``ReconnectPolicy`` (its defaults), header credentials.
        public init(
            urlSession: URLSession = Configuration.sharedURLSession, requestTimeout: Duration = .seconds(60),
            streamIdleTimeout: Duration = .seconds(60), reconnect: ReconnectPolicy = ReconnectPolicy(),
            eventLimits: ServerSentEventParser.Limits = .init(),
            streamCredentials: StreamCredentials = .authorizationHeader,
            clock: any Clock<Duration> = ContinuousClock()
        ) {
            self.urlSession = urlSession
            self.requestTimeout = requestTimeout
            self.streamIdleTimeout = streamIdleTimeout
            self.reconnect = reconnect
            self.eventLimits = eventLimits
            self.streamCredentials = streamCredentials
            self.clock = clock
        }

        /// One ephemeral session shared by every client that brings none.
        public static let sharedURLSession = URLSession(configuration: .ephemeral)

        /// The configuration of one stream's own `URLSession`.
        var streamSessionConfiguration: URLSessionConfiguration {
            let configuration = URLSessionConfiguration.ephemeral
            configuration.timeoutIntervalForRequest = streamIdleTimeout.timeInterval
            configuration.timeoutIntervalForResource = TimeInterval(Int32.max)
            configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
            return configuration
        }
    }

    /// Where a stream's credential goes.
    public enum StreamCredentials: Sendable, Hashable {
        /// `Authorization: Bearer <token>`.
        case authorizationHeader
        /// `?access_token=<token>` (what browsers' `EventSource` must use; a multiplexed stream in token mode
        /// always uses it, with one token per session).
        case accessTokenParameter
    }
}
