import JSONCodec
import Reactors

/// The Fruit post's ReactorKit example: five fruit buttons; choosing one shows a spinner, and 500 ms later (on the
/// injected clock) the fruit's name, lowercase as the post's reducer sets it (the name of its image).
///
/// Actions on the wire, in the order of the post's buttons: `{"type": "apple"}`, `{"type": "grapes"}`,
/// `{"type": "banana"}`, `{"type": "cherries"}`, `{"type": "orange"}`;
/// state: `{"fruitName": "", "isLoading": false}`, then e.g. `{"fruitName": "cherries", "isLoading": false}`.
public struct FruitReactor: Reactor {
    /// A fruit button; its wire name is the name the state then shows.
    public enum Action: String, Codable, Sendable, Equatable, CaseIterable {
        /// Choose an apple.
        case apple
        /// Choose grapes.
        case grapes
        /// Choose a banana.
        case banana
        /// Choose cherries.
        case cherries
        /// Choose an orange.
        case orange

        /// Decodes `{"type": "<case>", …payload}`; an unknown `type` or a bad payload throws a `DecodingError`.
        public init(from decoder: any Decoder) throws {
            let (type, container) = try decoder.actionContainer()
            guard let action = Action(rawValue: type) else {
                throw container.unknownType(type, expected: Self.allCases.map(\.rawValue))
            }
            self = action
        }

        /// Encodes the same `{"type": …}` shape it decodes.
        public func encode(to encoder: any Encoder) throws {
            _ = try encoder.actionContainer(type: rawValue)
        }

        /// The name shown once the fruit is chosen: the post's lowercase name, the same as the action's.
        public var fruitName: String { rawValue }
    }

    /// A change to the screen.
    public enum Mutation: Codable, Sendable, Equatable {
        /// Show or hide the spinner.
        case setLoading(Bool)
        /// Show this fruit's name.
        case setFruitName(String)
    }

    /// What the screen shows.
    public struct State: Codable, Sendable, Equatable {
        /// The chosen fruit's lowercase name (`apple`, `grapes`, `banana`, `cherries` or `orange`); empty at first.
        public var fruitName: String
        /// True while a choice is in progress.
        public var isLoading: Bool

        /// A screen showing `fruitName`, with or without the spinner.
        public init(fruitName: String = "", isLoading: Bool = false) {
            self.fruitName = fruitName
            self.isLoading = isLoading
        }
    }

    /// `fruit`: the name the service hosts this reactor under.
    public static let name = "fruit"
    /// One line for the browser page.
    public static let summary =
        "Pick one of five fruits: a spinner shows for 500 ms, then its name (the Fruit post's ReactorKit example)."
    /// One JSON text per action case, for buttons.
    public static let exampleActions = Action.allCases.map { #"{"type":"\#($0.rawValue)"}"# }
    /// Its actions and state on the wire, for the OpenAPI document.
    public static let schema = ReactorSchema(
        actions: Action.allCases.map {
            .action($0.rawValue, "Choose \($0.rawValue): the spinner shows, then \"\($0.fruitName)\" after 500 ms.")
        },
        state: .object([
            "fruitName": JSONSchema.string().described(
                "The chosen fruit's lowercase name (apple, grapes, banana, cherries or orange); empty at first."),
            "isLoading": JSONSchema.boolean.described("True while a choice is in progress."),
        ]).titled("FruitState"))

    /// How long a choice takes.
    public static let loadingTime = Duration.milliseconds(500)

    /// The state a new session starts with (computed: a stored copy would cost every session 8+ bytes).
    public var initialState: State { State() }
    private let clock: any Clock<Duration>

    /// A fruit picker whose delay runs on `clock` (a test clock in tests).
    public init(clock: any Clock<Duration> = ContinuousClock()) {
        self.clock = clock
    }

    // Unlike ReactorKit's sample, a new choice cancels the one in flight, so a slow earlier choice can
    // neither overwrite the later fruit nor hide the spinner early.
    /// Turns an action into its effect.
    public func mutate(action: Action) -> Effect<Mutation> {
        Effect.concat([
            .just(.setLoading(true)),
            Effect.just(.setFruitName(action.fruitName)).delay(for: Self.loadingTime, clock: clock),
            .just(.setLoading(false)),
        ]).cancellable(id: "choice", cancelInFlight: true)
    }

    /// A choice a server stop cut off leaves no spinner behind (the previous fruit stays).
    public func recover(interrupted action: Action, state: State) -> [Mutation] {
        state.isLoading ? [.setLoading(false)] : []
    }

    /// Folds one mutation into the state.
    public func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        switch mutation {
        case .setLoading(let isLoading): state.isLoading = isLoading
        case .setFruitName(let name): state.fruitName = name
        }
        return state
    }
}
