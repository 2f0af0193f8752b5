import Examples
import Foundation
import Reactors
import SessionService

// reactor-server: the example reactors behind the full command line (see --help).
let status = ReactorServerCommand.run(arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment) { configuration in
    let search = GitHubSearchClient(
        baseURL: configuration.search.baseURL, timeout: configuration.search.timeoutSeconds,
        maxConcurrent: configuration.search.maxConcurrentRequests, maxQueued: configuration.search.maxQueuedRequests)
    var catalog = ReactorCatalog()
    catalog.register(CounterReactor.name, summary: CounterReactor.summary, exampleActions: CounterReactor.exampleActions, schema: CounterReactor.schema) { CounterReactor() }
    catalog.register(FruitReactor.name, summary: FruitReactor.summary, exampleActions: FruitReactor.exampleActions, schema: FruitReactor.schema) { FruitReactor(clock: ContinuousClock()) }
    catalog.register(TodoReactor.name, summary: TodoReactor.summary, exampleActions: TodoReactor.exampleActions, schema: TodoReactor.schema) { TodoReactor() }
    catalog.register(SearchReactor.name, summary: SearchReactor.summary, exampleActions: SearchReactor.exampleActions, schema: SearchReactor.schema) {
        SearchReactor(fetch: search.search)
    }
    return catalog
}
exit(status)
