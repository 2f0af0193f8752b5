import Testing

@testable import SessionService

/// The journal's checksum: the standard check value, and the hardware path equal to the tables.
@Suite struct CRC32CTests {
    @Test func matchesTheStandardCheckValue() {
        let check = Array("123456789".utf8)
        #expect(CRC32C.checksum(check) == 0xE306_9283)
        #expect(check.withUnsafeBytes { CRC32C.tableChecksum($0) } == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
    }

    @Test func hardwareAndTablesAgreeOnEveryLengthAndAlignment() {
        #if arch(x86_64)
            // Every x86-64 CPU since 2008 has SSE 4.2; without it this test would compare the tables with themselves.
            #expect(CRC32C.hardware)
        #endif
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<300).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes.withUnsafeBytes { all in
            for start in 0..<9 {
                for end in start...all.count {
                    let slice = UnsafeRawBufferPointer(rebasing: all[start..<end])
                    #expect(CRC32C.checksum(slice) == CRC32C.tableChecksum(slice), "bytes \(start)..<\(end)")
                }
            }
        }
    }
}
