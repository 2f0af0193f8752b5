import Synchronization

/// A state property whose every assignment reaches observers, even of an equal value (ReactorKit's `@Pulse`):
/// an alert shown twice with the same text must show twice.
///
/// ```swift
/// struct State: Codable, Sendable {
///     var items: [Item] = []
///     @Pulse var alert: String? = nil
/// }
/// ```
/// The runtime compares update counts between consecutive states and reports the properties that were
/// assigned as `PulseUpdate`s. It encodes as its value only; a decoded pulse starts at count 0.
@propertyWrapper
public struct Pulse<Value: Codable & Sendable>: Sendable {
    /// The last assigned value.
    public var value: Value
    /// How many times the value has been assigned; wraps on overflow.
    public private(set) var count: UInt64

    /// Starts with `wrappedValue` and count 0.
    public init(wrappedValue: Value) {
        value = wrappedValue
        count = 0
    }

    /// The value; every assignment adds 1 to `count`.
    public var wrappedValue: Value {
        get { value }
        set {
            value = newValue
            count &+= 1
        }
    }

    /// `$property` gives the pulse itself, to read `count`.
    public var projectedValue: Pulse<Value> {
        get { self }
        set { self = newValue }
    }

    /// For tests of wrapping: a pulse that has already been assigned `count` times.
    public init(value: Value, count: UInt64) {
        self.value = value
        self.count = count
    }
}

extension Pulse: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(wrappedValue: try decoder.singleValueContainer().decode(Value.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

extension Pulse: Equatable where Value: Equatable {}

/// Lets the runtime read a pulse's count and value without knowing its `Value`.
protocol AnyPulse {
    var count: UInt64 { get }
    var anyValue: any Encodable & Sendable { get }
}

extension Pulse: AnyPulse {
    var anyValue: any Encodable & Sendable { value }
}

/// Finds the `@Pulse` properties of a state type once, and the ones a new state assigned.
@usableFromInline
struct PulseScanner: Sendable {
    /// Property names (without the wrapper's underscore) in declaration order.
    let names: [String]

    private static let cache = Mutex<[ObjectIdentifier: [String]]>([:])

    /// The scanner for `State`, or nil when it has no top-level `@Pulse` property (then pulses cost nothing).
    static func scanner<State>(for state: State) -> PulseScanner? {
        let key = ObjectIdentifier(State.self)
        if let names = cache.withLock({ $0[key] }) {
            return names.isEmpty ? nil : PulseScanner(names: names)
        }
        let names = pulses(in: state).map(\.name)
        cache.withLock { $0[key] = names }
        return names.isEmpty ? nil : PulseScanner(names: names)
    }

    private static func pulses(in state: Any) -> [(name: String, pulse: any AnyPulse)] {
        Mirror(reflecting: state).children.compactMap { child in
            guard let pulse = child.value as? any AnyPulse, let label = child.label else { return nil }
            let name = label.hasPrefix("_") ? String(label.dropFirst()) : label
            return (name, pulse)
        }
    }

    /// The pulses whose count differs between `old` and `new`.
    @usableFromInline
    func changes<State>(from old: State, to new: State) -> [PulseUpdate] {
        let before = Self.pulses(in: old)
        let after = Self.pulses(in: new)
        var updates: [PulseUpdate] = []
        for (index, entry) in after.enumerated() where index >= before.count || before[index].pulse.count != entry.pulse.count {
            updates.append(PulseUpdate(name: entry.name, count: entry.pulse.count, value: entry.pulse.anyValue))
        }
        return updates
    }
}
