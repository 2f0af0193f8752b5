import JSONCodec

/// A state with the version the server gave it.
public struct VersionedState<State: Sendable>: Sendable {
    /// Starts at 0 and grows by one for every state the session emits.
    public var version: UInt64
    /// The state.
    public var state: State

    /// A state at `version`.
    public init(version: UInt64, state: State) {
        self.version = version
        self.state = state
    }
}

extension VersionedState: Equatable where State: Equatable {}
extension VersionedState: Hashable where State: Hashable {}

extension VersionedState where State: Decodable {
    /// From an answer's `"version"` and `"state"` members.
    init(_ body: JSONValue, as type: State.Type, _ what: @autoclosure () -> String) throws(ReactorClientError) {
        version = try APIResponse.integer(body, "version")
        state = try APIResponse.decode(State.self, from: try APIResponse.member(body, "state"), what())
    }
}

/// What `?wait=true` answers: the action's `seq` and the state once its mutations were reduced.
public struct ActionResult<State: Sendable>: Sendable {
    /// The action's number in the session, from 1.
    public var seq: UInt64
    /// The version and state after its mutations (unchanged in stub mode).
    public var reduced: VersionedState<State>

    /// The reduced state's version.
    public var version: UInt64 { reduced.version }
    /// The reduced state.
    public var state: State { reduced.state }
}

extension ActionResult: Equatable where State: Equatable {}

extension VersionedState where State == JSONValue {
    /// The state decoded as `Value`, with the server's coding.
    public func decoded<Value: Decodable>(as type: Value.Type) throws(ReactorClientError) -> VersionedState<Value> {
        VersionedState<Value>(
            version: version, state: try APIResponse.decode(Value.self, from: state, "a state of version \(version)"))
    }
}
