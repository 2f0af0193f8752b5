import JSONCodec
import Reactors

/// The smallest reactor: `increase` and `decrease` a number.
///
/// Actions on the wire: `{"type": "increase"}`, `{"type": "decrease"}`; state: `{"value": 0}`.
/// The count saturates: `increase` at `Int.max` and `decrease` at `Int.min` leave it where it is (the
/// action still makes a new version with the same value), so it never wraps to the other end.
public struct CounterReactor: Reactor {
    /// What the counter can be asked to do.
    public enum Action: Codable, Sendable, Equatable {
        /// Add one.
        case increase
        /// Subtract one.
        case decrease

        /// Every case's wire name, in declaration order.
        public static let types = ["increase", "decrease"]

        /// Decodes `{"type": "<case>", …payload}`; an unknown `type` or a bad payload throws a `DecodingError`.
        public init(from decoder: any Decoder) throws {
            let (type, container) = try decoder.actionContainer()
            switch type {
            case "increase": self = .increase
            case "decrease": self = .decrease
            default: throw container.unknownType(type, expected: Self.types)
            }
        }

        /// Encodes the same `{"type": …}` shape it decodes.
        public func encode(to encoder: any Encoder) throws {
            _ = try encoder.actionContainer(type: self == .increase ? "increase" : "decrease")
        }
    }

    /// The count.
    public struct State: Codable, Sendable, Equatable {
        /// The current count, starting at 0.
        public var value: Int

        /// A state showing `value`.
        public init(value: Int = 0) { self.value = value }
    }

    /// `counter`: the name the service hosts this reactor under.
    public static let name = "counter"
    /// One line for the browser page.
    public static let summary = "A number you can increase and decrease."
    /// One JSON text per action case, for buttons.
    public static let exampleActions = [#"{"type":"increase"}"#, #"{"type":"decrease"}"#]
    /// Its actions and state on the wire, for the OpenAPI document.
    public static let schema = ReactorSchema(
        actions: [
            .action("increase", "Add one (at Int.max the value stays)."),
            .action("decrease", "Subtract one (at Int.min the value stays)."),
        ],
        state: .object(["value": JSONSchema.int.described("The current count.")]).titled("CounterState"))

    /// The state a new session starts with (computed: a stored copy would cost every session 8+ bytes).
    public var initialState: State { State() }

    /// A counter at 0.
    public init() {}

    /// Folds one mutation into the state; stops at `Int.max` and `Int.min` instead of wrapping.
    @inlinable public func reduce(state: State, mutation: Action) -> State {
        var state = state
        switch mutation {
        case .increase: if state.value < .max { state.value += 1 }
        case .decrease: if state.value > .min { state.value -= 1 }
        }
        return state
    }
}
