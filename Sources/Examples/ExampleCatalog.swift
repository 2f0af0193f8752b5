import JSONCodec

/// Every example reactor's name, summary, example actions and wire schema, for the service's listing,
/// browser page and OpenAPI document.
public enum ExampleCatalog {
    /// One hosted example: its name, a line describing it, and one JSON text per action case.
    public struct Entry: Sendable {
        /// The name sessions use, e.g. `counter`.
        public var name: String
        /// One line describing it.
        public var summary: String
        /// One JSON action text per action case.
        public var exampleActions: [String]
        /// Its actions and state on the wire.
        public var schema: ReactorSchema
    }

    /// The four examples, in the order a page shows them.
    public static let entries: [Entry] = [
        Entry(name: CounterReactor.name, summary: CounterReactor.summary, exampleActions: CounterReactor.exampleActions, schema: CounterReactor.schema),
        Entry(name: FruitReactor.name, summary: FruitReactor.summary, exampleActions: FruitReactor.exampleActions, schema: FruitReactor.schema),
        Entry(name: TodoReactor.name, summary: TodoReactor.summary, exampleActions: TodoReactor.exampleActions, schema: TodoReactor.schema),
        Entry(name: SearchReactor.name, summary: SearchReactor.summary, exampleActions: SearchReactor.exampleActions, schema: SearchReactor.schema),
    ]
}
