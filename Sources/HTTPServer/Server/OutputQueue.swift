import CLinux
import Posix

#if canImport(Glibc)
    import Glibc
#endif

/// Bytes waiting to be written to one socket, as a list of shared chunks (an event encoded once
/// for many streams is queued by reference, not copied). Written with one `send` for one chunk,
/// one `writev` for several.
struct OutputQueue {
    /// The chunk being written; kept outside `rest` so one chunk (the usual case) needs no array.
    /// Once written, a chunk this queue encoded itself stays here emptied, its storage reused by the
    /// next answer (an allocation and a free per response fewer).
    private var first: [UInt8] = []
    /// `first` is a buffer `appendEncoded` filled: no one else holds it, so it may be emptied in place.
    private var firstIsOwned = false
    private var rest: [[UInt8]] = []
    /// Bytes of `first` already written.
    private var offset = 0
    /// Bytes queued and not yet written.
    private(set) var byteCount = 0
    /// Most chunks per `writev` (well under `IOV_MAX`).
    static let maxChunksPerWrite = 64
    /// The largest buffer kept for the next answer once written (a larger one is given back).
    static let keptCapacity = 1024

    var isEmpty: Bool { first.isEmpty }

    mutating func append(_ bytes: [UInt8]) {
        if bytes.isEmpty { return }
        byteCount += bytes.count
        if first.isEmpty {
            first = bytes
            firstIsOwned = false
        } else {
            rest.append(bytes)
        }
    }

    /// Queues what `encode` appends to an empty buffer: the kept one when nothing is queued, so the
    /// usual answer is written where the previous one was. Returns the bytes queued.
    mutating func appendEncoded(_ encode: (inout [UInt8]) -> Void) -> Int {
        guard first.isEmpty else {
            var bytes: [UInt8] = []
            encode(&bytes)
            append(bytes)
            return bytes.count
        }
        if !firstIsOwned { first = [] }
        encode(&first)
        firstIsOwned = true
        offset = 0
        byteCount += first.count
        return first.count
    }

    /// Queues what is left of `bytes` after a partial write of its first `written` bytes.
    mutating func append(_ bytes: [UInt8], skipping written: Int) {
        guard written > 0, first.isEmpty else { return append(bytes) }
        first = bytes
        firstIsOwned = false
        offset = written
        byteCount = bytes.count - written
    }

    /// Drops the last `count` unwritten bytes (output that must not leave after all).
    mutating func removeLast(_ count: Int) {
        var left = min(count, byteCount)
        byteCount -= left
        while left > 0, let last = rest.last {
            guard last.count > left else {
                rest.removeLast()
                left -= last.count
                continue
            }
            rest[rest.count - 1].removeLast(left)
            return
        }
        guard left > 0 else { return }
        if first.count - offset > left {
            first.removeLast(left)
        } else {
            first = []
            firstIsOwned = false
            offset = 0
        }
    }

    /// Drops everything; `release` also gives the storage back (idle streams should hold nothing).
    mutating func removeAll(release: Bool) {
        if release || !firstIsOwned {
            first = []
            firstIsOwned = false
        } else {
            first.removeAll(keepingCapacity: true)
        }
        rest.removeAll(keepingCapacity: !release)
        offset = 0
        byteCount = 0
    }

    /// Writes as much as the socket takes in one call, at most `limit` bytes (the rest is held back);
    /// returns the bytes written.
    mutating func write(to fd: Int32, atMost limit: Int = .max) throws(IOError) -> IOResult<Int> {
        let result: IOResult<Int>
        if rest.isEmpty || first.count - offset >= limit {
            let skip = offset
            let end = limit >= first.count - skip ? first.count : skip + limit
            let sent = first.withUnsafeBytes { bytes in
                Result { () throws(IOError) in try Posix.send(fd, UnsafeRawBufferPointer(rebasing: bytes[skip..<end])) }
            }
            result = try sent.get()
        } else {
            let count = min(rest.count + 1, Self.maxChunksPerWrite)
            result = try withUnsafeTemporaryAllocation(of: iovec.self, capacity: count) { iov throws(IOError) in
                try gather(0, count, iov, fd, limit)
            }
        }
        if case .processed(var written) = result {
            byteCount -= written
            while written > 0 {
                let left = first.count - offset
                if written < left {
                    offset += written
                    break
                }
                written -= left
                offset = 0
                if rest.isEmpty {
                    // Emptied in place when this queue owns it (unique: no copy), for the next answer.
                    if firstIsOwned, first.capacity <= Self.keptCapacity {
                        first.removeAll(keepingCapacity: true)
                    } else {
                        first = []
                        firstIsOwned = false
                    }
                } else {
                    first = rest.removeFirst()
                    firstIsOwned = false
                }
            }
        }
        return result
    }

    /// Pins chunk `index` (0 is `first`) and the ones after it, then writes them all, `limit` bytes
    /// at most (the chunk that reaches it is the last, cut there).
    private func gather(_ index: Int, _ count: Int, _ iov: UnsafeMutableBufferPointer<iovec>, _ fd: Int32, _ limit: Int)
        throws(IOError) -> IOResult<Int>
    {
        if index == count || limit == 0 {
            return try Posix.writev(fd, iov.baseAddress!, Int32(index))
        }
        let skip = index == 0 ? offset : 0
        return try (index == 0 ? first : rest[index - 1]).withUnsafeBufferPointer { bytes throws(IOError) in
            let length = min(bytes.count - skip, limit)
            iov[index] = iovec(iov_base: UnsafeMutableRawPointer(mutating: bytes.baseAddress! + skip), iov_len: length)
            return try gather(index + 1, count, iov, fd, limit - length)
        }
    }
}
