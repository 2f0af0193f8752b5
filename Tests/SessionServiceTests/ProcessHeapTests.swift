import ReactorServerTesting
import Testing

@testable import SessionService

/// The allocator's heap figures `/metrics` shows: they count what live allocations hold (a large block
/// mapped on its own included) and give it back when it is freed.
@Suite struct ProcessHeapTests {
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
}
