import JSONCodec
import Reactors

// What a reactor's `ReactorContext` reaches of its session: the state now, and its own actions sent from effects.
extension Session {
    /// The host the reactor's context is attached to: the runtime's state, and actions sent through this
    /// session (both held weakly).
    @usableFromInline
    func contextHost() -> ReactorContextHost<R> {
        ReactorContextHost(runtime: runtime, owner: self, ended: SessionError.ended) { try $0.send(fromEffect: $1) }
    }

    /// Queues an action one of the session's effects sent: journaled and logged like a client's, as
    /// `"from": "effect"`, with its JSON written by the action's own `Encodable` (the log's wire shape).
    func send(fromEffect action: R.Action) throws(SessionError) -> UInt64 {
        if let reason = journal?.unavailableReason { throw .storageUnavailable(reason) }
        if passivated.load(ordering: .acquiring) { throw .passivated }
        // The action's Encodable is the reactor's code: pinned on this session like the decoding of a sent one.
        let json = tracer.run(.encodeAction) { Self.logJSON(of: action) }
        return try accept(action, json: json, origin: .effect, completion: nil)
    }

    /// The action in the `{"type": …}` wire shape; an action type that is not `Encodable` is logged by its
    /// Swift description under `"type"`, so the log still says what it was.
    static func logJSON(of action: R.Action) -> [UInt8] {
        if let encodable = action as? any Encodable, let json = try? encodeAction(encodable) { return json }
        var out = JSONWriter(capacity: 64)
        out.raw("{\"type\":")
        out.string(String(describing: action))
        out.raw("}")
        return out.bytes
    }
}
