import CLinux

/// The C allocator's heap as `/metrics` shows it (glibc's `mallinfo2`): what live allocations use and
/// what the allocator holds free for reuse. Resident memory that grows while `inUse` stays flat is the
/// allocator keeping freed memory, not data the server keeps.
struct ProcessHeap: Sendable, Equatable {
    /// Bytes in live allocations (in the arenas, and large ones mapped on their own).
    var inUse: UInt64
    /// Bytes the arenas hold free.
    var free: UInt64
    /// Bytes of the large allocations mapped on their own (part of `inUse`).
    var mapped: UInt64 = 0

    /// Read now: the allocator locks each arena briefly to count it (once per scrape).
    static func current() -> ProcessHeap {
        var inUse: UInt64 = 0
        var free: UInt64 = 0
        var mapped: UInt64 = 0
        CLinux_heap_statistics(&inUse, &free, &mapped)
        return ProcessHeap(inUse: inUse, free: free, mapped: mapped)
    }
}

extension ProcessHeap {
    /// The size from which an allocation gets pages of its own, returned to the kernel when freed.
    static let mapThreshold = 256 << 10

    /// Fixes glibc's threshold for mapping large allocations on their own at ``mapThreshold``, unless
    /// the environment sets `MALLOC_MMAP_THRESHOLD_` (the operator's choice wins). Call it before any
    /// thread starts.
    ///
    /// By default glibc raises the threshold each time a mapped block is freed, up to 32 MiB, so the
    /// large transient buffers of a server (segments read back, action-log pages, replays) come from
    /// the arenas afterwards and their memory stays there, free but resident: under the soak's mixed
    /// load the arenas held 22 MB free against 6 MB in use after five minutes, and 2.7 MB with the
    /// threshold fixed.
    static func fixMapThreshold(environment: [String: String]) {
        guard environment["MALLOC_MMAP_THRESHOLD_"] == nil else { return }
        _ = CLinux_heap_fix_mmap_threshold(mapThreshold)
    }
}
