import CLinux
import Reactors
import Synchronization

/// Pins the reactor code a thread runs on one session: before each call (the runtime's, and the
/// service's own decoding, encoding and replay) it writes the session, reactor, seq or version and what
/// runs into the thread's crash slot (`CLinux_reactor_enter`), and clears it after. A fatal signal in
/// between writes a crash record naming them, and the session is quarantined at the next start.
///
/// ```swift
/// let tracer = SessionCallTracer(session: "s1", reactor: "counter")
/// let runtime = ReactorRuntime(CounterReactor(), tracer: tracer)
/// let state = tracer.run(.decodeState, version: 12) { try decoder.decode(State.self, from: json) }
/// ```
/// Cheap on purpose (it runs several times per action): two calls into C, no lock, no allocation; the
/// names are copied only when the thread's slot last held another session.
@usableFromInline
final class SessionCallTracer: ReactorCallTracer {
    /// Tells this session from every other of the process's lifetime (never reused, unlike an address).
    @usableFromInline let key: UInt64
    @usableFromInline let session: String
    @usableFromInline let reactor: String

    private static let keys = Atomic<UInt64>(0)

    @usableFromInline
    init(session: String, reactor: String) {
        key = Self.keys.wrappingAdd(1, ordering: .relaxed).newValue
        self.session = session
        self.reactor = reactor
    }

    @usableFromInline
    func willRun(_ call: ReactorCall, seq: UInt64, version: UInt64) {
        if CLinux_reactor_enter(key, call.rawValue, seq, version, nil, 0) != 0 { identify() }
    }

    @usableFromInline
    func didRun() {
        CLinux_reactor_leave()
    }

    /// The JSON of action `seq` when this thread is sending it (it runs inline): kept with the effect it
    /// starts, so a crash in the effect's code, on another thread later, still names the action.
    @usableFromInline
    func context(forEffectOf seq: UInt64) -> (any AnyObject & Sendable)? {
        var json: UnsafePointer<UInt8>?
        let count = CLinux_reactor_pending_for(seq, &json)
        guard count > 0, let json else { return nil }
        return ActionBytes(copying: UnsafeBufferPointer(start: json, count: count))
    }

    @usableFromInline
    func willRun(_ call: ReactorCall, seq: UInt64, context: (any AnyObject & Sendable)?) {
        let action = (context as? ActionBytes)?.bytes
        if CLinux_reactor_enter(key, call.rawValue, seq, 0, action?.baseAddress, action?.count ?? 0) != 0 { identify() }
    }

    /// Runs `body` (code of the session's reactor, or of its types) as `call`; `action` is the JSON of
    /// the action it runs for, kept in a crash record.
    @inlinable
    func run<T, E: Error>(
        _ call: ReactorCall, seq: UInt64 = 0, version: UInt64 = 0, action: [UInt8]? = nil, _ body: () throws(E) -> T
    ) throws(E) -> T {
        let fresh: Int32
        if let action {
            fresh = action.withUnsafeBufferPointer { bytes in
                CLinux_reactor_enter(key, call.rawValue, seq, version, bytes.baseAddress, bytes.count)
            }
        } else {
            fresh = CLinux_reactor_enter(key, call.rawValue, seq, version, nil, 0)
        }
        if fresh != 0 { identify() }
        defer { CLinux_reactor_leave() }
        return try body()
    }

    /// Runs `body` as `call` for the action this thread is sending and no runtime has numbered yet (a
    /// middleware's `intercept`): a crash in it keeps that action's JSON in its record.
    @inlinable
    func runBeforeAdmission<T, E: Error>(_ call: ReactorCall, _ body: () throws(E) -> T) throws(E) -> T {
        var json: UnsafePointer<UInt8>?
        let count = CLinux_reactor_pending_unclaimed(&json)
        if CLinux_reactor_enter(key, call.rawValue, 0, 0, count > 0 ? json : nil, count) != 0 { identify() }
        defer { CLinux_reactor_leave() }
        return try body()
    }

    /// Runs `body`, which hands the action `json` to the runtime from this thread: a crash while the
    /// runtime runs that action here (it does when the session was idle) keeps `json` in its record.
    @inlinable
    static func sending<T, E: Error>(_ json: [UInt8], _ body: () throws(E) -> T) throws(E) -> T {
        try json.withUnsafeBufferPointer { (bytes: UnsafeBufferPointer<UInt8>) throws(E) -> T in
            CLinux_reactor_pending_action(bytes.baseAddress, bytes.count)
            defer { CLinux_reactor_pending_action(nil, 0) }
            return try body()
        }
    }

    /// An action's JSON kept for its effect: one allocation, only for effects started while it is sent.
    final class ActionBytes: @unchecked Sendable {
        // Unchecked: written once at init, only read afterwards.
        let bytes: UnsafeMutableBufferPointer<UInt8>

        init(copying source: UnsafeBufferPointer<UInt8>) {
            bytes = .allocate(capacity: source.count)
            _ = bytes.initialize(from: source)
        }

        deinit { bytes.deallocate() }
    }

    /// Copies the names into the innermost frame (only when it held another session).
    @usableFromInline
    func identify() {
        var session = session
        var reactor = reactor
        session.withUTF8 { id in
            reactor.withUTF8 { name in CLinux_reactor_identify(id.baseAddress, id.count, name.baseAddress, name.count) }
        }
    }
}
