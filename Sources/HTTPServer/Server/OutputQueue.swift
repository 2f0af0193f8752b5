import CLinux
#if canImport(Glibc)
import Glibc
#endif

/// Bytes waiting to be written to one socket, as a list of shared chunks (an event encoded once
/// for many streams is queued by reference, not copied). Written with one `writev` per call.
struct OutputQueue {
    private var chunks: [[UInt8]] = []
    /// Bytes of `chunks[0]` already written.
    private var offset = 0
    /// Most chunks per `writev` (well under `IOV_MAX`).
    static let maxChunksPerWrite = 64

    var isEmpty: Bool { chunks.isEmpty }

    mutating func append(_ bytes: [UInt8]) {
        if !bytes.isEmpty { chunks.append(bytes) }
    }

    mutating func append(contentsOf more: [[UInt8]]) {
        for bytes in more where !bytes.isEmpty { chunks.append(bytes) }
    }

    /// Drops everything; `release` also gives the storage back (idle streams should hold nothing).
    mutating func removeAll(release: Bool) {
        chunks.removeAll(keepingCapacity: !release)
        offset = 0
    }

    /// Writes as much as the socket takes in one `writev`; returns the bytes written.
    mutating func write(to fd: Int32) throws(IOError) -> IOResult<Int> {
        let count = min(chunks.count, Self.maxChunksPerWrite)
        let result: IOResult<Int> = try withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) { iov throws(IOError) in
            try gather(0, count, iov, fd)
        }
        if case .processed(var written) = result {
            while written > 0 {
                let left = chunks[0].count - offset
                if written >= left {
                    written -= left
                    chunks.removeFirst()
                    offset = 0
                } else {
                    offset += written
                    written = 0
                }
            }
        }
        return result
    }

    /// Pins chunk `index` and the ones after it, then writes them all.
    private func gather(_ index: Int, _ count: Int, _ iov: UnsafeMutableBufferPointer<iovec>, _ fd: Int32) throws(IOError) -> IOResult<Int> {
        if index == count {
            return try Posix.writev(fd, iov.baseAddress!, Int32(count))
        }
        let skip = index == 0 ? offset : 0
        return try chunks[index].withUnsafeBufferPointer { bytes throws(IOError) in
            iov[index] = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + skip), iov_len: bytes.count - skip)
            return try gather(index + 1, count, iov, fd)
        }
    }
}
