/// What a reactor's JSON looks like on the wire: each action case, `{"type": "<case>", …payload}`, and the
/// state. The reactor's author declares it where the reactor is registered; the server's OpenAPI document
/// describes the reactor's actions and states with it, so it must say exactly what the reactor's `Codable`
/// accepts and writes (a test checks the examples against it, and a fuzzer checks the rest).
///
/// ```swift
/// let schema = ReactorSchema(
///     actions: [.action("add", "Add an item.", ["title": .string()]), .action("clear", "Remove every item.")],
///     state: .object(["items": .array(.string())]))
/// ```
public struct ReactorSchema: Sendable, Hashable {
    /// One action case: its `type` and the members of its payload.
    public struct Action: Sendable, Hashable {
        /// The value of `"type"` that names the case.
        public var type: String
        /// What the action does, one sentence.
        public var summary: String
        /// The payload members in order, each with its schema.
        public var payload: [Member]
        /// Payload members that may be left out (a Swift optional decoded with `decodeIfPresent`).
        public var optional: Set<String>

        /// A payload member: its name and schema.
        public struct Member: Sendable, Hashable {
            /// The member's name.
            public var name: String
            /// What its value may be.
            public var schema: JSONSchema
        }

        /// An action case named `type`, with payload members in order; all are required but those in `optional`.
        public static func action(
            _ type: String, _ summary: String = "", _ payload: KeyValuePairs<String, JSONSchema> = [:],
            optional: Set<String> = []
        ) -> Action {
            Action(
                type: type, summary: summary, payload: payload.map { Member(name: $0.key, schema: $0.value) },
                optional: optional)
        }

        /// The whole action object: `"type"` fixed to this case, the payload members, other members
        /// allowed (a decoder ignores members it does not read).
        public var schema: JSONSchema {
            var properties = JSONObject([("type", JSONSchema.constant(.string(type)).json)])
            for member in payload { properties[member.name] = member.schema.json }
            let required = ["type"] + payload.map(\.name).filter { !optional.contains($0) }
            var object = JSONObject([("type", "object"), ("title", .string(type))])
            if !summary.isEmpty { object["description"] = .string(summary) }
            object["required"] = .array(required.map(JSONValue.string))
            object["properties"] = .object(properties)
            return JSONSchema(.object(object))
        }
    }

    /// Every action case, in the order a client would list them.
    public var actions: [Action]
    /// The state, as `GET /sessions/{id}` and the event stream send it and `PUT …/state` takes it.
    public var state: JSONSchema
    /// The parameters its sessions take (`"params"` of `POST /sessions`); nil for a reactor that takes none.
    public var params: JSONSchema?

    /// A reactor's actions and state, and the parameters its sessions take, if any.
    public init(actions: [Action], state: JSONSchema, params: JSONSchema? = nil) {
        self.actions = actions
        self.state = state
        self.params = params
    }

    /// The action cases, by their `type`.
    public func action(named type: String) -> Action? {
        actions.first { $0.type == type }
    }

    /// Any action: exactly one of the cases, told apart by `"type"`.
    public var actionSchema: JSONSchema {
        .oneOf(actions.map(\.schema))
    }

    /// The schema of an action of a reactor that declares none: an object naming its case in `"type"`.
    public static let genericAction = JSONSchema.object([
        "type": JSONSchema.string().described("The action case; the other members are its payload.")
    ])
    .titled("Action", "An action whose cases the reactor did not declare: an object whose \"type\" names the case.")

    /// The schema of a state a reactor does not describe: any JSON value.
    public static let genericState = JSONSchema.any.titled(
        "State", "A state the reactor did not describe: any JSON value.")
}
