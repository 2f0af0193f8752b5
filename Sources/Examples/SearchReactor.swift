import JSONCodec
import Reactors

/// ReactorKit's GitHubSearch example: typing a query searches through an injected fetch function, cancelling
/// the search in flight; `loadNextPage` appends the next page. A response for a stale query never lands.
///
/// Actions on the wire: `{"type": "updateQuery", "query": "swift"}`, `{"type": "loadNextPage"}`.
/// State: `{"query": "swift", "items": ["apple/swift"], "nextPage": 2, "isLoading": false}`, plus
/// `"error": "…"` while the latest search of the current query failed (the page shows it).
public struct SearchReactor: Reactor {
    /// Fetches one page of results for a query: the items and the next page's number, if any.
    public typealias Fetch = @Sendable (_ query: String, _ page: Int) async throws -> (items: [String], nextPage: Int?)

    /// What the search screen can be asked to do.
    public enum Action: Codable, Sendable, Equatable {
        /// Search for this text (nil or empty clears the results).
        case updateQuery(String?)
        /// Append the next page of the current query, if there is one and nothing is loading.
        case loadNextPage

        /// Every case's wire name, in declaration order.
        public static let types = ["updateQuery", "loadNextPage"]

        /// Decodes `{"type": "<case>", …payload}`; an unknown `type` or a bad payload throws a `DecodingError`.
        public init(from decoder: any Decoder) throws {
            let (type, container) = try decoder.actionContainer()
            switch type {
            case "updateQuery":
                self = .updateQuery(try container.decodeIfPresent(String.self, forKey: WireKey("query")))
            case "loadNextPage": self = .loadNextPage
            default: throw container.unknownType(type, expected: Self.types)
            }
        }

