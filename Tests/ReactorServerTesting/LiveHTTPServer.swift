import HTTPServer
import Logs

/// A responder built from a closure, for tests of the HTTP layer and for fake upstreams.
///
/// ```swift
/// let app = ClosureResponder { request, writer in writer.respond(status: 200, body: Array(request.path.utf8)) }
/// ```
public struct ClosureResponder: HTTPResponder {
    private let handler: @Sendable (HTTPRequest, HTTPResponseWriter) -> Void

    /// A responder calling `handler` for every request.
    public init(_ handler: @escaping @Sendable (HTTPRequest, HTTPResponseWriter) -> Void) { self.handler = handler }

    /// Hands the request to the closure.
    public func respond(to request: consuming HTTPRequest, writer: HTTPResponseWriter) { handler(request, writer) }
}

/// Runs `body` with an `HTTPServer` serving `responder` live on 127.0.0.1:0 (two loops unless
/// `configure` says otherwise), then shuts it down and waits, bounded, until it has stopped. With a
/// manual `clock` (an ``InjectedClock``) every timeout waits for the test to advance it.
///
/// ```swift
/// try await withHTTPServer(ClosureResponder { _, writer in writer.respond(status: 204) }) { server, address in
///     let client = try TestClient(address)
///     try client.send("GET / HTTP/1.1\r\nHost: a\r\n\r\n")
///     #expect(try client.readResponse().status == 204)
/// }
/// ```
public func withHTTPServer<R>(
    _ responder: some HTTPResponder,
    clock: some ServerClock = MonotonicClock(),
    logger: Logger = .disabled,
    configure: (inout HTTPServer.Configuration) -> Void = { _ in },
    _ body: (HTTPServer, SocketAddress) async throws -> R
) async throws -> R {
    var configuration = HTTPServer.Configuration()
    configuration.port = 0
    configuration.loopCount = 2
    // On a loaded machine a real-clock test may not run for a minute (its pool threads busy): it could
    // see a keep-alive comment where it expects an event, or a request it holds to answer itself could
    // get the response timeout's 503 first. A manual clock fires either only when the test advances it.
    if clock.advancesByItself {
        configuration.eventStreamKeepAliveInterval = .seconds(3600)
        configuration.responseTimeout = .seconds(3600)
    }
    configure(&configuration)
    let server = HTTPServer(configuration: configuration, responder: responder, clock: clock, logger: logger)
    let address = try server.start()
    do {
        let result = try await body(server, address)
        try await stop(server)
        return result
    } catch {
        try? await stop(server)
        throw error
    }
}

/// Shuts `server` down and waits until it has stopped, failing after `bound`.
public func stop(_ server: HTTPServer, within bound: Duration = defaultBound) async throws {
    server.shutdown()
    try await waitFor("the HTTP server to stop after shutdown()", within: bound) {
        try await offPool { server.waitUntilStopped() }
    }
}
