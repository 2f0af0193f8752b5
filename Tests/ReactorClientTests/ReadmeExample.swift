// swift-format-ignore-file
// (a test holds this file to the documentation line for line, so it keeps the layout the docs show)
// UsingTheClient.md's Swift client example (ReactorClient catalog), compiled here; ReadmeExampleTests keeps both equal.
import Examples
import Observation
import ReactorClient

@Observable @MainActor
final class TodoListModel {
    private(set) var items: [TodoReactor.Item]
    private(set) var alert: String?
    private(set) var status = "connecting …"
    private let reactor: RemoteReactor<TodoReactor>

    init(reactor: RemoteReactor<TodoReactor>) {
        self.reactor = reactor
        items = reactor.currentState.items
    }

    func add(_ title: String) { reactor.send(.add(title: title)) }
    func toggle(_ item: TodoReactor.Item) { reactor.send(.toggle(id: item.id)) }

    /// Runs while the view is shown: `.task { await model.run() }`.
    func run() async {
        async let states: Void = followStates()
        async let alerts: Void = followAlerts()
        async let connection: Void = followConnection()
        _ = await (states, alerts, connection)
    }

    private func followStates() async {
        for await state in reactor.state { items = state.items }
    }

    private func followAlerts() async {
        for await alert in reactor.pulse(\.$alert) { self.alert = alert }
    }

    private func followConnection() async {
        for await connection in reactor.connection {
            status = connection.isConnected ? "live" : connection.description
        }
    }
}

// let session = try await client.createSession(reactor: "todo", as: TodoReactor.self)
// let model = TodoListModel(reactor: try await RemoteReactor(session))
