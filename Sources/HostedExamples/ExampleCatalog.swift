import Examples
import SessionService

/// The example reactors as a server hosts them, registered here once for `reactor-server` and every test
/// server: counter, fruit, profile, todo, reminders, and search when it is given an upstream; with the search
/// example's settings
/// (``SearchSettings``), which the examples add to the server's own.
///
/// ```swift
/// exit(ReactorServerCommand.run(arguments: CommandLine.arguments, environment: environment,
///                               settings: ExampleCatalog.settings) { configuration in
///     var catalog = ReactorCatalog()
///     ExampleCatalog.register(in: &catalog, search: configuration[section: .search].client().search)
///     return catalog
/// })
/// ```
public enum ExampleCatalog {
    /// Adds the examples to `catalog`, in the order a page shows them: fruit and profile's user service wait on
    /// `clock` (a test's injected clock), and search, fetching its results through `search`, only when one is given.
    public static func register(
        in catalog: inout ReactorCatalog, clock: any Clock<Duration> = ContinuousClock(),
        search: SearchReactor.Fetch? = nil
    ) {
        catalog.register(
            CounterReactor.name, summary: CounterReactor.summary, exampleActions: CounterReactor.exampleActions,
            schema: CounterReactor.schema
        ) { CounterReactor() }
        catalog.register(
            FruitReactor.name, summary: FruitReactor.summary, exampleActions: FruitReactor.exampleActions,
            schema: FruitReactor.schema
        ) { FruitReactor(clock: clock) }
        let users = FakeUserService(clock: clock)
        catalog.register(
            ProfileReactor.name, summary: ProfileReactor.summary, exampleActions: ProfileReactor.exampleActions,
            schema: ProfileReactor.schema, params: ProfileReactor.Params.self,
            exampleParams: ProfileReactor.exampleParams
        ) { context in ProfileReactor(context: context, users: users) }
        catalog.register(
            TodoReactor.name, summary: TodoReactor.summary, exampleActions: TodoReactor.exampleActions,
            schema: TodoReactor.schema
        ) { TodoReactor() }
        catalog.register(
            RemindersReactor.name, summary: RemindersReactor.summary, exampleActions: RemindersReactor.exampleActions,
            schema: RemindersReactor.schema
        ) { RemindersReactor() }
        if let search {
            catalog.register(
                SearchReactor.name, summary: SearchReactor.summary, exampleActions: SearchReactor.exampleActions,
                schema: SearchReactor.schema
            ) { SearchReactor(fetch: search) }
        }
    }

    /// The settings the examples add to the server's: the search example's (`search.*`).
    public static let settings: [ConfigurationSetting] = SearchSettings.settings

    /// The server's settings and the examples': what `reactor-server` reads, lists in `--help` and prints.
    public static let configurationSchema = ConfigurationSchema.server.adding(settings)
}
