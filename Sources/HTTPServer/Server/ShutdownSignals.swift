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
        final class Box: @unchecked Sendable {
            let server: HTTPServer
            init(_ server: HTTPServer) { self.server = server }
        }
        let box = Unmanaged.passRetained(Box(server)).toOpaque()
        var thread = pthread_t()
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        pthread_create(&thread, &attributes, { raw in
            let server = Unmanaged<Box>.fromOpaque(raw!).takeRetainedValue().server
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGTERM)
            sigaddset(&set, SIGINT)
            var received: Int32 = 0
            while sigwait(&set, &received) != 0 {}
            server.logger.notice("signal received; shutting down gracefully", ["signal": .int(Int(received))])
            server.shutdown()
            return nil
        }, box)
        pthread_attr_destroy(&attributes)
    }
}
