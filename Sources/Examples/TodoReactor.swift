import JSONCodec
import Reactors

/// A todo list: add, toggle, remove, clear completed; an invalid request sets the `alert` pulse.
///
/// Actions on the wire: `{"type": "add", "title": "milk"}`, `{"type": "toggle", "id": 1}`,
/// `{"type": "remove", "id": 1}`, `{"type": "clearCompleted"}`.
/// State: `{"items": [{"id": 1, "title": "milk", "done": false}], "nextID": 2, "alert": null}`.
public struct TodoReactor: Reactor {
    /// What the list can be asked to do.
    public enum Action: Codable, Sendable, Equatable {
        /// Add an item titled `title` (blank titles raise the alert).
        case add(title: String)
        /// Mark the item done, or not done again.
        case toggle(id: Int)
        /// Delete the item.
        case remove(id: Int)
        /// Delete every done item.
        case clearCompleted

        /// Every case's wire name, in declaration order.
        public static let types = ["add", "toggle", "remove", "clearCompleted"]

        /// Decodes `{"type": "<case>", …payload}`; an unknown `type` or a bad payload throws a `DecodingError`.
        public init(from decoder: any Decoder) throws {
            let (type, container) = try decoder.actionContainer()
            switch type {
            case "add": self = .add(title: try container.decode(String.self, forKey: WireKey("title")))
            case "toggle": self = .toggle(id: try container.decode(Int.self, forKey: WireKey("id")))
            case "remove": self = .remove(id: try container.decode(Int.self, forKey: WireKey("id")))
            case "clearCompleted": self = .clearCompleted
            default: throw container.unknownType(type, expected: Self.types)
            }
        }

        /// Encodes the same `{"type": …}` shape it decodes.
        public func encode(to encoder: any Encoder) throws {
            switch self {
            case .add(let title):
                var container = try encoder.actionContainer(type: "add")
                try container.encode(title, forKey: WireKey("title"))
            case .toggle(let id):
                var container = try encoder.actionContainer(type: "toggle")
                try container.encode(id, forKey: WireKey("id"))
            case .remove(let id):
                var container = try encoder.actionContainer(type: "remove")
                try container.encode(id, forKey: WireKey("id"))
            case .clearCompleted:
                _ = try encoder.actionContainer(type: "clearCompleted")
            }
        }
    }

    /// One entry of the list.
    public struct Item: Codable, Sendable, Equatable {
        /// Unique within the list, never reused.
        public var id: Int
        /// What to do.
        public var title: String
        /// True once done.
        public var done: Bool

        /// An entry; new ones start not done.
        public init(id: Int, title: String, done: Bool = false) {
            self.id = id
            self.title = title
            self.done = done
        }
    }

    /// The list, the next id to hand out, and the last alert.
    public struct State: Codable, Sendable, Equatable {
        /// The items in the order they were added.
        public var items: [Item]
        /// The id the next added item gets.
        public var nextID: Int
        /// Why the last request was refused; sent to clients on every assignment, even of the same text.
        @Pulse public var alert: String?

        /// A list holding `items`.
        public init(items: [Item] = [], nextID: Int = 1, alert: String? = nil) {
            self.items = items
            self.nextID = nextID
            self._alert = Pulse(wrappedValue: alert)
        }
    }

    /// `todo`: the name the service hosts this reactor under.
    public static let name = "todo"
    /// One line for the browser page.
    public static let summary = "A todo list; invalid requests raise an alert pulse."
    /// One JSON text per action case, for buttons.
    public static let exampleActions = [
        #"{"type":"add","title":"Buy milk"}"#, #"{"type":"toggle","id":1}"#, #"{"type":"remove","id":1}"#,
        #"{"type":"clearCompleted"}"#,
    ]
    /// Its actions and state on the wire, for the OpenAPI document.
    public static let schema = ReactorSchema(
        actions: [
            .action("add", "Add an item (a blank title raises the alert).", ["title": .string()]),
            .action("toggle", "Mark the item done, or not done again.", ["id": .int]),
            .action("remove", "Delete the item.", ["id": .int]),
            .action("clearCompleted", "Delete every done item."),
        ],
        state: .object([
            "items": .array(.object(["id": .int, "title": .string(), "done": .boolean]).titled("TodoItem")),
            "nextID": JSONSchema.int.described("The id the next added item gets."),
            "alert": JSONSchema.string().orNull.described(
                "A pulse: why the last request was refused, sent on every assignment."),
        ]).titled("TodoState"))

    /// The state a new session starts with (computed: a stored copy would cost every session 8+ bytes).
    public var initialState: State { State() }

    /// An empty list.
    public init() {}

    /// Folds one mutation into the state.
    public func reduce(state: State, mutation: Action) -> State {
        var state = state
        switch mutation {
        case .add(let title):
            let title = title.trimmingWhitespace()
            guard !title.isEmpty else {
                state.alert = "A todo needs a title."
                return state
            }
            state.items.append(Item(id: state.nextID, title: title))
            state.nextID += 1
        case .toggle(let id):
            guard let index = state.items.firstIndex(where: { $0.id == id }) else {
                state.alert = "There is no todo with id \(id) to toggle."
                return state
            }
            state.items[index].done.toggle()
        case .remove(let id):
            guard let index = state.items.firstIndex(where: { $0.id == id }) else {
                state.alert = "There is no todo with id \(id) to remove."
                return state
            }
            state.items.remove(at: index)
        case .clearCompleted:
            guard state.items.contains(where: \.done) else {
                state.alert = "No todo is completed, so there is nothing to clear."
                return state
            }
            state.items.removeAll(where: \.done)
        }
        return state
    }
}

extension String {
    /// The string without leading and trailing spaces, tabs and newlines (Foundation-free).
    func trimmingWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0.isWhitespace }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else {
            return ""
        }
        return String(self[first...last])
    }
}
