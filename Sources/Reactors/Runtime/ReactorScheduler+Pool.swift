#if canImport(Glibc)
    import Glibc
#endif

extension ReactorScheduler {
    /// The threads `.workers` reactors run on: one per CPU, at least two, started when first used and apart
    /// from the effects' pool, so slow reducers never delay effects.
    public static let workerPool = EffectExecutor(threads: max(2, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
}
