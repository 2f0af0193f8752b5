import Foundation
import HostedExamples
import SessionService

// reactor-server: the example reactors behind the full command line (see --help).
let status = ReactorServerCommand.run(
    arguments: CommandLine.arguments, environment: ProcessInfo.processInfo.environment,
    settings: ExampleCatalog.settings
) { configuration in
    var catalog = ReactorCatalog()
    ExampleCatalog.register(in: &catalog, search: configuration[section: .search].client().search)
    return catalog
}
exit(status)
