// swift-format-ignore-file
// (a test holds this file to the documentation line for line, so it keeps the layout the docs show)
// README.md's first Swift client example.
import Examples
import Foundation
import ReactorClient

func addMilk() async throws {
    let client = ReactorClient(baseURL: URL(string: "http://127.0.0.1:8080")!)
    let todo = try await client.createSession(reactor: "todo", as: TodoReactor.self)
    try await todo.send(.add(title: "milk"))                 // 202: queued, returns its seq
    let result = try await todo.sendAndWait(.toggle(id: 1))  // ?wait=true: the version and state once reduced
    print(result.version, result.state.items)
    for try await update in todo.states() {                  // the current state, then each new one
        print(update.version, update.state.items)
    }
}
