/// A state together with the version that produced it (0 is the initial state, each reduce adds 1).
public struct Snapshot<State: Sendable>: Sendable {
    /// How many states the reactor has emitted before this one.
    public var version: UInt64
    /// The state as observers see it (after `transform(state:)`).
    public var state: State

    /// Pairs a version with its state.
    @inlinable public init(version: UInt64, state: State) {
        self.version = version
        self.state = state
    }
}

extension Snapshot: Equatable where State: Equatable {}

/// What a runtime needs to resume where it stopped: the reducer's accumulator, its version and the last action seq.
///
/// The state keeps its `@Pulse` counts in memory; encoded, a checkpoint carries them beside the state
/// (`pulseCounts`), so a runtime restored from it never sends a count lower than one sent before.
public struct Checkpoint<State: Sendable>: Sendable {
    /// The state `reduce` last returned (before `transform(state:)`), pulse counts included.
    public var state: State
    /// The version of that state.
    public var version: UInt64
    /// The seq of the last accepted action; the next action gets `lastSeq + 1`.
    public var lastSeq: UInt64

    /// Builds a checkpoint, e.g. from a journal read back at start.
    @inlinable public init(state: State, version: UInt64, lastSeq: UInt64) {
        self.state = state
        self.version = version
        self.lastSeq = lastSeq
    }
}

extension Checkpoint {
    /// The counts of the state's `@Pulse` properties, by name (what the state's JSON leaves out).
    public var pulseCounts: [String: UInt64] { Pulses.counts(of: state) }
}

extension Checkpoint: Codable where State: Codable {
    enum CodingKeys: String, CodingKey {
        case state, version, lastSeq, pulseCounts
    }

    /// Decodes a checkpoint and puts its pulse counts back into the state (absent: the counts stay 0).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        var state = try container.decode(State.self, forKey: .state)
        Pulses.restore(try container.decodeIfPresent([String: UInt64].self, forKey: .pulseCounts) ?? [:], into: &state)
        self.init(
            state: state, version: try container.decode(UInt64.self, forKey: .version),
            lastSeq: try container.decode(UInt64.self, forKey: .lastSeq))
    }

    /// Encodes the state, version, seq and the pulse counts the state's own encoding leaves out.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(state, forKey: .state)
        try container.encode(version, forKey: .version)
        try container.encode(lastSeq, forKey: .lastSeq)
        let counts = pulseCounts
        if !counts.isEmpty { try container.encode(counts, forKey: .pulseCounts) }
    }
}

extension Checkpoint: Equatable where State: Equatable {}

/// One `@Pulse` property that was assigned in the state of a given version.
public struct PulseUpdate: Sendable {
    /// The property name without the underscore, e.g. `alert`.
    public var name: String
    /// How many times the property has been assigned (wrapping).
    public var count: UInt64
    /// The assigned value.
    public var value: any Encodable & Sendable

    /// Describes one pulse assignment.
    public init(name: String, count: UInt64, value: any Encodable & Sendable) {
        self.name = name
        self.count = count
        self.value = value
    }
}

/// What an observer receives: each new state with the pulses it assigned, then `.finished` once the runtime stops.
public enum StateEvent<State: Sendable>: Sendable {
    /// A new (or, on subscription, the latest) state; `pulses` lists `@Pulse` properties assigned to produce it.
    case state(Snapshot<State>, pulses: [PulseUpdate])
    /// The runtime stopped; no further events follow.
    case finished
}
