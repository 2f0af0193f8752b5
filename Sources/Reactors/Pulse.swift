@_spi(Reflection) import Swift
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
/// assigned as `PulseUpdate`s, named by their path (`alert`, `editor.alert` for a pulse of a nested struct).
/// It encodes as its value only; a decoded pulse starts at count 0, so whatever stores states keeps the
/// counts beside them (`Pulses.counts(of:)`, `Pulses.restore(_:into:)`). A pulse is delivered when it is
/// reachable from `State` through stored struct properties; `Pulses.undeliverable(in:)` finds the others
/// (in an optional, a collection, a class) and says why.
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
    /// Decodes the bare value; the count starts at 0.
    public init(from decoder: any Decoder) throws {
        self.init(wrappedValue: try decoder.singleValueContainer().decode(Value.self))
    }

    /// Encodes the value only, so clients see the plain property.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

extension Pulse: Equatable where Value: Equatable {}

/// Lets the runtime read and set a pulse's count and read its value in place, without knowing its `Value`.
protocol AnyPulse: SendableMetatype {
    static func count(at pointer: UnsafeRawPointer) -> UInt64
    static func setCount(_ count: UInt64, at pointer: UnsafeMutableRawPointer)
    static func value(at pointer: UnsafeRawPointer) -> any Encodable & Sendable
    static var valueType: Any.Type { get }
}

extension Pulse: AnyPulse {
    static func count(at pointer: UnsafeRawPointer) -> UInt64 {
        pointer.assumingMemoryBound(to: Pulse<Value>.self).pointee.count
    }

    static func setCount(_ count: UInt64, at pointer: UnsafeMutableRawPointer) {
        pointer.assumingMemoryBound(to: Pulse<Value>.self).pointee.count = count
    }

    static func value(at pointer: UnsafeRawPointer) -> any Encodable & Sendable {
        pointer.assumingMemoryBound(to: Pulse<Value>.self).pointee.value
    }

    static var valueType: Any.Type { Value.self }
}

/// Finds the delivered `@Pulse` properties of a state type once (path, byte offset, type; see `PulseLayout`),
/// then reads the counts of each new state in place: no `Mirror` per state, and nothing at all for states
/// without pulses.
@usableFromInline
struct PulseScanner: Sendable {
    typealias Field = PulseLayout.Field

    let fields: [Field]

    private static let cache = Mutex<[ObjectIdentifier: PulseScanner]>([:])

    /// The scanner for `State`, or nil when it is not a struct with a delivered `@Pulse` property.
    static func scanner<State>(for _: State.Type) -> PulseScanner? {
        let key = ObjectIdentifier(State.self)
        if let scanner = cache.withLock({ $0[key] }) {
            return scanner.fields.isEmpty ? nil : scanner
        }
        let scanner = PulseScanner(fields: PulseLayout(of: State.self).delivered)
        cache.withLock { $0[key] = scanner }
        return scanner.fields.isEmpty ? nil : scanner
    }

    /// The count of every pulse of `state`, by name.
    func counts<State>(of state: State) -> [String: UInt64] {
        withUnsafeBytes(of: state) { bytes in
            Dictionary(
                fields.map { ($0.name, $0.type.count(at: bytes.baseAddress! + $0.offset)) },
                uniquingKeysWith: { first, _ in first })
        }
    }

    /// Sets the counts of `state`'s pulses named in `counts`.
    func restore<State>(_ counts: [String: UInt64], into state: inout State) {
        withUnsafeMutableBytes(of: &state) { bytes in
            for field in fields {
                if let count = counts[field.name] { field.type.setCount(count, at: bytes.baseAddress! + field.offset) }
            }
        }
    }

    /// Gives each pulse of `forced` the count of the same pulse in `previous` plus one (wrapping).
    @usableFromInline
    func force<State>(_ forced: inout State, replacing previous: State) {
        withUnsafeBytes(of: previous) { before in
            withUnsafeMutableBytes(of: &forced) { after in
                for field in fields {
                    field.type.setCount(
                        field.type.count(at: before.baseAddress! + field.offset) &+ 1,
                        at: after.baseAddress! + field.offset)
                }
            }
        }
    }

    /// The pulses whose count differs between `old` and `new`.
    @usableFromInline
    func changes<State>(from old: State, to new: State) -> [PulseUpdate] {
        withUnsafeBytes(of: old) { before in
            withUnsafeBytes(of: new) { after in
                var updates: [PulseUpdate] = []
                for field in fields {
                    let count = field.type.count(at: after.baseAddress! + field.offset)
                    if count != field.type.count(at: before.baseAddress! + field.offset) {
                        updates.append(
                            PulseUpdate(
                                name: field.name, count: count,
                                value: field.type.value(at: after.baseAddress! + field.offset)))
                    }
                }
                return updates
            }
        }
    }
}
