/// Which of a reactor's own functions is about to run, so that a crash in it can be pinned on its session.
/// The runtime reports the first eight; a host reports the rest (decoding, encoding, replaying stored
/// history, `recover(interrupted:state:)` at load, the reactor's own middlewares), so one table numbers them
/// all. The raw values are stable: a host's crash records keep them.
public enum ReactorCall: UInt8, Sendable, CaseIterable {
    case decodeAction = 1
    case transformAction, mutate, transformMutation, reduce, transformState, effect, source
    case encodeState, encodeMutation, encodeAction, replay, decodeState
    /// `recover(interrupted:state:)`, as a load hands it an action a stop cut off.
    case recover
    /// A hook of a middleware the reactor's author wrote (`intercept`, `vet`, `didReduce`, …).
    case middleware
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
    /// Called as an effect of action `seq` starts, on the thread that ran its `mutate`: what it returns is
    /// kept with the effect and handed to ``willRun(_:seq:context:)`` before each stretch of its code.
    /// Default: nil.
    func context(forEffectOf seq: UInt64) -> (any AnyObject & Sendable)?
    /// A stretch of an effect's (or a merged source's) task is about to run, with its effect's context.
    /// Default: `willRun(call, seq: seq, version: 0)`.
    func willRun(_ call: ReactorCall, seq: UInt64, context: (any AnyObject & Sendable)?)
}

extension ReactorCallTracer {
    /// Nothing to keep.
    public func context(forEffectOf seq: UInt64) -> (any AnyObject & Sendable)? { nil }

    /// The plain announcement.
    public func willRun(_ call: ReactorCall, seq: UInt64, context: (any AnyObject & Sendable)?) {
        willRun(call, seq: seq, version: 0)
    }
}
