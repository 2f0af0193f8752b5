/// Every example reactor's name, summary and example actions, for the service's listing and browser page.
public enum ExampleCatalog {
    /// One hosted example: its name, a line describing it, and one JSON text per action case.
    public struct Entry: Sendable {
        /// The name sessions use, e.g. `counter`.
        public var name: String
        /// One line describing it.
        public var summary: String
        /// One JSON action text per action case.
        public var exampleActions: [String]
    }

    /// The four examples, in the order a page shows them.
    public static let entries: [Entry] = [
        Entry(name: CounterReactor.name, summary: CounterReactor.summary, exampleActions: CounterReactor.exampleActions),
        Entry(name: FruitReactor.name, summary: FruitReactor.summary, exampleActions: FruitReactor.exampleActions),
        Entry(name: TodoReactor.name, summary: TodoReactor.summary, exampleActions: TodoReactor.exampleActions),
        Entry(name: SearchReactor.name, summary: SearchReactor.summary, exampleActions: SearchReactor.exampleActions),
    ]
}
