import CLinux

/// The C allocator's heap as `/metrics` shows it (glibc's `mallinfo2`): what live allocations use and
/// what the allocator holds free for reuse. Resident memory that grows while `inUse` stays flat is the
/// allocator keeping freed memory, not data the server keeps.
struct ProcessHeap: Sendable, Equatable {
    /// Bytes in live allocations (in the arenas, and large ones mapped on their own).
    var inUse: UInt64
    /// Bytes the arenas hold free.
    var free: UInt64

    /// Read now: the allocator locks each arena briefly to count it (once per scrape).
    static func current() -> ProcessHeap {
        var inUse: UInt64 = 0, free: UInt64 = 0, arenas: UInt64 = 0
        CLinux_heap_statistics(&inUse, &free, &arenas)
        return ProcessHeap(inUse: inUse, free: free)
    }
}
