import JSONCodec
import Logs
import Reactors
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps every state a session commits within `sessions.maxStateBytes` of JSON, so that whatever the server
/// accepted it can snapshot and read back, and keeps the JSON it measured: reads, events, `?wait=true`
/// answers and snapshots of that state reuse it instead of encoding the state again.
///
/// A runtime middleware: `vet` encodes each new state before it is committed and refuses it when it is over
/// the limit (or has no JSON form); the runtime then drops it (no version, no journal record, subscribers
/// see nothing) and fails the action. `didRefuse` logs the refusal at warning and keeps it for the action
/// log. A state already over the limit (the limit was lowered since it was stored) may still change as long
/// as it does not grow, so lowering the limit never leaves a session stuck.
@usableFromInline
final class StateLimit<R: Reactor>: ReactorMiddleware {
    /// The latest state measured and its JSON; valid for any state with the same bits (the same value).
    @usableFromInline
    struct Measured {
        @usableFromInline var state: R.State
        @usableFromInline var json: [UInt8]

        @inlinable init(state: R.State, json: [UInt8]) {
            self.state = state
            self.json = json
        }
    }

    @usableFromInline
    struct Storage {
        @usableFromInline var latest: Measured?
        /// Why actions' states were refused, by seq; the newest `refusalLimit` are kept.
        var refusals: [UInt64: ActionRejection] = [:]

        @usableFromInline init() {}
    }

    @usableFromInline let limit: Int
    @usableFromInline let context: SessionContext
    /// Pins the encoding of the states on the session (and names it).
    @usableFromInline let tracer: SessionCallTracer
    @usableFromInline let storage = Mutex(Storage())
    /// `measure`, specialized for the concrete state type: built where the session's type is known, since
    /// the runtime reaches `vet` through a protocol, whose generic code costs about 2,000 instructions
    /// a call (measured) in metadata lookups and value-witness calls.
    @usableFromInline let specializedMeasure: @Sendable (StateLimit, R.State, UInt64) throws(ActionRejection) -> Void
    /// `measuredJSON(of:)`, specialized likewise: the session publishes states to subscribers from generic code.
    @usableFromInline let specializedLookup: @Sendable (StateLimit, R.State) -> [UInt8]?
    static var refusalLimit: Int { 1_000 }

    @inlinable
    init(limit: Int, context: SessionContext, tracer: SessionCallTracer) {
        self.limit = limit
        boundedByItsType = _isPOD(R.State.self) && MemoryLayout<R.State>.size * 256 <= limit
        self.context = context
        self.tracer = tracer
        specializedMeasure = { stateLimit, state, version throws(ActionRejection) in
            try stateLimit.measure(state, version: version)
        }
        specializedLookup = { stateLimit, state in stateLimit.measuredJSON(of: state) }
    }

    @usableFromInline var interceptsActions: Bool { false }
    @usableFromInline var vetsStates: Bool { true }

    @usableFromInline
    func vet(state: R.State, version: UInt64) throws(ActionRejection) {
        if boundedByItsType { return }
        try specializedMeasure(self, state, version)
    }

    /// Whether no state of this type can come near the limit, so none need be measured: a type that
    /// holds no references (no strings, arrays or objects — plain numbers, flags and enum cases, like the
    /// counter's) has JSON made only of its fixed keys and of values a few dozen characters long, which
    /// nothing a client sends can grow. The budget allowed is 256 bytes of JSON per byte of the state.
    /// Measuring cost the counter's POST path about 5,000 instructions (a quarter of it) for nothing.
    @usableFromInline let boundedByItsType: Bool

    /// Encodes `state`, refuses it when over the limit (and larger than the state before it), else keeps its JSON.
    @inlinable
    func measure(_ state: R.State, version: UInt64) throws(ActionRejection) {
        let json: [UInt8]
        do {
            json = try tracer.run(.encodeState, version: version) { try JSONValueEncoder().encode(state) }
        } catch {
            throw Self.notEncodable(error)
        }
        if json.count > limit {
            let previous = storage.withLock { $0.latest?.json.count } ?? 0
            if json.count > previous { throw tooLarge(json.count) }
        }
        storage.withLock { $0.latest = Measured(state: state, json: json) }
    }

    @usableFromInline
    static func notEncodable(_ error: any Error) -> ActionRejection {
        ActionRejection(
            code: APIError.Kind.stateNotEncodable.code,
            message: "the state this action produced has no JSON form, so it could not be sent or stored (\(error)); "
                + "the session is unchanged")
    }

    @usableFromInline
    func tooLarge(_ size: Int) -> ActionRejection {
        ActionRejection(
            code: APIError.Kind.stateTooLarge.code,
            message: "the state this action produced would be \(size) bytes of JSON, over the limit of \(limit) bytes "
                + "(sessions.maxStateBytes); the session is unchanged")
    }

    @usableFromInline
    func didRefuse(_ rejection: ActionRejection, seq: UInt64?) {
        var fields: LogFields = [
            "session": .string(sessionID), "code": .string(rejection.code), "reason": .string(rejection.message),
        ]
        if let seq { fields.append("seq", .int(Int(truncatingIfNeeded: seq))) }
        context.logger.warning(
            seq == nil
                ? "a state was refused; the session is unchanged"
                : "an action's state was refused; the session is unchanged", fields)
        guard let seq else { return }
        storage.withLock { storage in
            storage.refusals[seq] = rejection
            if storage.refusals.count > Self.refusalLimit, let oldest = storage.refusals.keys.min() {
                storage.refusals[oldest] = nil
            }
        }
    }

    /// Why the states of these actions were refused, for those that were.
    func refusals(of seqs: some Sequence<UInt64>) -> [UInt64: ActionRejection] {
        storage.withLock { storage in
            guard !storage.refusals.isEmpty else { return [:] }
            var found: [UInt64: ActionRejection] = [:]
            for seq in seqs { if let refusal = storage.refusals[seq] { found[seq] = refusal } }
            return found
        }
    }

    /// The JSON of `state` (version `version`): the measured one when `state` is the same value, else a
    /// fresh encoding.
    @inlinable
    func json(of state: R.State, version: UInt64) throws -> [UInt8] {
        if let json = specializedLookup(self, state) { return json }
        return try tracer.run(.encodeState, version: version) { try JSONValueEncoder().encode(state) }
    }

    /// The session's id.
    @inlinable var sessionID: String { tracer.session }

    /// The JSON measured for `state` when it is the latest state measured, else nil.
    @inlinable
    func measuredJSON(of state: R.State) -> [UInt8]? {
        storage.withLock { storage in
            guard let latest = storage.latest, Self.sameBits(latest.state, state) else { return nil }
            return latest.json
        }
    }

    /// Records `json` as the measure of `state` (the state the session had when the limit was attached).
    @usableFromInline
    func remember(_ state: R.State, json: [UInt8]) {
        storage.withLock { $0.latest = Measured(state: state, json: json) }
    }

    /// Whether two states have identical bits, which makes them the same value with the same JSON: a
    /// transform that returns its state unchanged shares its buffers. Different bits may still be equal
    /// values (padding, copied buffers); those are encoded again, never mistaken.
    @inlinable
    static func sameBits(_ a: R.State, _ b: R.State) -> Bool {
        withUnsafeBytes(of: a) { first in
            withUnsafeBytes(of: b) { second in
                first.count == second.count
                    && (first.isEmpty || memcmp(first.baseAddress!, second.baseAddress!, first.count) == 0)
            }
        }
    }
}
