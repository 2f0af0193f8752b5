/// Which of a reactor's own functions is about to run, so that a crash in it can be pinned on its session.
/// The runtime reports the first eight; a host reports the rest (decoding, encoding, replaying stored
/// history), so one table numbers them all. The raw values are stable: a host's crash records keep them.
public enum ReactorCall: UInt8, Sendable, CaseIterable {
    case decodeAction = 1, transformAction, mutate, transformMutation, reduce, transformState, effect, source
    case encodeState, encodeMutation, encodeAction, replay, decodeState
}

/// Told, on the thread that runs it, right before and right after a runtime runs its reactor's own code:
/// `transform(action:)` and `mutate` with the action's `seq`, `transform(mutation:)`, `reduce` and
/// `transform(state:)` with the version they make, each stretch of an effect's or a merged source's task.
/// Calls nest (an effect's `emit` may reduce on the same thread) and always pair. They run on the hot path:
/// an implementation must not block, lock or allocate.
///
/// ```swift
/// final class Tracer: ReactorCallTracer {
///     func willRun(_ call: ReactorCall, seq: UInt64, version: UInt64) { current = (call, seq, version) }
///     func didRun() { current = nil }
/// }
/// let runtime = ReactorRuntime(CounterReactor(), tracer: Tracer())
/// ```
public protocol ReactorCallTracer: AnyObject, Sendable {
    /// `call` is about to run for action `seq` (0: none) making or showing `version` (0: none).
    func willRun(_ call: ReactorCall, seq: UInt64, version: UInt64)
    /// The call announced last on this thread returned.
    func didRun()
}
