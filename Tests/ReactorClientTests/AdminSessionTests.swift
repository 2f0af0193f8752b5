import Examples
import Foundation
import ReactorClient
import Testing

/// The admin API against a live server: listing, stub mode, forced states, the action log page by page, time
/// travel, forks, and the errors of each.
@Suite struct AdminSessionTests {
    @Test func aSessionACrashQuarantinedListsItsCrashedActionAndIsReleased() async throws {
        let server = try LiveServer()
        let client = server.client()
        let admin = client.admin(token: LiveServer.adminToken)
        let counter = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "crashed")
        for _ in 0..<2 { _ = try await counter.sendAndWait(.increase) }
        try await server.stop()
        // What the fatal-signal handler writes when the counter's reduce traps on the third action.
        let action = Data(#"{"type":"increase"}"#.utf8).base64EncodedString()
        let record =
            #"{"session":"crashed","reactor":"counter","phase":"reduce","seq":3,"version":3,"#
            + #""signal":"SIGILL","at":1790000002000000000,"pid":1,"thread":1,"actionBytes":19,"#
            + #""action64":"\#(action)"}"#
        let file = server.dataDirectory + "/crashes/crashed.1790000002000000000.1.crash"
        #expect(FileManager.default.createFile(atPath: file, contents: Data(record.utf8)))
        try server.start()

        let session = admin.session(for: counter)
        let log = try await session.allActions()
        #expect(log.map(\.seq) == [1, 2, 3])
        #expect(log.map(\.crashed) == [false, false, true])
        #expect(log.last?.action == .increase)
        do {
            _ = try await counter.get()
            Issue.record("a quarantined session answered")
        } catch {
            #expect(error.code == .sessionUnavailable)
        }
        #expect(try await session.release() == VersionedState(version: 2, state: .init(value: 2)))
        #expect(try await counter.sendAndWait(.increase).version == 3)
        #expect(try await session.allActions().map(\.crashed) == [false, false, false])
    }

    @Test func stubForceLogTimeTravelAndFork() async throws {
        let server = try LiveServer()
        let client = server.client()
        let admin = client.admin(token: LiveServer.adminToken)
        let counter = try await client.createSession(reactor: "counter", as: CounterReactor.self, id: "demo")
        for _ in 0..<3 { _ = try await counter.sendAndWait(.increase) }
        let demo = admin.session(for: counter)

        do {
            _ = try await demo.forceState(.init(value: 9))
            Issue.record("a state was forced outside stub mode")
        } catch {
            #expect(error.code == .stubDisabled)
        }
        #expect(try await demo.setStub(true))
        _ = try await counter.sendAndWait(.decrease)
        #expect(try await demo.forceState(.init(value: 100)) == VersionedState(version: 4, state: .init(value: 100)))
        #expect(try await counter.get() == VersionedState(version: 4, state: .init(value: 100)))
        #expect(try await demo.setStub(false) == false)

        let summary = try #require(try await admin.sessions().first { $0.id == "demo" })
        #expect(summary.reactor == "counter")
        #expect(summary.version == 4)
        #expect(summary.stub == false)
        #expect(summary.resident)

        let first = try await demo.actions(limit: 2)
        #expect(first.entries.map(\.seq) == [1, 2])
        #expect(first.entries.map(\.action) == [.increase, .increase])
        #expect(first.next == 2)
        let rest = try await demo.actions(since: 2, limit: 2)
        #expect(rest.entries.map(\.seq) == [3, 4])
        #expect(rest.entries.map(\.stubbed) == [false, true])
        #expect(rest.entries.last?.action == .decrease)
        #expect(rest.entries.last?.json == ["type": "decrease"])
        let all = try await demo.allActions(pageSize: 1)
        #expect(all.map(\.seq) == [1, 2, 3, 4])
        // The server runs on a manual clock that stands at 1 790 000 001 s since 1970 until a test moves it.
        #expect(all.map(\.at) == Array(repeating: Date(timeIntervalSince1970: 1_790_000_001), count: 4))

        #expect(try await demo.state(atVersion: 2) == VersionedState(version: 2, state: .init(value: 2)))
        do {
            _ = try await demo.state(atVersion: 99)
            Issue.record("a future version answered")
        } catch {
            guard case .server(404, .unknownVersion, let message) = error else {
                Issue.record("got \(error)")
                return
            }
            #expect(message.contains("99"))
        }

        let branch = try await demo.fork(atVersion: 2, id: "branch")
        #expect(branch.id == "branch")
        #expect(branch.created == VersionedState(version: 2, state: .init(value: 2)))
        #expect(try await branch.sendAndWait(.increase).reduced == VersionedState(version: 3, state: .init(value: 3)))
    }

    @Test func aWrongAdminTokenIsUnauthorized() async throws {
        let server = try LiveServer()
        let admin = server.client().admin(token: "not-the-token")
        do {
            _ = try await admin.sessions()
            Issue.record("a wrong admin token was accepted")
        } catch {
            #expect(error.code == .unauthorized)
            #expect(!error.isTransient)
        }
    }

    @Test func aMemoryOnlyServerCannotTravelInTime() async throws {
        let server = try LiveServer { $0.storage.memoryOnly = true }
        let client = server.client()
        let counter = try await client.createSession(reactor: "counter", as: CounterReactor.self)
        do {
            _ = try await client.admin(token: LiveServer.adminToken).session(for: counter).state(atVersion: 0)
            Issue.record("a memory-only server answered time travel")
        } catch {
            #expect(error.code == .memoryOnly)
        }
    }
}
