import JSONCodec
import Reactors

/// ReactorKit's README example, `ProfileViewReactor`, hosted: one session per profile screen of one user,
/// given the user's id as its parameter. Each action sets `isLoading`, asks the user service (shared by
/// every session, with latency on the injected clock), then shows its answer.
///
/// Params: `{"userID": 7}` (≥ 1). Actions on the wire: `{"type": "refreshFollowingStatus"}`,
/// `{"type": "follow"}`, `{"type": "unfollow"}`; state: `{"userID": 7, "isFollowing": false, "isLoading": false}`.
public struct ProfileReactor: Reactor {
    /// What a profile session is given: whose profile it shows.
    public struct Params: Codable, Sendable, Equatable {
        /// The user whose profile this is; at least 1.
        public var userID: Int

        /// Parameters for the profile of `userID`.
        public init(userID: Int) { self.userID = userID }

        /// Decodes `{"userID": N}`, refusing an id below 1 (the message names the field).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            userID = try container.decode(Int.self, forKey: .userID)
            guard userID >= 1 else {
                throw DecodingError.dataCorruptedError(
                    forKey: .userID, in: container, debugDescription: "a user id is at least 1, got \(userID)")
            }
        }
    }

    /// What the profile screen can ask for (ReactorKit's example passes the user id in each action; here the
    /// session knows it from its params).
    public enum Action: String, Codable, Sendable, Equatable, CaseIterable {
        /// Ask the user service whether this user is followed.
        case refreshFollowingStatus
        /// Follow this user.
        case follow
        /// Stop following this user.
        case unfollow

        /// Decodes `{"type": "<case>"}`; an unknown `type` throws a `DecodingError`.
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
    }

    /// A change to the screen.
    public enum Mutation: Codable, Sendable, Equatable {
        /// Show or hide the spinner.
        case setLoading(Bool)
        /// Show the user service's answer.
        case setFollowing(Bool)
    }

    /// What the profile screen shows.
    public struct State: Codable, Sendable, Equatable {
        /// Whose profile it is (from the session's params).
        public var userID: Int
        /// Whether this user is followed, as the user service last said.
        public var isFollowing: Bool
        /// True while the user service is asked.
        public var isLoading: Bool

        /// The screen of `userID`.
        public init(userID: Int, isFollowing: Bool = false, isLoading: Bool = false) {
            self.userID = userID
            self.isFollowing = isFollowing
            self.isLoading = isLoading
        }
    }

    /// `profile`: the name the service hosts this reactor under.
    public static let name = "profile"
    /// One line for the browser page.
    public static let summary =
        "One user's profile (ReactorKit's ProfileViewReactor): follow, unfollow or refresh through a user service "
        + "with latency; create it with params {\"userID\": N}."
    /// One JSON text per action case, for buttons.
    public static let exampleActions = Action.allCases.map { #"{"type":"\#($0.rawValue)"}"# }
    /// The parameters the page offers when creating a session.
    public static let exampleParams = Params(userID: 1)
    /// Its params, actions and state on the wire, for the OpenAPI document.
    public static let schema = ReactorSchema(
        actions: [
            .action("refreshFollowingStatus", "Ask the user service whether this user is followed; shows the answer."),
            .action("follow", "Follow this user through the user service; shows the answer."),
            .action("unfollow", "Stop following this user through the user service; shows the answer."),
        ],
        state: .object([
            "userID": JSONSchema.int.described("Whose profile it is (the session's params)."),
            "isFollowing": JSONSchema.boolean.described("Whether this user is followed, as the user service said."),
            "isLoading": JSONSchema.boolean.described("True while the user service is asked."),
        ]).titled("ProfileState"),
        params: .object([
            "userID": JSONSchema.int.adding("minimum", 1).described("The user whose profile the session shows.")
        ]).titled("ProfileParams"))

    /// The session this reactor runs in: its params and logger.
    public let context: ReactorContext<ProfileReactor, Params>
    private let users: FakeUserService

    /// The profile of `context.params.userID`, asking `users`.
    public init(context: ReactorContext<ProfileReactor, Params>, users: FakeUserService) {
        self.context = context
        self.users = users
    }

    /// Not following, not loading.
    public var initialState: State { State(userID: context.params.userID) }

    /// Sets the spinner, asks the user service, shows its answer; a later request replaces one in flight.
    public func mutate(action: Action) -> Effect<Mutation> {
        let userID = context.params.userID
        let (users, logger) = (self.users, context.logger)
        let ask = Effect<Mutation>.run { emit in
            let following: Bool
            switch action {
            case .refreshFollowingStatus: following = try await users.isFollowing(userID)
            case .follow: following = try await users.follow(userID)
            case .unfollow: following = try await users.unfollow(userID)
            }
            logger.debug("the user service answered", ["action": action.rawValue, "isFollowing": "\(following)"])
            await emit(.setFollowing(following))
        }
        return Effect.concat([.just(.setLoading(true)), ask, .just(.setLoading(false))])
            .cancellable(id: "userService", cancelInFlight: true)
    }

    /// A request a server stop cut off leaves no spinner behind.
    public func recover(interrupted action: Action, state: State) -> [Mutation] {
        state.isLoading ? [.setLoading(false)] : []
    }

    /// Folds one mutation into the state.
    public func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        switch mutation {
        case .setLoading(let isLoading): state.isLoading = isLoading
        case .setFollowing(let isFollowing): state.isFollowing = isFollowing
        }
        return state
    }
}