        /// Encodes the same `{"type": …}` shape it decodes.
        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .updateQuery(let query):
                var container = try encoder.actionContainer(type: "updateQuery")
                try container.encodeIfPresent(query, forKey: WireKey("query"))
            case .loadNextPage:
                _ = try encoder.actionContainer(type: "loadNextPage")
            }
        }
    }

    /// A change to the screen; results carry their query so a stale one is ignored.
    public enum Mutation: Codable, Sendable, Equatable {
        /// The query being searched.
        case setQuery(String?)
        /// Show or hide the spinner.
        case setLoading(Bool)
        /// The first page of `query`'s results.
        case setResults(query: String, items: [String], nextPage: Int?)
        /// A further page of `query`'s results.
        case appendResults(query: String, items: [String], nextPage: Int?)
        /// Searching `query` failed: why, for the screen.
        case failed(query: String, message: String)
    }

    /// What the screen shows.
    public struct State: Codable, Sendable, Equatable {
        /// The text searched for; nil before the first query.
        public var query: String?
        /// The results so far, page after page.
        public var items: [String]
        /// The page `loadNextPage` fetches; nil when there is none.
        public var nextPage: Int?
        /// True while a page is being fetched.
        public var isLoading: Bool
        /// Why the latest search of `query` failed; nil after a success or a new query.
        public var error: String?

        /// A screen with the given query and results.
        public init(
            query: String? = nil, items: [String] = [], nextPage: Int? = nil, isLoading: Bool = false,
            error: String? = nil
        ) {
            self.query = query
            self.items = items
            self.nextPage = nextPage
            self.isLoading = isLoading
            self.error = error
        }
    }

    /// `search`: the name the service hosts this reactor under.
    public static let name = "search"
    /// One line for the browser page.
    public static let summary =
        "Search repositories as you type; a new query cancels the one in flight (ReactorKit's GitHubSearch)."
    /// One JSON text per action case, for buttons.
    public static let exampleActions = [#"{"type":"updateQuery","query":"swift"}"#, #"{"type":"loadNextPage"}"#]
    /// Its actions and state on the wire, for the OpenAPI document. Optional state members are left out
    /// when nil (synthesized `Codable`), and may be left out of a forced state.
    public static let schema = ReactorSchema(
        actions: [
            .action(
                "updateQuery",
                "Search for this text, cancelling the search in flight (null, empty or left out clears the results).",
                ["query": JSONSchema.string().orNull], optional: ["query"]),
            .action(
                "loadNextPage", "Append the next page of the current query, if there is one and nothing is loading."),
        ],
        state: .object(
            [
                "query": JSONSchema.string().orNull.described(
                    "The text searched for; left out before the first query."),
                "items": JSONSchema.array(.string()).described("The results so far, page after page."),
                "nextPage": JSONSchema.int.orNull.described(
                    "The page loadNextPage fetches; left out when there is none."),
                "isLoading": JSONSchema.boolean.described("True while a page is being fetched."),
                "error": JSONSchema.string().orNull.described(
                    "Why the latest search of the query failed; left out after a success or a new query."),
            ],
            optional: ["query", "nextPage", "error"]
        ).titled("SearchState"))

    /// The state a new session starts with (computed: a stored copy would cost every session 8+ bytes).
    public var initialState: State { State() }
    private let fetch: Fetch

    /// A search screen that fetches through `fetch` (default: `SearchReactor.sampleFetch`, no network).
    public init(fetch: @escaping Fetch = SearchReactor.sampleFetch) {
        self.fetch = fetch
    }

    /// Turns an action into its effect.
    public func mutate(action: Action, state: State) -> Effect<Mutation> {
        switch action {
        case .updateQuery(let query):
            guard let query, !query.isEmpty else {
                return Effect.concat([
                    .just(.setQuery(query)), .just(.setResults(query: query ?? "", items: [], nextPage: nil)),
                ])
                .cancellable(id: SearchID(), cancelInFlight: true)
            }
            return Effect.concat([
                .just(.setQuery(query)), .just(.setLoading(true)), search(query, page: 1, append: false),
            ])
            .cancellable(id: SearchID(), cancelInFlight: true)
        case .loadNextPage:
            guard !state.isLoading, let query = state.query, let page = state.nextPage else { return .none }
            return Effect.concat([.just(.setLoading(true)), search(query, page: page, append: true)])
                .cancellable(id: SearchID())
        }
    }

    /// A search a server stop cut off ends as a failed one, so the page stops spinning and says so.
    public func recover(interrupted action: Action, state: State) -> [Mutation] {
        guard state.isLoading else { return [] }
        let message = "the search was cut off when the server stopped; search again"
        return [.failed(query: state.query ?? "", message: message)]
    }

    /// Fetches one page; on failure puts the reason into the state and reports the error (the
    /// reactor lives on).
    private func search(_ query: String, page: Int, append: Bool) -> Effect<Mutation> {
        .run { [fetch] emit in
            do {
                let result = try await fetch(query, page)
                await emit(
                    append
                        ? .appendResults(query: query, items: result.items, nextPage: result.nextPage)
                        : .setResults(query: query, items: result.items, nextPage: result.nextPage))
            } catch {
                if !(error is CancellationError) && !Task.isCancelled {
                    await emit(.failed(query: query, message: "\(error)"))
                }
                throw error
            }
        }
    }

    /// Folds one mutation into the state.
    public func reduce(state: State, mutation: Mutation) -> State {
        var state = state
        switch mutation {
        case .setQuery(let query):
            state.query = query
            state.error = nil
        case .setLoading(let isLoading):
            state.isLoading = isLoading
        case .setResults(let query, let items, let nextPage):
            guard query == (state.query ?? "") else { return state }
            state.items = items
            state.nextPage = nextPage
            state.isLoading = false
            state.error = nil
        case .appendResults(let query, let items, let nextPage):
            guard query == state.query else { return state }
            state.items += items
            state.nextPage = nextPage
            state.isLoading = false
            state.error = nil
        case .failed(let query, let message):
            guard query == state.query else { return state }
            state.isLoading = false
            state.error = message
        }
        return state
    }

    /// The cancellation id shared by every search of one reactor.
    private struct SearchID: Hashable, Sendable {}
}
