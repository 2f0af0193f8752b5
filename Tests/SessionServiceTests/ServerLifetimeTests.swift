import Examples
import Foundation
import HTTPServer
import ReactorServerTesting
import Testing

@testable import SessionService

/// What the server no longer needs is freed: a subscriber that left, with its stream and connection, and
/// a stopped server with everything it built. (Both were kept for good by reference cycles, found by
/// LeakSanitizer in `.ci/sanitizers address`: memory that grew with every event stream, and every
/// server an app or a test suite started.)
@Suite(.offThePool) struct ServerLifetimeTests {
    final class Weak<T: AnyObject>: @unchecked Sendable {
        weak var value: T?
        init(_ value: T?) { self.value = value }
    }

    @Test func aSubscriberThatLeftIsFreedWithItsStream() async throws {
        let server = try TestServer()
        let id = try server.createSession("counter")
        let (subscriber, stream): (Weak<Subscriber>, Weak<ServerSentEventStream>) = try {
            let client = try server.subscribe("/sessions/\(id)/events")
            #expect(try client.nextEvent().id == "0")
            let session = try #require(server.server.service.store.session(id) as? Session<CounterReactor>)
            let subscriber = session.shared.withLock { $0.subscribers.all.first }
            let found: Subscriber = try #require(subscriber)
            return (Weak(found), Weak(found.sink as? ServerSentEventStream))
        }()
        // The client has closed its connection: the session takes the subscriber out, and nothing else
        // may hold it or its stream.
        try await eventually("the session to have no subscriber") {
            server.server.service.store.session(id)?.subscriberCount == 0
        }
        try await eventually("the subscriber and its stream to be freed") {
            subscriber.value == nil && stream.value == nil
        }
    }

    /// Starts a test server (its clock does not advance by itself, so the HTTP server registers its
    /// loops with it), acts and subscribes, stops it; returns weak references to what it built.
    static func useAndStop(dataDirectory: String?) throws -> (
        server: Weak<ReactorServer>, service: Weak<ReactorService>, store: Weak<SessionStore>
    ) {
        let test = try TestServer(dataDirectory: dataDirectory)
        let id = try test.createSession("counter")
        #expect(
            try test.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"increase"}"#).status == 200)
        let stream = try test.subscribe("/sessions/\(id)/events")
        #expect(try stream.nextEvent().id == "1")
        let references = (Weak(test.server), Weak(test.server.service), Weak(test.server.service.store))
        test.stop()
        return references
    }

    @Test(arguments: [false, true]) func aStoppedServerIsFreed(persisted: Bool) async throws {
        try await withTemporaryDirectory("lifetime") { directory in
            let (server, service, store) = try Self.useAndStop(dataDirectory: persisted ? directory : nil)
            try await eventually("the stopped server, its service and its session store to be freed") {
                server.value == nil && service.value == nil && store.value == nil
            }
        }
    }
}
