import HTTPServer
import ReactorServerTesting
import Testing

/// A barrier that may lose positions (records that can never be stored: their session was taken over
/// by another process): output that names a lost position is never written, whatever the watermark
/// passed, while output depending on other positions, or on everything appended, goes on.
@Suite(.offThePool) struct OutputBarrierLossTests {
    /// Answers `/p<N>` with its path, showing position N (a session's own records); `/all` with what
    /// depends on everything appended; `/ack<N>` as an acknowledgement of position N (refusable).
    static func responder(_ barrier: ManualBarrier) -> ClosureResponder {
        ClosureResponder { request, writer in
            let path = request.path
            if path == "/all" {
                writer.respond(status: 200, body: Array(path.utf8))
            } else if path.hasPrefix("/ack"), let position = UInt64(path.dropFirst(4)) {
                writer.respond(status: 202, body: Array(path.utf8), dependingOn: position, refusedUnlessStored: true)
            } else if path.hasPrefix("/p"), let position = UInt64(path.dropFirst(2)) {
                writer.respond(status: 200, body: Array(path.utf8), dependingOn: position)
            } else {
                writer.respond(status: 200, body: [], dependingOn: 0)
            }
        }
    }

    @Test func anAnswerShowingALostPositionBecomesA503AndOthersGoOn() async throws {
        let barrier = ManualBarrier(losing: true)
        barrier.appended.store(5, ordering: .releasing)
        try await withHTTPServer(
            Self.responder(barrier), clock: InjectedClock(), configure: { $0.outputBarrier = barrier }
        ) { _, address in
            let lost = try TestClient(address)
            try lost.send("GET /p3 HTTP/1.1\r\nHost: a\r\n\r\n")
            let acknowledged = try TestClient(address)
            try acknowledged.send("POST /ack3 HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n")
            let other = try TestClient(address)
            try other.send("GET /p4 HTTP/1.1\r\nHost: a\r\n\r\n")
            let everything = try TestClient(address)
            try everything.send("GET /all HTTP/1.1\r\nHost: a\r\n\r\n")
            _ = try await barrier.awaited.next("the server to wait for position 5") { $0 == 5 }
            #expect(OutputBarrierTests.unread(lost) == 0)
            // Position 3's records can never be stored; the watermark passes it, and 4 and 5 are durable.
            barrier.lose([3], upTo: 5, reason: "session s was taken over by instance b")
            #expect(try other.readResponse().text == "/p4")
            #expect(
                try everything.readResponse().text == "/all",
                "output depending on everything appended waits for the watermark only")
            for client in [lost, acknowledged] {
                let refusal = try client.readResponse()
                #expect(refusal.status == 503)
                #expect(refusal.text.contains("taken over by instance b"), "\(refusal.text)")
                #expect(refusal.header("Connection") == "close")
                #expect(try client.readToEnd().isEmpty)
            }
        }
    }

    @Test func aConnectionThatSawALaterPositionDurableStillRefusesALostEarlierOne() async throws {
        let barrier = ManualBarrier(losing: true)
        barrier.appended.store(9, ordering: .releasing)
        try await withHTTPServer(
            Self.responder(barrier), clock: InjectedClock(),
            configure: {
                $0.outputBarrier = barrier
                $0.loopCount = 1
            }
        ) { _, address in
            barrier.lose([3], upTo: 9, reason: "taken over")
            let client = try TestClient(address)
            // The first answer shows 9, durable: the connection remembers it. The second shows 3, below
            // it, but lost: it must not leave on that memory.
            try client.send("GET /p9 HTTP/1.1\r\nHost: a\r\n\r\nGET /p3 HTTP/1.1\r\nHost: a\r\n\r\n")
            #expect(try client.readResponse().text == "/p9")
            let refusal = try client.readResponse()
            #expect(refusal.status == 503)
            #expect(!refusal.text.contains("/p3"))
        }
    }

    @Test func aLaterPositionDurableDoesNotReleaseAnEarlierOneQueuedBehindIt() async throws {
        let barrier = ManualBarrier(losing: true)
        barrier.appended.store(9, ordering: .releasing)
        try await withHTTPServer(
            Self.responder(barrier), clock: InjectedClock(),
            configure: {
                $0.outputBarrier = barrier
                $0.loopCount = 1
            }
        ) { _, address in
            let client = try TestClient(address)
            // Pipelined: 8 is held, then 3 (another session's) is queued behind it. With a barrier that
            // never loses, 3 would wait for 8 and go with it; here 3 is lost meanwhile.
            try client.send("GET /p8 HTTP/1.1\r\nHost: a\r\n\r\nGET /p3 HTTP/1.1\r\nHost: a\r\n\r\n")
            _ = try await barrier.awaited.next("the server to wait for position 8") { $0 == 8 }
            try passBarrier(address)
            barrier.lose([3], upTo: 9, reason: "taken over")
            #expect(try client.readResponse().text == "/p8")
            #expect(try client.readResponse().status == 503)
        }
    }

    @Test func aStreamEventShowingALostPositionIsNeverSentAndItsStreamCloses() async throws {
        let barrier = ManualBarrier(losing: true)
        let streams = Recorder<ServerSentEventStream>()
        let responder = ClosureResponder { _, writer in
            streams.record(writer.startEventStream { _ in })
        }
        try await withHTTPServer(responder, clock: InjectedClock(), configure: { $0.outputBarrier = barrier }) {
            _, address in
            let moved = try TestClient(address)
            try moved.openEventStream("/events")
            let movedStream = try await streams.next("the first stream to open") { _ in true }
            let staying = try TestClient(address)
            try staying.openEventStream("/events")
            let stayingStream = try await streams.next("the second stream to open") { $0 !== movedStream }
            barrier.appended.store(8, ordering: .releasing)
            barrier.makeDurable(upTo: 6)
            _ = movedStream.send(
                EncodedServerSentEvent(ServerSentEvent(event: "state", id: "1", data: "{}"), position: 6))
            #expect(try moved.nextEvent().id == "1")
            // The moved session's next state shows position 7; the other stream's shows 8.
            _ = movedStream.send(
                EncodedServerSentEvent(ServerSentEvent(event: "state", id: "2", data: "{}"), position: 7))
            _ = stayingStream.send(
                EncodedServerSentEvent(ServerSentEvent(event: "state", id: "5", data: "{}"), position: 8))
            _ = try await barrier.awaited.next("the server to wait for position 7") { $0 == 7 }
            barrier.lose([7], upTo: 8, reason: "taken over")
            #expect(try staying.nextEvent().id == "5")
            let rest = try moved.readToEnd()
            #expect(
                !String(decoding: rest, as: UTF8.self).contains("id: 2"), "an event showing a lost position was sent")
        }
    }
}
