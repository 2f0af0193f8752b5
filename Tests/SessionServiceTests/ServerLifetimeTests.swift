import Examples
import Foundation
import HTTPServer
import ReactorServerTesting
import Testing

@testable import SessionService

/// What the server no longer needs is freed: a subscriber that left, with its stream and connection.
/// (It was kept for good by a reference cycle, found by LeakSanitizer in `.ci/sanitizers address`:
/// memory that grew with every event stream.)
@Suite struct ServerLifetimeTests {
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
            return (Weak(try #require(subscriber)), Weak(subscriber?.stream))
        }()
        // The client has closed its connection: the session takes the subscriber out, and nothing else
        // may hold it or its stream.
        try await eventually("the session to have no subscriber") { server.server.service.store.session(id)?.subscriberCount == 0 }
        try await eventually("the subscriber and its stream to be freed") { subscriber.value == nil && stream.value == nil }
    }
}
