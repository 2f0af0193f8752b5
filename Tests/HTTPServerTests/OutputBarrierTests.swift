import HTTPServer
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A barrier whose watermark the test moves: positions up to `durable` are durable; the server's
/// wake-up requests are recorded and run when the test makes their positions durable. Made `losing`,
/// it may also lose positions (``lose(_:upTo:reason:)``), as a store shared by several processes does.
final class ManualBarrier: OutputBarrier {
    let losesPositions: Bool
    /// Positions lost, and why.
    let lost = Mutex<[UInt64: String]>([:])

    init(losing: Bool = false) { losesPositions = losing }

    func isLost(_ position: UInt64) -> Bool { lost.withLock { $0[position] != nil } }

    /// Loses `positions` and moves the watermark past them up to `upTo` (everything else there is durable).
    func lose(_ positions: [UInt64], upTo: UInt64, reason: String) {
        lost.withLock { for position in positions { $0[position] = reason } }
        makeDurable(upTo: upTo)
    }

    let appended = Atomic<UInt64>(0)
    let durable = Atomic<UInt64>(0)
    let asked = Atomic<Int>(0)
    /// The positions the server asked to be woken for, in order.
    let awaited = Recorder<UInt64>()
    private let waiters = Mutex<[(UInt64, @Sendable () -> Void)]>([])

    /// Why storing failed, once the test says it did.
    let failed = Mutex<String?>(nil)

    var position: UInt64 { appended.load(ordering: .acquiring) }

    func failure(_ position: UInt64) -> String? { lost.withLock { $0[position] } ?? failed.withLock { $0 } }

    /// Storing failed: every waiter is woken to ask ``failure(_:)``.
    func fail(_ reason: String) {
        failed.withLock { $0 = reason }
        let woken = waiters.withLock { waiters -> [@Sendable () -> Void] in
            defer { waiters.removeAll() }
            return waiters.map(\.1)
        }
        for wake in woken { wake() }
    }

    func isDurable(_ position: UInt64) -> Bool {
        asked.add(1, ordering: .relaxed)
        return durable.load(ordering: .acquiring) >= position
    }

    func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        let now = waiters.withLock { waiters -> Bool in
            guard durable.load(ordering: .acquiring) < position else { return true }
            waiters.append((position, wake))
            return false
        }
        awaited.record(position)
        if now { wake() }
    }

    /// Makes everything up to `position` durable and wakes who waits for it.
    func makeDurable(upTo position: UInt64) {
        durable.store(position, ordering: .releasing)
        let ready = waiters.withLock { waiters -> [@Sendable () -> Void] in
            let ready = waiters.filter { $0.0 <= position }.map(\.1)
            waiters.removeAll { $0.0 <= position }
            return ready
        }
        for wake in ready { wake() }
    }
}

/// Output waits for the barrier: an answer or event whose position is not durable stays in the server
/// (its loop goes on) until the barrier wakes the connection; answers keep their order; an answer
/// never made durable is never sent. Every server runs on an injected clock: a held answer's write
/// deadline must not pass while a busy test run keeps the test from its next step.
@Suite(.offThePool) struct OutputBarrierTests {
    /// Bytes the client's socket holds unread: what the server has written so far.
    static func unread(_ client: TestClient) -> Int32 {
        var count: Int32 = 0
        _ = ioctl(client.fd, UInt(FIONREAD), &count)
        return count
    }

