/// What storing and registering states need to know of their `@Pulse` properties.
///
/// A state's JSON holds pulse values only, so whatever stores states keeps the counts beside them and puts
/// them back when it decodes, and a client never sees a `count` go back:
/// ```swift
/// let counts = Pulses.counts(of: state)            // stored next to the state's JSON
/// var loaded = try decoder.decode(State.self, from: json)
/// Pulses.restore(counts, into: &loaded)
/// ```
public enum Pulses {
    /// The count of every delivered `@Pulse` property of `state`, by path (`alert`, `editor.alert`); empty
    /// for states without pulses.
    public static func counts<State>(of state: State) -> [String: UInt64] {
        PulseScanner.scanner(for: State.self)?.counts(of: state) ?? [:]
    }

    /// Sets the counts of `state`'s pulses to those named in `counts` (other names are ignored).
    public static func restore<State>(_ counts: [String: UInt64], into state: inout State) {
        guard !counts.isEmpty else { return }
        PulseScanner.scanner(for: State.self)?.restore(counts, into: &state)
    }

    /// What forcing a state does to its pulses: each counts as assigned, its count continuing from the same
    /// pulse of the state it replaces.
    public static func force<State>(_ forced: inout State, replacing previous: State) {
        PulseScanner.scanner(for: State.self)?.force(&forced, replacing: previous)
    }

    /// The `@Pulse` properties of `State` the runtime cannot deliver, with why: those in an optional, an
    /// array, set or dictionary element, a class (or a class `State`), or another pulse's value. A pulse
    /// reachable through stored struct properties is delivered (`editor.alert`). Empty when every pulse is.
    public static func undeliverable<State>(in type: State.Type) -> [UndeliverablePulse] {
        PulseLayout(of: State.self).undeliverable
    }

    /// The delivered pulses of `State`: path, byte offset in the state, and `Pulse<Value>` type, for a
    /// client that finds which pulse a key path reads (`ReactorClient`'s `pulse(\.editor.$alert)`).
    @_spi(PulseLayout)
    public static func deliveredFields<State>(of type: State.Type) -> [(name: String, offset: Int, type: Any.Type)] {
        PulseLayout(of: State.self).delivered.map { ($0.name, $0.offset, $0.type as Any.Type) }
    }
}
