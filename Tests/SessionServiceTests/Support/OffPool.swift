import Foundation

/// Runs blocking work (a build, a process, socket reads that wait on the server) on its own thread
/// and awaits it. Swift Testing runs tests on the cooperative pool, one thread per core: a test that
/// blocks a pool thread for long starves every test whose reactors need the pool for their effects.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try work() })
        }
    }
}