    @Test func anAnswerWaitsUntilWhatItShowsIsDurable() async throws {
        let barrier = ManualBarrier()
        let responder = ClosureResponder { request, writer in
            // Each request "appends a record" before it answers, as an action does.
            let position = barrier.appended.add(1, ordering: .acquiringAndReleasing).newValue
            writer.respond(status: 202, body: Array("\(position)".utf8))
        }
        try await withHTTPServer(responder, clock: InjectedClock(), configure: { $0.outputBarrier = barrier }) {
            _, address in
            let client = try TestClient(address)
            try client.send("POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
            // The server parked the answer once it asked to be woken for position 1.
            _ = try await barrier.awaited.next("the server to wait for position 1") { $0 == 1 }
            #expect(Self.unread(client) == 0, "an answer left before what it shows was durable")
            // Another connection's answer shows position 2: it waits too, and the first is released alone.
            let other = try TestClient(address)
            try other.send("POST /b HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
            _ = try await barrier.awaited.next("the server to wait for position 2") { $0 == 2 }
            barrier.makeDurable(upTo: 1)
            let answer = try client.readResponse()
            #expect(answer.status == 202)
            #expect(answer.text == "1")
            #expect(Self.unread(other) == 0, "an answer left before what it shows was durable")
            barrier.makeDurable(upTo: 2)
            #expect(try other.readResponse().text == "2")
        }
    }

    @Test func answersLeaveInOrderEvenWhenALaterOneIsDurableFirst() async throws {
        let barrier = ManualBarrier()
        let answered = Recorder<String>()
        let responder = ClosureResponder { request, writer in
            // /held shows position 5; /free and passBarrier's /barrier show nothing stored.
            writer.respond(status: 200, body: Array(request.path.utf8), dependingOn: request.path == "/held" ? 5 : 0)
            answered.record(request.path)
        }
        // One loop: once another connection is answered, the turn that answered /free has flushed.
        try await withHTTPServer(
            responder, clock: InjectedClock(),
            configure: {
                $0.outputBarrier = barrier
                $0.loopCount = 1
            }
        ) { _, address in
            let client = try TestClient(address)
            try client.send("GET /held HTTP/1.1\r\nHost: a\r\n\r\nGET /free HTTP/1.1\r\nHost: a\r\n\r\n")
            _ = try await barrier.awaited.next("the server to wait for position 5") { $0 == 5 }
            // Pipelined: /free is answered and flushed, but it may not overtake /held.
            _ = try await answered.next("the second request to be answered") { $0 == "/free" }
            try passBarrier(address)
            #expect(Self.unread(client) == 0, "an answer overtook one held before it")
            barrier.makeDurable(upTo: 5)
            #expect(try client.readResponse().text == "/held")
            #expect(try client.readResponse().text == "/free")
        }
    }

    @Test func streamEventsLeaveAsTheirPositionsBecomeDurable() async throws {
        let barrier = ManualBarrier()
        let streams = Recorder<ServerSentEventStream>()
        let responder = ClosureResponder { _, writer in
            streams.record(writer.startEventStream { _ in })
        }
        try await withHTTPServer(responder, clock: InjectedClock(), configure: { $0.outputBarrier = barrier }) {
            _, address in
            let client = try TestClient(address)
            try client.openEventStream("/events")
            let stream = try await streams.next("the stream to open") { _ in true }
            // Two events, each after a record of its own: the first is durable, the second not yet.
            barrier.appended.store(1, ordering: .releasing)
            barrier.makeDurable(upTo: 1)
            _ = stream.send(ServerSentEvent(event: "state", id: "1", data: "{}"))
            #expect(try client.nextEvent().id == "1")
            barrier.appended.store(2, ordering: .releasing)
            _ = stream.send(ServerSentEvent(event: "state", id: "2", data: "{}"))
            _ = try await barrier.awaited.next("the server to wait for position 2") { $0 == 2 }
            #expect(Self.unread(client) == 0, "an event left before what it shows was durable")
            barrier.makeDurable(upTo: 2)
            #expect(try client.nextEvent().id == "2")
        }
    }

    @Test func aRefusableAnswerWhoseRecordsFailBecomesA503AndLaterAnswersAreNotSent() async throws {
        let barrier = ManualBarrier()
        let responder = ClosureResponder { request, writer in
            barrier.appended.store(request.path == "/first" ? 3 : 4, ordering: .releasing)
            writer.respond(status: 202, body: Array(request.path.utf8), refusedUnlessStored: true)
        }
        try await withHTTPServer(responder, clock: InjectedClock(), configure: { $0.outputBarrier = barrier }) {
            _, address in
            let client = try TestClient(address)
            // Pipelined: both answers are queued behind the first one's position.
            try client.send(
                "POST /first HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
                    + "POST /second HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
            )
            _ = try await barrier.awaited.next("the server to wait for position 3") { $0 == 3 }
            #expect(Self.unread(client) == 0)
            barrier.fail("disk full")
            let refusal = try client.readResponse()
            #expect(refusal.status == 503)
            #expect(refusal.text.contains("disk full"), "\(refusal.text)")
            #expect(refusal.header("Connection") == "close")
            // Neither acknowledgement ever leaves: the connection closes after the refusal.
            let rest = try client.readToEnd()
            #expect(rest.isEmpty, "more followed the refusal: \(String(decoding: rest, as: UTF8.self))")
        }
    }

    @Test func anAnswerNeverDurableIsNeverSentAndItsConnectionClosesAtTheWriteTimeout() async throws {
        let barrier = ManualBarrier()
        let clock = InjectedClock()
        let responder = ClosureResponder { request, writer in
            // passBarrier's request shows nothing stored.
            guard request.path != "/barrier" else { return writer.respond(status: 200, dependingOn: 0) }
            barrier.appended.store(9, ordering: .releasing)
            writer.respond(status: 202, body: Array("accepted".utf8))
        }
        try await withHTTPServer(
            responder, clock: clock,
            configure: {
                $0.outputBarrier = barrier
                $0.writeTimeout = .seconds(30)
                $0.idleTimeout = .seconds(3600)
            }
        ) { _, address in
            let client = try TestClient(address)
            try client.send("POST /a HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
            _ = try await barrier.awaited.next("the server to wait for position 9") { $0 == 9 }
            await clock.advance(by: .seconds(29))
            try passBarrier(address)
            #expect(Self.unread(client) == 0)
            await clock.advance(by: .seconds(2))
            // Closed with nothing written: the 202 never leaves.
            let rest = try client.readToEnd()
            #expect(rest.isEmpty, "the held answer was sent: \(rest)")
            barrier.makeDurable(upTo: 9)
        }
    }
}

/// A barrier that retries a failed write inside `isDurable`, under its lock, and wakes what waits from
/// there (as the file journal does): a woken connection must not ask it again before the lock is free.
final class RetryingBarrier: OutputBarrier {
    struct State {
        var appended: UInt64 = 0
        var durable: UInt64 = 0
        /// How far the next retry gets.
        var writable: UInt64 = 0
        var waiters: [(position: UInt64, wake: @Sendable () -> Void)] = []
    }

    let state = Mutex(State())
    let awaited = Recorder<UInt64>()

    var position: UInt64 { state.withLock { $0.appended } }

    /// Appends one record; returns its position.
    func append() -> UInt64 {
        state.withLock { state in
            state.appended += 1
            return state.appended
        }
    }

    func isDurable(_ position: UInt64) -> Bool {
        state.withLock { state in
            if state.durable < state.writable {
                state.durable = state.writable
                let durable = state.durable
                for waiter in state.waiters where waiter.position <= durable { waiter.wake() }
                state.waiters.removeAll { $0.position <= durable }
            }
            return position <= state.durable
        }
    }

    func whenDurable(_ position: UInt64, _ wake: @escaping @Sendable () -> Void) {
        let now = state.withLock { state -> Bool in
            if position <= state.durable { return true }
            state.waiters.append((position, wake))
            return false
        }
        awaited.record(position)
        if now { wake() }
    }

    /// Lets the next retry write everything up to `position`.
    func allowWrites(upTo position: UInt64) {
        state.withLock { $0.writable = position }
    }
}

extension OutputBarrierTests {
    @Test func aConnectionWokenFromInsideTheBarrierAsksItAgainOnlyLater() async throws {
        let barrier = RetryingBarrier()
        let answered = Recorder<String>()
        let responder = ClosureResponder { request, writer in
            let position = barrier.append()
            writer.respond(status: 202, body: Array("\(position)".utf8))
            answered.record(request.path)
        }
        // One loop: the connection that retries the write and the one it wakes share it.
        try await withHTTPServer(
            responder, clock: InjectedClock(),
            configure: {
                $0.outputBarrier = barrier
                $0.loopCount = 1
            }
        ) { _, address in
            let first = try TestClient(address)
            try first.send(
                "POST /1 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
                    + "POST /2 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n"
            )
            _ = try await answered.next("both pipelined requests to be answered") { $0 == "/2" }
            _ = try await barrier.awaited.next("the server to wait for position 1") { $0 == 1 }
            // The next retry stores record 1 only; a request on another connection makes the loop
            // ask, and the retry wakes the first connection from under the barrier's lock.
            barrier.allowWrites(upTo: 1)
            let second = try TestClient(address)
            try second.send("POST /3 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
            #expect(try first.readResponse().text == "1")
            _ = try await barrier.awaited.next("the server to wait for position 3") { $0 == 3 }
            barrier.allowWrites(upTo: 3)
            // A retry from outside the loop releases the rest.
            _ = barrier.isDurable(0)
            #expect(try first.readResponse().text == "2")
            #expect(try second.readResponse().text == "3")
        }
    }
}
