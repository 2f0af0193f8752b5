/// Bytes read from the socket and not yet consumed by the parser, kept at the front so the
/// parser's ranges stay valid. Grows when one operation is larger than what it holds.
final class ReadBuffer {
    private var storage: UnsafeMutableRawBufferPointer
    private var start = 0
    private var end = 0

    init(capacity: Int = 64 * 1024) {
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { storage.deallocate() }

    /// The unconsumed bytes.
    var unread: UnsafeBufferPointer<UInt8> {
        UnsafeBufferPointer(start: storage.baseAddress!.assumingMemoryBound(to: UInt8.self) + start, count: end - start)
    }

    /// Drops `count` bytes from the front.
    func consume(_ count: Int) {
        start += count
        if start == end {
            start = 0
            end = 0
        }
    }

    /// Free space after the unread bytes, at least `minimum` bytes: moves the unread bytes to the
    /// front, or grows, first.
    func freeSpace(minimum: Int = 16 * 1024) -> UnsafeMutableRawBufferPointer {
        if storage.count - end < minimum {
            if start > 0 {
                let count = end - start
                storage.baseAddress!.copyMemory(from: storage.baseAddress! + start, byteCount: count)
                start = 0
                end = count
            }
            if storage.count - end < minimum {
                let grown = UnsafeMutableRawBufferPointer.allocate(
                    byteCount: max(storage.count * 2, end + minimum), alignment: 16)
                grown.baseAddress!.copyMemory(from: storage.baseAddress!, byteCount: end)
                storage.deallocate()
                storage = grown
            }
        }
        return UnsafeMutableRawBufferPointer(rebasing: storage[end...])
    }

    /// Records that `count` bytes were written into the space ``freeSpace(minimum:)`` returned.
    func commit(_ count: Int) { end += count }

    /// Forgets everything (a new connection).
    func reset() {
        start = 0
        end = 0
    }
}
