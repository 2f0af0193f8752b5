#if canImport(Glibc)
    import Glibc
#endif

extension ReactorScheduler {
    /// The threads `.workers` reactors run on: one per CPU, at least two, started when first used and apart
    /// from the effects' pool, so slow reducers never delay effects. They yield to every ordinary thread
    /// (`SCHED_IDLE`): an event loop that wakes takes the CPU from a reduce at once, so heavy reducers use only
    /// what the loops leave, all of it (every core) when the loops are quiet.
    public static let workerPool = EffectExecutor(
        threads: max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))), yielding: true)
}
