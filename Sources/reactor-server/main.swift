import Examples
import Foundation
import HostedExamples
import SessionService

// reactor-server: the example reactors behind the full command line (see --help).
let status = ReactorServerCommand.run(arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment) { configuration in
    let search = GitHubSearchClient(
        baseURL: configuration.search.baseURL, timeout: configuration.search.timeoutSeconds,
        maxConcurrent: configuration.search.maxConcurrentRequests, maxQueued: configuration.search.maxQueuedRequests)
    var catalog = ReactorCatalog()
    ExampleCatalog.register(in: &catalog, search: search.search)
    return catalog
}
exit(status)
