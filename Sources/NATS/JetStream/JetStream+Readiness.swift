import Logs

/// Waiting for JetStream: a cluster still electing its leader, or a server not reachable yet,
/// answers with errors or not at all for a while; these retry with a log line instead of failing.
extension JetStream {
    /// Returns once JetStream answers (`$JS.API.INFO`), retrying transient failures (no
    /// connection, no responders, timeouts, "temporarily unavailable") with a warning at growing
    /// intervals; throws the last error after `timeout`, or at once on one that will not pass
    /// (JetStream disabled for the account, bad credentials, a closed connection).
    public func waitUntilReady(timeout: Duration, logger: Logger) async throws(NATSError) {
        _ = try await retrying("waiting for JetStream", timeout: timeout, logger: logger) {
            () async throws(NATSError) in
            try await accountInfo()
        }
    }

    /// Runs `operation` until it succeeds, retrying errors that may pass (``NATSError/isTransient``)
    /// with a backoff from 100 ms to 2 s, for at most `timeout`. Logs a warning naming `what` and the
    /// error on the first failure and then about every 5 s; logs once more when it succeeds.
    public func retrying<T: Sendable>(
        _ what: String, timeout: Duration, logger: Logger, operation: () async throws(NATSError) -> T
    ) async throws(NATSError) -> T {
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var delay = Duration.milliseconds(100)
        var failures = 0
        var lastLog = clock.now - .seconds(60)
        while true {
            do {
                let value = try await operation()
                if failures > 0 { logger.notice("\(what): done", ["attempts": .int(failures + 1)]) }
                return value
            } catch {
                failures += 1
                guard error.isTransient, clock.now + delay < deadline else { throw error }
                if clock.now - lastLog >= .seconds(5) {
                    logger.warning(
                        "\(what): not ready yet; retrying",
                        ["error": .string(error.description), "attempt": .int(failures)])
                    lastLog = clock.now
                }
                do {
                    try await Task.sleep(for: delay, clock: clock)
                } catch {
                    throw NATSError.cancelled
                }
                delay = min(delay * 2, .seconds(2))
            }
        }
    }
}
