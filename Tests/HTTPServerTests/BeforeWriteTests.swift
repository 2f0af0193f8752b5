import HTTPServer
import ReactorServerTesting
import Synchronization
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The `beforeWrite` hook runs before every socket write, including the writes EPOLLOUT resumes.
@Suite struct BeforeWriteTests {
    @Test func callsBeforeWriteBeforeWritesResumedByEPOLLOUT() async throws {
        // Far more than the loopback socket buffers hold, so most of it waits for EPOLLOUT.
        let body = [UInt8](repeating: UInt8(ascii: "x"), count: 32 << 20)
        let responder = ClosureResponder { _, writer in
            writer.respond(status: 200, headers: ["Content-Type": "application/octet-stream"], body: body)
        }
        let calls = Atomic<Int>(0)
        try await withHTTPServer(responder, configure: { configuration in
            configuration.loopCount = 1
            configuration.beforeWrite = { _ in calls.add(1, ordering: .relaxed) }
        }) { _, address in
            let client = try TestClient(address)
            try client.send("GET /big HTTP/1.1\r\nHost: a\r\n\r\n")
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            func receive() throws -> Int {
                let count = chunk.withUnsafeMutableBytes { recv(client.fd, $0.baseAddress, $0.count, 0) }
                guard count > 0 else { throw TestFailure("recv: \(count), errno \(errno)") }
                return count
            }
            // Bytes arrived: the first write happened; the rest waits for this client to read.
            var received = try receive()
            // Wait until the socket buffers are full, so the server's writes have stopped on EAGAIN
            // and only EPOLLOUT can resume them: the bytes queued for this client stop growing.
            var queued: Int32 = -1
            var steady = 0
            let started = ContinuousClock.now
            while steady < 10_000 {
                guard ContinuousClock.now - started < defaultBound else {
                    throw TestFailure("the bytes queued for the client kept changing for \(defaultBound); the server never stopped on a full socket")
                }
                var now: Int32 = 0
                _ = ioctl(client.fd, UInt(FIONREAD), &now)
                steady = now == queued ? steady + 1 : 0
                queued = now
                sched_yield()
            }
            let beforeResume = calls.load(ordering: .relaxed)
            #expect(beforeResume >= 1)
            while received < body.count { received += try receive() }
            #expect(calls.load(ordering: .relaxed) > beforeResume, "writes resumed by EPOLLOUT ran without the hook")
        }
    }
}
