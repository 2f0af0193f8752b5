import Logs

#if canImport(Glibc)
    import Glibc
#endif

/// SIGTERM/SIGINT → graceful shutdown, without async-signal-safety hazards: the signals are
/// blocked in every thread and one dedicated thread waits for them with `sigwait`.
public enum ShutdownSignals {
    /// Blocks `signals` in the calling thread and every thread it starts later; call first thing in `main`.
    public static func block(_ signals: [Int32]) {
        var set = sigset_t()
        sigemptyset(&set)
        for signal in signals { sigaddset(&set, signal) }
        pthread_sigmask(SIG_BLOCK, &set, nil)
    }

    /// Starts a thread that calls `server.shutdown()` when SIGTERM or SIGINT arrives (block them first).
    public static func shutdownOnSignal(_ server: HTTPServer) {
        onSignal(logger: server.logger) { server.shutdown() }
    }

    /// Starts a thread that runs `shutdown` once, when SIGTERM or SIGINT arrives (block them first):
    /// for servers that stop more than the HTTP server (health turning 503, sessions settling).
    public static func onSignal(logger: Logger, _ shutdown: @escaping @Sendable () -> Void) {
        final class Box: @unchecked Sendable {
            let logger: Logger
            let shutdown: @Sendable () -> Void
            init(_ logger: Logger, _ shutdown: @escaping @Sendable () -> Void) {
                self.logger = logger
                self.shutdown = shutdown
            }
        }
        let box = Unmanaged.passRetained(Box(logger, shutdown)).toOpaque()
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_create(
            &thread, &attributes,
            { raw in
                let box = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue()
                var set = sigset_t()
                sigemptyset(&set)
                sigaddset(&set, SIGTERM)
                sigaddset(&set, SIGINT)
                var received: Int32 = 0
                while sigwait(&set, &received) != 0 {}
                box.logger.notice("signal received; shutting down gracefully", ["signal": .int(Int(received))])
                box.shutdown()
                return nil
            }, box)
        pthread_attr_destroy(&attributes)
    }
}
