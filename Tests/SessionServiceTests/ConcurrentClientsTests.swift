import Foundation
import ReactorServerTesting
import Synchronization
import Testing

/// 100 concurrent clients, each creating a session and sending 100 actions with `?wait=true`.
@Suite(.offThePool) struct ConcurrentClientsTests {
    @Test func everyFinalStateIsExactAndEveryLogInOrder() async throws {
        let server = try TestServer { $0.http.loops = 2 }
        let port = server.port
        let clients = 100
        let actions = 100
        let failures = Mutex<[String]>([])
        let finished = DispatchGroup()
        for client in 0..<clients {
            finished.enter()
            Thread.detachNewThread {
                defer { finished.leave() }
                do {
                    let connection = try TestClient(port: port)
                    let id = "client-\(client)"
                    guard
                        try connection.request("POST", "/sessions", body: #"{"reactor":"counter","id":"\#(id)"}"#)
                            .status == 201
                    else {
                        throw TestFailure("\(id): create failed")
                    }
                    var value = 0
                    for index in 1...actions {
                        // A pattern that differs per client: increases, with every (client % 5 + 2)th a decrease.
                        let decrease = index % (client % 5 + 2) == 0
                        value += decrease ? -1 : 1
                        let response = try connection.request(
                            "POST", "/sessions/\(id)/actions?wait=true",
                            body: decrease ? #"{"type":"decrease"}"# : #"{"type":"increase"}"#)
                        let body = try response.json()
                        guard body["seq"] as? Int == index, body["version"] as? Int == index,
                            (body["state"] as? [String: Any])?["value"] as? Int == value
                        else { throw TestFailure("\(id) action \(index): \(response.text)") }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        let done = try await offPool {
            finished.wait(timeout: .now() + .seconds(Int(defaultBound.components.seconds) * 4))
        }
        try #require(done == .success, "the clients did not finish within \(defaultBound * 4)")
        #expect(failures.withLock { $0 } == [])

        let admin = try server.connect()
        for client in 0..<clients {
            let id = "client-\(client)"
            let log = try admin.request("GET", "/admin/sessions/\(id)/actions", headers: server.admin).json()
            let entries = try #require(log["actions"] as? [[String: Any]])
            #expect(entries.map { $0["seq"] as? Int } == (1...actions).map { $0 })
            let types = entries.map { ($0["action"] as? [String: Any])?["type"] as? String }
            #expect(types == (1...actions).map { $0 % (client % 5 + 2) == 0 ? "decrease" : "increase" })
            let expected = (1...actions).reduce(0) { $0 + ($1 % (client % 5 + 2) == 0 ? -1 : 1) }
            let session = try admin.request("GET", "/sessions/\(id)").json()
            #expect((session["state"] as? [String: Any])?["value"] as? Int == expected)
            #expect(session["version"] as? Int == actions)
        }
    }
}
