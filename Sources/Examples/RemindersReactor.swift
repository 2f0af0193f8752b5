import JSONCodec
import Reactors

/// Reminders that fire later, durably: `remind` schedules a timer named after its text, `cancel` cancels it,
/// and when the time comes the timer sends `due`, which moves the text from `pending` to `fired`, exactly once
/// (also across a passivation, a restart or `kill -9`: the session's timers are journaled).
///
/// Actions on the wire: `{"type": "remind", "text": "tea", "afterSeconds": 60}` (1 ≤ afterSeconds ≤ 86,400; a
/// text already pending is rescheduled), `{"type": "cancel", "text": "tea"}`. The timer's own action
/// `{"type": "due", "text": "tea"}` is refused from clients (422 `unknown_action`).
/// State: `{"pending": ["tea"], "fired": []}`.
///
/// ```swift
/// func mutate(action: Action, state: State) -> Effect<Mutation> {
///     case .remind(let text, let seconds):
///         .concat(.just(.add(text)), .schedule(text, after: .seconds(seconds), Action.due(text: text)))
/// }
/// ```
public struct RemindersReactor: Reactor {
    /// The longest wait a reminder may ask for: one day.
    public static let maxAfterSeconds = 86_400

    /// What the reminders can be asked to do.
    public enum Action: Codable, Sendable, Equatable {
        /// Remind of `text` after `afterSeconds` (rescheduled when `text` is pending already).
        case remind(text: String, afterSeconds: Int)
        /// Forget the pending reminder of `text`.
        case cancel(text: String)
        /// The reminder of `text` falls due; sent only by the session's timer.
        case due(text: String)

        /// Every case's wire name, in declaration order.
        public static let types = ["remind", "cancel", "due"]

        /// Decodes `{"type": "<case>", …payload}`; an out-of-range `afterSeconds` or a text that is empty or
        /// longer than 255 bytes (a timer's name) throws a `DecodingError` (422 `invalid_action`).
        public init(from decoder: any Decoder) throws {
            let (type, container) = try decoder.actionContainer()
            switch type {
            case "remind":
                let text = try Self.text(container)
                let seconds = try container.decode(Int.self, forKey: WireKey("afterSeconds"))
                guard (1...RemindersReactor.maxAfterSeconds).contains(seconds) else {
                    throw DecodingError.dataCorruptedError(
                        forKey: WireKey("afterSeconds"), in: container,
                        debugDescription:
                            "afterSeconds must be 1 to \(RemindersReactor.maxAfterSeconds), got \(seconds)")
                }
                self = .remind(text: text, afterSeconds: seconds)
            case "cancel": self = .cancel(text: try Self.text(container))
            case "due": self = .due(text: try Self.text(container))
            default: throw container.unknownType(type, expected: Self.types)
            }
        }

        /// The `text` member: 1 to 255 bytes of UTF-8, since it names the reminder's timer.
        static func text(_ container: KeyedDecodingContainer<WireKey>) throws -> String {
            let text = try container.decode(String.self, forKey: WireKey("text"))
            guard (1...255).contains(text.utf8.count) else {
                throw DecodingError.dataCorruptedError(
                    forKey: WireKey("text"), in: container,
                    debugDescription: "text must be 1 to 255 bytes of UTF-8, got \(text.utf8.count)")
            }
            return text
        }

        /// Encodes the same `{"type": …}` shape it decodes.
        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .remind(let text, let seconds):
                var container = try encoder.actionContainer(type: "remind")
                try container.encode(text, forKey: WireKey("text"))
                try container.encode(seconds, forKey: WireKey("afterSeconds"))
            case .cancel(let text):
                var container = try encoder.actionContainer(type: "cancel")
                try container.encode(text, forKey: WireKey("text"))
            case .due(let text):
                var container = try encoder.actionContainer(type: "due")
                try container.encode(text, forKey: WireKey("text"))
            }
        }
    }

    /// A change of the lists.
    public enum Mutation: Codable, Sendable, Equatable {
        /// `text` is pending (once, however often it was asked for).
        case add(String)
        /// `text` is no longer pending.
        case remove(String)
        /// `text` fell due: it leaves `pending` and is appended to `fired`.
        case fire(String)
    }

    /// The reminders waiting, and those that fired, oldest first.
    public struct State: Codable, Sendable, Equatable {
        public var pending: [String]
        public var fired: [String]

        /// Lists holding `pending` and `fired`.
        public init(pending: [String] = [], fired: [String] = []) {
            self.pending = pending
            self.fired = fired
        }
    }

    /// `reminders`: the name the service hosts this reactor under.
    public static let name = "reminders"
    /// One line for the browser page.
    public static let summary = "Reminders that fire later as durable timers: watch one fire with curl."
    /// One JSON text per action a client may send, for buttons.
    public static let exampleActions = [
        #"{"type":"remind","text":"tea","afterSeconds":10}"#, #"{"type":"cancel","text":"tea"}"#,
    ]
    /// Its actions and state on the wire, for the OpenAPI document (`due` is the timers' own, not listed).
    public static let schema = ReactorSchema(
        actions: [
            .action(
                "remind", "Remind of text after afterSeconds (a text already pending is rescheduled).",
                ["text": .string(), "afterSeconds": .integer(minimum: 1, maximum: Int64(maxAfterSeconds))]),
            .action("cancel", "Forget the pending reminder of text.", ["text": .string()]),
        ],
        state: .object([
            "pending": JSONSchema.array(.string()).described("Reminders waiting for their time, oldest first."),
            "fired": JSONSchema.array(.string()).described("Reminders that fell due, in the order they fired."),
        ]).titled("RemindersState"))

    /// No reminders.
    public var initialState: State { State() }

    /// Reminders with nothing pending.
    public init() {}

    /// The timer's `due` is the one action clients may not send.
    public static func acceptsFromOutside(_ action: Action) -> Bool {
        if case .due = action { return false }
        return true
    }

    /// Schedules, cancels, or fires: each reminder's timer is named after its text.
    public func mutate(action: Action, state: State) -> Effect<Mutation> {
        switch action {
        case .remind(let text, let seconds):
            return .concat(.just(.add(text)), .schedule(text, after: .seconds(seconds), Action.due(text: text)))
        case .cancel(let text):
            return .concat(.just(.remove(text)), .cancelTimer(text))
        case .due(let text):
            // A timer fires once; a `due` for a text no longer pending (cancelled meanwhile) changes nothing.
            return state.pending.contains(text) ? .just(.fire(text)) : .none
        }
    }

    /// Folds one mutation into the lists.
    public func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        switch mutation {
        case .add(let text):
            if !state.pending.contains(text) { state.pending.append(text) }
        case .remove(let text):
            state.pending.removeAll { $0 == text }
        case .fire(let text):
            state.pending.removeAll { $0 == text }
            state.fired.append(text)
        }
        return state
    }
}
