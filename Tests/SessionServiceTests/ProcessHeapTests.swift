import ReactorServerTesting
import Testing

@testable import SessionService

/// The allocator's heap figures `/metrics` shows: they count what live allocations hold (a large block
/// mapped on its own included) and give it back when it is freed.
@Suite(.offThePool, .serialized) struct ProcessHeapTests {
    @Test func inUseFollowsALargeAllocationAndItsRelease() {
        let before = ProcessHeap.current()
        let size = 64 << 20
        let block = UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16)
        block.initializeMemory(as: UInt8.self, repeating: 1, count: size)
        let during = ProcessHeap.current()
        block.deallocate()
        let after = ProcessHeap.current()
        // Other tests allocate meanwhile: a margin of 16 MiB either way, far below the 64 MiB block.
        #expect(during.inUse >= before.inUse + UInt64(size) - (16 << 20), "in use \(before.inUse) → \(during.inUse) with 64 MiB allocated")
        #expect(after.inUse + UInt64(size) - (16 << 20) <= during.inUse, "in use \(during.inUse) → \(after.inUse) with 64 MiB freed")
    }

    @Test func metricsShowTheHeap() throws {
        let server = try TestServer()
        let text = try server.request("GET", "/metrics").text
        let inUse = text.split(separator: "\n").first { $0.hasPrefix(#"reactor_process_heap_bytes{state="in_use"} "#) }
        #expect(inUse.flatMap { Int($0.split(separator: " ").last ?? "") }.map { $0 > 0 } == true, "\(inUse ?? "no heap line")")
        #expect(text.contains(#"reactor_process_heap_bytes{state="free"} "#))
    }

    /// A scrape leaves nothing behind in a server with storage (the backend adds its own families):
    /// the stored renderer was wrapped anew at every scrape, 96 B and a deeper call each time.
    @Test func scrapingMetricsLeavesTheHeapAsItWas() async throws {
        try await withTemporaryDirectory("metrics-scrapes") { directory in
            let server = try await ServerProcess.start(arguments: ["--data-dir", directory])
            let client = try server.client()
            func inUse() throws -> Int {
                let line = try client.request("GET", "/metrics").text.split(separator: "\n").first { $0.hasPrefix(#"reactor_process_heap_bytes{state="in_use"} "#) }
                return try #require(line.flatMap { Int($0.split(separator: " ").last ?? "") })
            }
            for _ in 0..<500 { _ = try inUse() }
            let before = try inUse()
            let scrapes = 5_000
            for _ in 0..<scrapes { _ = try inUse() }
            let growth = try inUse() - before
            // 96 B a scrape was 480 KB here; what the allocator's own caches move is far less.
            #expect(growth < 100_000, "the heap grew by \(growth) B over \(scrapes) scrapes")
            #expect(try await server.stop() == .exited(0))
        }
    }

    /// A server gives the memory of large request bodies back once they are done with: they are mapped
    /// on their own and unmapped, instead of raising glibc's threshold after the first one and leaving
    /// the arenas holding the rest, free but resident.
    @Test func largeBodiesLeaveNoFreeMemoryBehindInTheServer() async throws {
        try await withTemporaryDirectory("heap-large-bodies") { directory in
            let server = try await ServerProcess.start(arguments: ["--data-dir", directory])
            let client = try server.client()
            func heap() throws -> (inUse: Int, free: Int) {
                let lines = try client.request("GET", "/metrics").text.split(separator: "\n")
                func value(_ state: String) -> Int? {
                    lines.first { $0.hasPrefix("reactor_process_heap_bytes{state=\"\(state)\"} ") }.flatMap { Int($0.split(separator: " ").last ?? "") }
                }
                return (try #require(value("in_use")), try #require(value("free")))
            }
            #expect(try client.request("POST", "/sessions", body: #"{"reactor":"todo","id":"big"}"#).status == 201)
            let before = try heap()
            // Bodies of 600-900 KB, each refused once decoded (the state would pass its limit): every
            // one is read, parsed and dropped.
            for index in 0..<12 {
                let title = String(repeating: "x", count: 600_000 + index * 25_000)
                let status = try client.request("POST", "/sessions/big/actions?wait=true", body: #"{"type":"add","title":"\#(title)"}"#).status
                #expect(status == 200 || status == 422, "\(status)")
            }
            let after = try heap()
            // Several of these bodies' worth (megabytes) stays free in the arenas without the fixed threshold.
            #expect(after.free - before.free < 1_000_000, "free in the arenas: \(before.free) → \(after.free) B (in use \(before.inUse) → \(after.inUse))")
            #expect(try await server.stop() == .exited(0))
        }
    }
}
