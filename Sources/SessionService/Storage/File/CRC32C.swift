import CLinux

/// CRC-32C (Castagnoli), the checksum on every journal record: the SSE 4.2 instruction through the C
/// shim where the CPU has it (about 10× fewer instructions per record), else slicing-by-8 tables.
enum CRC32C {
    /// Whether the hardware instruction is used.
    static let hardware = CLinux_crc32c_hardware() != 0

    static let tables: [[UInt32]] = {
        var tables = [[UInt32]](repeating: [UInt32](repeating: 0, count: 256), count: 8)
        for byte in 0..<256 {
            var crc = UInt32(byte)
            for _ in 0..<8 { crc = crc & 1 == 1 ? (crc >> 1) ^ 0x82F6_3B78 : crc >> 1 }
            tables[0][byte] = crc
        }
        for byte in 0..<256 {
            var crc = tables[0][byte]
            for table in 1..<8 {
                crc = tables[0][Int(crc & 0xFF)] ^ (crc >> 8)
                tables[table][byte] = crc
            }
        }
        return tables
    }()

    /// The checksum of `bytes`.
    static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard hardware, let base = bytes.baseAddress else { return tableChecksum(bytes) }
        return CLinux_crc32c_update(0xFFFF_FFFF, base.assumingMemoryBound(to: UInt8.self), bytes.count) ^ 0xFFFF_FFFF
    }

    /// The checksum computed with the tables (CPUs without the instruction; tests compare both).
    static func tableChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        let count = bytes.count
        var index = 0
        tables.withUnsafeBufferPointer { all in
            let t0 = all[0]
            let t1 = all[1]
            let t2 = all[2]
            let t3 = all[3]
            let t4 = all[4]
            let t5 = all[5]
            let t6 = all[6]
            let t7 = all[7]
            while index + 8 <= count {
                let low =
                    crc
                    ^ (UInt32(bytes[index]) | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2]) << 16 | UInt32(
                        bytes[index + 3]) << 24)
                crc =
                    t7[Int(low & 0xFF)] ^ t6[Int((low >> 8) & 0xFF)] ^ t5[Int((low >> 16) & 0xFF)] ^ t4[Int(low >> 24)]
                    ^ t3[Int(bytes[index + 4])] ^ t2[Int(bytes[index + 5])] ^ t1[Int(bytes[index + 6])]
                    ^ t0[Int(bytes[index + 7])]
                index += 8
            }
            while index < count {
                crc = t0[Int((crc ^ UInt32(bytes[index])) & 0xFF)] ^ (crc >> 8)
                index += 1
            }
        }
        return crc ^ 0xFFFF_FFFF
    }

    static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }
}
