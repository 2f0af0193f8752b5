import Foundation
import ReactorServerTesting
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// A trap in one session's reactor code is that session's problem only: the process dies as before (the
/// signal, the backtrace), and from the next start the session is quarantined with the crash named, every
/// other session serves, and an operator reads its action log, forks it, releases or deletes it. Each test
/// crashes a real `reactor-server-traps` process (the server's own command line hosting reactors that trap
/// on purpose) and restarts it on the same storage.
@Suite(.offThePool) struct CrashQuarantineTests {
    static let token = "crash-quarantine-token"
    static let admin = [("Authorization", "Bearer \(token)")]

    /// The reactors' traps end the process with SIGILL (x86-64's ud2) or SIGTRAP (arm64's brk).
    static let trapSignals: Set<Int32> = [SIGILL, SIGTRAP]

    /// A trap server on `place` whose `reduce` traps when a value reaches `trapAt`; the crash folder is in
    /// `dataDirectory` (the file journal's own folder when the place has one). `backtrace: false` skips the
    /// Swift runtime's backtrace (a second of symbolication per crash).
    static func start(
        _ place: StoragePlace, trapAt: Int = 3, backtrace: Bool = false, environment: [String: String] = [:]
    ) async throws -> ServerProcess {
        var variables = ["REACTOR_ADMIN_TOKEN": token, "TRAP_AT": String(trapAt)]
        if !backtrace { variables["SWIFT_BACKTRACE"] = "enable=no" }
        variables.merge(environment) { _, new in new }
        return try await ServerProcess.start(
            "reactor-server-traps", arguments: place.arguments, environment: variables, label: "reactor-server"
        )
    }

    /// Sends the request that traps and waits for the server to die of the trap; returns its standard error.
    static func crash(
        _ server: ServerProcess, _ method: String, _ path: String, headers: [(String, String)] = [], body: String? = nil
    ) async throws -> String {
        let client = try server.client()
        _ = try? client.request(method, path, headers: headers, body: body)
        let end: TestProcess.Termination
        do {
            end = try await server.process.waitForExit()
        } catch {
            throw TestFailure("\(error); its standard error: \(server.standardError)")
        }
        guard case .signalled(let signal) = end, trapSignals.contains(signal) else {
            throw TestFailure(
                "the server was to die of a trap, it ended with \(end); its standard error: \(server.standardError)")
        }
        return server.standardError
    }

    /// The records in the place's crash folder (`<storage.dataDir>/crashes`).
    static func crashFiles(_ place: StoragePlace) -> [String] {
        let folder = (place.dataDirectory ?? "data") + "/crashes"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".crash") }
    }

    /// The action log of session `id` as the server wrote it.
    static func actionsText(_ client: TestClient, _ id: String) throws -> String {
        try client.request("GET", "/admin/sessions/\(id)/actions", headers: admin).text
    }

    /// The admin listing's entry of session `id`.
    static func listed(_ client: TestClient, _ id: String) throws -> [String: Any]? {
        let sessions =
            try client.request("GET", "/admin/sessions", headers: admin).json()["sessions"] as? [[String: Any]]
        return sessions?.first { $0["id"] as? String == id }
    }

    /// `reactor_sessions_quarantined` on `/metrics`.
    static func quarantinedGauge(_ client: TestClient) throws -> Int? {
        let text = try client.request("GET", "/metrics").text
        let line = text.split(separator: "\n").first { $0.hasPrefix("reactor_sessions_quarantined ") }
        return line.flatMap { Int($0.split(separator: " ").last ?? "") }
    }

    /// The action log of session `id`.
    static func actions(_ client: TestClient, _ id: String) throws -> [[String: Any]] {
        let response = try client.request("GET", "/admin/sessions/\(id)/actions", headers: admin)
        guard response.status == 200, let actions = try response.json()["actions"] as? [[String: Any]] else {
            throw TestFailure("the action log of \(id): \(response.status) \(response.text)")
        }
        return actions
    }

    /// After a restart: the server serves ("bystander", a counter made before the crash, takes an action), and
    /// the victim answers 409 naming `crash` to a read and to the retried action `retry`, without the server
    /// going down.
    static func expectQuarantined(_ client: TestClient, naming crash: String, retry: String) throws {
        #expect(try client.request("GET", "/sessions/bystander").status == 200)
        #expect(try client.request("POST", "/sessions/bystander/actions", body: #"{"type":"increase"}"#).status == 202)
        let read = try client.request("GET", "/sessions/victim")
        #expect(read.status == 409)
        #expect(read.errorCode == "session_unavailable")
        #expect(read.errorMessage?.contains(crash) == true, "\(read.text)")
        let retried = try client.request("POST", "/sessions/victim/actions", body: retry)
        #expect(retried.status == 409, "\(retried.text)")
        #expect(try client.request("GET", "/healthz").status == 200)
        #expect(try quarantinedGauge(client) == 1)
    }

    static func create(_ client: TestClient, _ reactor: String, _ id: String) throws {
        let response = try client.request("POST", "/sessions", body: #"{"reactor":"\#(reactor)","id":"\#(id)"}"#)
        guard response.status == 201 else { throw TestFailure("creating \(id): \(response.status) \(response.text)") }
    }

    static func add(_ client: TestClient, _ id: String, times: Int) throws {
        for _ in 0..<times {
            let response = try client.request(
                "POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"add","amount":1}"#)
            guard response.status == 200 else {
                throw TestFailure("adding to \(id): \(response.status) \(response.text)")
            }
        }
    }

    /// A reactor on the worker pool traps on a thread that never saw the request: the crash is still pinned on
    /// its session, action and version, and the action is in its log as the one that crashed it.
    @Test func aTrapInAWorkersReduceIsPinnedOnItsSessionAsAnInlineOne() async throws {
        try await TestStorage.file.withPlace("crash-workers") { place in
            var server = try await Self.start(place)
            var client = try server.client()
            try Self.create(client, "trap-workers", "victim")
            try Self.create(client, "counter", "bystander")
            try Self.add(client, "victim", times: 2)
            let output = try await Self.crash(
                server, "POST", "/sessions/victim/actions", body: #"{"type":"add","amount":1}"#)
            #expect(
                output.contains(
                    #"in reactor "trap-workers" of session "victim": reduce, action seq 3, version 3; crash record "#),
                "\(output)")
            server = try await Self.start(place)
            client = try server.client()
            try Self.expectQuarantined(
                client, naming: "reduce making version 3 for action seq 3", retry: #"{"type":"add","amount":1}"#)
            let log = try Self.actions(client, "victim")
            #expect(log.map { $0["seq"] as? Int } == [1, 2, 3])
            #expect(log.last?["crashed"] as? Bool == true)
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test(arguments: TestStorage.all)
    func aTrapInReduceQuarantinesThatSessionAloneUntilReleasedAfterAFix(storage: TestStorage) async throws {
        try await storage.withPlace("crash-reduce") { place in
            var server = try await Self.start(place, backtrace: true)
            var client = try server.client()
            try Self.create(client, "trap", "victim")
            try Self.create(client, "counter", "bystander")
            try Self.add(client, "victim", times: 2)
            #expect(
                try client.request("POST", "/sessions/bystander/actions", body: #"{"type":"increase"}"#).status == 202)

            // The issue's bug: the third add meets a table one entry short.
            let output = try await Self.crash(
                server, "POST", "/sessions/victim/actions", body: #"{"type":"add","amount":1}"#)
            let line = try #require(output.split(separator: "\n").first { $0.contains("fatal signal") })
            #expect(
                line.contains(#"in reactor "trap" of session "victim": reduce, action seq 3, version 3; crash record "#)
            )
            #expect(line.contains("the session is quarantined from the next start"))
            // The process died as before: the Swift runtime's backtrace follows the line.
            let backtrace = try #require(output.range(of: "Program crashed"), "no backtrace in: \(output)")
            #expect(output.range(of: "fatal signal")!.lowerBound < backtrace.lowerBound)
            #expect(Self.crashFiles(place).count == 1)

            server = try await Self.start(place)
            client = try server.client()
            #expect(
                server.standardError.contains(
                    #""msg":"a session is quarantined: its reactor crashed the server; release, fork or delete it","#
                        + #""session":"victim""#
                ))
            // Every other session serves.
            #expect(try client.request("GET", "/sessions/bystander").status == 200)
            #expect(
                try client.request("POST", "/sessions/bystander/actions", body: #"{"type":"increase"}"#).status == 202)
            // The victim answers 409 naming the crash, and a retried action never runs (the server stays up).
            let refused = try client.request("GET", "/sessions/victim")
            #expect(refused.status == 409)
            #expect(refused.errorCode == "session_unavailable")
            let message = try #require(refused.errorMessage)
            #expect(message.contains("reduce making version 3 for action seq 3"), "\(message)")
            #expect(message.contains("SIGILL") || message.contains("SIGTRAP"), "\(message)")
            let retried = try client.request("POST", "/sessions/victim/actions", body: #"{"type":"add","amount":1}"#)
            #expect(retried.status == 409)
            #expect(try client.request("GET", "/healthz").status == 200)
            let entry = try #require(try Self.listed(client, "victim"))
            #expect((entry["unavailable"] as? String)?.contains("reduce making version 3") == true)
            #expect((entry["crash"] as? [String: Any])?["lastGoodVersion"] as? Int == 2)
            #expect(try Self.quarantinedGauge(client) == 1)
            // The action that crashed it, never acknowledged, is in its action log.
            let log = try Self.actions(client, "victim")
            #expect(log.map { $0["seq"] as? Int } == [1, 2, 3])
            #expect(log.last?["crashed"] as? Bool == true)
            #expect(try Self.actionsText(client, "victim").contains(#"{"seq":3,"at":"#))
            #expect(
                try Self.actionsText(client, "victim").hasSuffix(
                    #""action":{"type":"add","amount":1},"stubbed":false,"crashed":true}]}"# + "\n"))
            #expect(log.first?["crashed"] == nil)
            // A fork works up to the last good version only.
            let fork = try client.request(
                "POST", "/admin/sessions/victim/fork", headers: Self.admin, body: #"{"version":2,"id":"rescued"}"#)
            #expect(fork.status == 201)
            #expect(fork.text.contains(#""version":2,"state":{"value":2,"hidden":false}"#))
            let tooFar = try client.request(
                "POST", "/admin/sessions/victim/fork", headers: Self.admin, body: #"{"version":3,"id":"no"}"#)
            #expect(tooFar.status == 409)
            #expect(tooFar.errorMessage?.contains("last good version 2") == true)
            #expect(try await server.stop() == .exited(0))

            // A fixed reactor deployed, the operator releases it: it loads, and the same action now works.
            server = try await Self.start(place, trapAt: 1000)
            client = try server.client()
            #expect(try client.request("GET", "/sessions/victim").status == 409)
            let released = try client.request("POST", "/admin/sessions/victim/release", headers: Self.admin)
            #expect(released.status == 200)
            #expect(
                released.text == #"{"id":"victim","reactor":"trap","version":2,"state":{"value":2,"hidden":false}}"#
                    + "\n")
            let redone = try client.request(
                "POST", "/sessions/victim/actions?wait=true", body: #"{"type":"add","amount":1}"#)
            #expect(redone.text == #"{"seq":3,"version":3,"state":{"value":3,"hidden":false}}"# + "\n")
            #expect(try Self.quarantinedGauge(client) == 0)
            #expect(Self.crashFiles(place).isEmpty)
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test(arguments: TestStorage.all)
    func aTrapWhileReplayingStoredHistoryQuarantinesInsteadOfCrashingAtEveryLoad(storage: TestStorage) async throws {
        try await storage.withPlace("crash-replay") { place in
            var server = try await Self.start(place, trapAt: 1000)
            var client = try server.client()
            try Self.create(client, "trap", "victim")
            try Self.create(client, "counter", "bystander")
            try Self.add(client, "victim", times: 5)
            // Stopped without a final snapshot: the next load replays versions 1 to 5.
            #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))

            // A "fix" deployed that traps on version 4 of old histories: the first read of the session loads it.
            server = try await Self.start(place, trapAt: 4)
            let output = try await Self.crash(server, "GET", "/sessions/victim")
            #expect(
                output.contains(#"in reactor "trap" of session "victim": replay, version 4; crash record"#), "\(output)"
            )

            // Not a crash loop: every read answers 409, the server stays up.
            server = try await Self.start(place, trapAt: 4)
            client = try server.client()
            for _ in 0..<3 {
                let refused = try client.request("GET", "/sessions/victim")
                #expect(refused.status == 409)
                #expect(
                    refused.errorMessage?.contains("replaying its stored version 4 at load") == true, "\(refused.text)")
            }
            #expect(try client.request("GET", "/sessions/bystander").status == 200)
            #expect(try Self.actions(client, "victim").count == 5)
            #expect(try client.request("GET", "/admin/sessions/victim/versions/3", headers: Self.admin).status == 200)
            #expect(try client.request("GET", "/admin/sessions/victim/versions/4", headers: Self.admin).status == 409)
            let fork = try client.request(
                "POST", "/admin/sessions/victim/fork", headers: Self.admin, body: #"{"version":3,"id":"rescued"}"#)
            #expect(fork.status == 201)
            #expect(try client.request("GET", "/sessions/rescued").text.contains(#""version":3"#))

            // Released with the bad reactor still deployed: it crashes once more, and is quarantined again.
            _ = try await Self.crash(server, "POST", "/admin/sessions/victim/release", headers: Self.admin)
            server = try await Self.start(place, trapAt: 4)
            client = try server.client()
            let again = try client.request("GET", "/sessions/victim")
            #expect(again.status == 409)
            #expect(again.errorMessage?.contains("after 1 earlier crash") == true, "\(again.text)")
            #expect(try await server.stop() == .exited(0))

            server = try await Self.start(place, trapAt: 1000)
            client = try server.client()
            let released = try client.request("POST", "/admin/sessions/victim/release", headers: Self.admin)
            #expect(released.status == 200)
            #expect(released.text.contains(#""version":5"#))
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test(arguments: TestStorage.all)
    func aTrapInMutateIsQuarantinedAndDeletedByTheOperator(storage: TestStorage) async throws {
        try await storage.withPlace("crash-mutate") { place in
            var server = try await Self.start(place)
            var client = try server.client()
            try Self.create(client, "trap", "victim")
            try Self.create(client, "counter", "bystander")
            let output = try await Self.crash(
                server, "POST", "/sessions/victim/actions", body: #"{"type":"mutateTrap"}"#)
            #expect(output.contains(#"of session "victim": mutate, action seq 1; crash record"#), "\(output)")

            server = try await Self.start(place)
            client = try server.client()
            try Self.expectQuarantined(client, naming: "mutate of action seq 1", retry: #"{"type":"mutateTrap"}"#)
            let log = try Self.actions(client, "victim")
            #expect(log.count == 1)
            #expect(log.first?["crashed"] as? Bool == true)
            #expect(
                try Self.actionsText(client, "victim").contains(
                    #""action":{"type":"mutateTrap"},"stubbed":false,"crashed":true"#))
            #expect(try client.request("DELETE", "/sessions/victim").status == 204)
            #expect(try Self.quarantinedGauge(client) == 0)
            #expect(Self.crashFiles(place).isEmpty)
            try Self.create(client, "trap", "victim")
            #expect(try await server.stop() == .exited(0))

            // Deleted means gone: the next start quarantines nothing.
            server = try await Self.start(place)
            client = try server.client()
            #expect(try client.request("GET", "/sessions/victim").status == 200)
            #expect(try Self.quarantinedGauge(client) == 0)
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test(arguments: TestStorage.all)
    func aTrapInAnEffectOnThePoolNamesItsAction(storage: TestStorage) async throws {
        try await storage.withPlace("crash-effect") { place in
            var server = try await Self.start(place)
            var client = try server.client()
            try Self.create(client, "trap", "victim")
            try Self.create(client, "counter", "bystander")
            try Self.add(client, "victim", times: 1)
            let output = try await Self.crash(
                server, "POST", "/sessions/victim/actions", body: #"{"type":"effectTrap"}"#)
            #expect(output.contains(#"of session "victim": effect, action seq 2; crash record"#), "\(output)")

            server = try await Self.start(place)
            client = try server.client()
            try Self.expectQuarantined(client, naming: "an effect of action seq 2", retry: #"{"type":"effectTrap"}"#)
            let log = try Self.actions(client, "victim")
            #expect(log.map { $0["seq"] as? Int } == [1, 2])
            #expect(log.last?["crashed"] as? Bool == true)
            // Accepted (and, on NATS, journaled before the crash: then it also reads as interrupted).
            #expect(
                try Self.actionsText(client, "victim").contains(#""action":{"type":"effectTrap"},"stubbed":false,"#))
            // It made no version: everything stored is good, and it loads as it is (the operator's call).
            #expect((try Self.listed(client, "victim")?["crash"] as? [String: Any])?["lastGoodVersion"] as? Int == 1)
            #expect(try client.request("POST", "/admin/sessions/victim/release", headers: Self.admin).status == 200)
            #expect(try client.request("GET", "/sessions/victim").text.contains(#""value":1"#))
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test(arguments: TestStorage.all)
    func aTrapInTransformStateIsQuarantinedAtTheVersionItWasShowing(storage: TestStorage) async throws {
        try await storage.withPlace("crash-transform") { place in
            var server = try await Self.start(place)
            var client = try server.client()
            try Self.create(client, "trap", "victim")
            try Self.create(client, "counter", "bystander")
            try Self.add(client, "victim", times: 1)
            let output = try await Self.crash(server, "POST", "/sessions/victim/actions", body: #"{"type":"hide"}"#)
            #expect(
                output.contains(#"of session "victim": transformState, action seq 2, version 2; crash record"#),
                "\(output)")

            server = try await Self.start(place)
            client = try server.client()
            try Self.expectQuarantined(client, naming: "transform(state:) of version 2", retry: #"{"type":"hide"}"#)
            #expect((try Self.listed(client, "victim")?["crash"] as? [String: Any])?["lastGoodVersion"] as? Int == 1)
            #expect(
                try client.request(
                    "POST", "/admin/sessions/victim/fork", headers: Self.admin, body: #"{"version":1,"id":"f"}"#
                ).status == 201)
            #expect(try client.request("POST", "/admin/sessions/victim/release", headers: Self.admin).status == 200)
            #expect(try client.request("GET", "/sessions/victim").text.contains(#""version":1"#))
            #expect(try Self.quarantinedGauge(client) == 0)
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test(arguments: TestStorage.all)
    func killDashNineInTheMiddleOfASlowReduceQuarantinesNothing(storage: TestStorage) async throws {
        try await storage.withPlace("crash-kill") { place in
            var server = try await Self.start(place)
            var client = try server.client()
            try Self.create(client, "trap", "victim")
            try client.send(
                "POST /sessions/victim/actions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                    + "Content-Length: 30\r\n\r\n"
                    + #"{"type":"slow","seconds":60}  "#)
            _ = try await server.process.errorLines.next("the slow reduce to start") {
                $0.contains("a slow reduce started")
            }
            #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))
            #expect(!server.standardError.contains("fatal signal"))
            #expect(Self.crashFiles(place).isEmpty)

            server = try await Self.start(place)
            client = try server.client()
            #expect(try client.request("GET", "/sessions/victim").status == 200)
            #expect(try Self.quarantinedGauge(client) == 0)
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test func aTrapInTheServersOwnCodeQuarantinesNothingAndSaysSo() async throws {
        try await TestStorage.file.withPlace("crash-server") { place in
            let trigger = try #require(place.dataDirectory) + "/trap-now"
            var server = try await Self.start(place, environment: ["TRAP_SERVER_WHEN": trigger])
            var client = try server.client()
            try Self.create(client, "trap", "bystander")
            #expect(FileManager.default.createFile(atPath: trigger, contents: nil))
            let end = try await server.process.waitForExit()
            #expect(end == .signalled(SIGILL) || end == .signalled(SIGTRAP))
            #expect(
                server.standardError.contains(
                    "fatal signal SIGILL in the server's own code (no reactor code was running on this thread): "
                        + "no session is quarantined"
                )
                    || server.standardError.contains("fatal signal SIGTRAP in the server's own code"))
            #expect(Self.crashFiles(place).isEmpty)
            try FileManager.default.removeItem(atPath: trigger)

            server = try await Self.start(place)
            client = try server.client()
            #expect(try client.request("GET", "/sessions/bystander").status == 200)
            #expect(try Self.quarantinedGauge(client) == 0)
            #expect(try await server.stop() == .exited(0))
        }
    }

    // MARK: Flow operators, recovery at load, the reactor's own middleware

    /// A search of the flow trap reactor, answered once its debounce lets it go.
    static func search(_ client: TestClient, _ id: String, _ query: String) throws {
        let response = try client.request(
            "POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"search","query":"\#(query)"}"#)
        guard response.status == 200 else {
            throw TestFailure("searching \(id): \(response.status) \(response.text)")
        }
    }

    @Test(arguments: TestStorage.all)
    func aTrapInADebouncedActionsDeliveryIsPinnedOnItsActionOnTheTaskThatHeldIt(storage: TestStorage) async throws {
        try await storage.withPlace("crash-debounce") { place in
            var server = try await Self.start(place)
            var client = try server.client()
            try Self.create(client, "flowtrap", "victim")
            try Self.create(client, "counter", "bystander")
            try Self.search(client, "victim", "swift")
            // Held by the debounce, then let go on the task that held it: the author's map after it traps there.
            var output = try await Self.crash(
                server, "POST", "/sessions/victim/actions", body: #"{"type":"search","query":"late"}"#)
            #expect(output.contains(#"of session "victim": transformAction, action seq 2; crash record"#), "\(output)")

            server = try await Self.start(place)
            client = try server.client()
            try Self.expectQuarantined(
                client, naming: "transform(action:) of action seq 2", retry: #"{"type":"search","query":"late"}"#)
            let log = try Self.actions(client, "victim")
            #expect(log.map { $0["seq"] as? Int } == [1, 2])
            #expect(log.last?["crashed"] as? Bool == true)
            #expect(
                try Self.actionsText(client, "victim").contains(
                    #""action":{"type":"search","query":"late"},"stubbed":false,"#))
            #expect((try Self.listed(client, "victim")?["crash"] as? [String: Any])?["lastGoodVersion"] as? Int == 1)
            #expect(try client.request("POST", "/admin/sessions/victim/release", headers: Self.admin).status == 200)
            let loaded = try client.request("GET", "/sessions/victim").text
            #expect(loaded.contains(#""version":1,"state":{"query":"swift""#), "\(loaded)")

            // Let go on that task, its reduce traps there: pinned on the version it was making. (Its seq is 3, or
            // 2 again when the crash came before the journal stored the late search's acceptance.)
            output = try await Self.crash(
                server, "POST", "/sessions/victim/actions", body: #"{"type":"search","query":"trap"}"#)
            let line = try #require(output.split(separator: "\n").first { $0.contains("fatal signal") })
            #expect(line.contains(#"of session "victim": reduce, action seq "#), "\(line)")
            #expect(line.contains(", version 2; crash record"), "\(line)")
            server = try await Self.start(place)
            client = try server.client()
            try Self.expectQuarantined(
                client, naming: "reduce making version 2 for action seq", retry: #"{"type":"search","query":"trap"}"#)
            #expect(try Self.actions(client, "victim").last?["crashed"] as? Bool == true)
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test(arguments: TestStorage.all)
    func aTrapInRecoverAtLoadQuarantinesInsteadOfCrashingAtEveryLoad(storage: TestStorage) async throws {
        try await storage.withPlace("crash-recover") { place in
            var server = try await Self.start(place)
            var client = try server.client()
            try Self.create(client, "flowtrap", "victim")
            try Self.create(client, "counter", "bystander")
            try Self.search(client, "victim", "swift")
            // Accepted and stored (the 202 waits for that); its effect never ends, so kill -9 interrupts it.
            #expect(try client.request("POST", "/sessions/victim/actions", body: #"{"type":"hang"}"#).status == 202)
            #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))

            // A reactor whose recover(interrupted:state:) traps: the first read loads the session and recovers.
            server = try await Self.start(place, environment: ["RECOVER_TRAPS": "1"])
            let output = try await Self.crash(server, "GET", "/sessions/victim")
            #expect(
                output.contains(#"of session "victim": recover, action seq 2, version 1; crash record"#), "\(output)")

            // Not a crash loop: quarantined, the server stays up, the interrupted action is the crashed one.
            server = try await Self.start(place, environment: ["RECOVER_TRAPS": "1"])
            client = try server.client()
            try Self.expectQuarantined(
                client, naming: "recover(interrupted:state:) of interrupted action seq 2 at load",
                retry: #"{"type":"hang"}"#)
            let log = try Self.actions(client, "victim")
            #expect(log.map { $0["seq"] as? Int } == [1, 2])
            #expect(log.last?["crashed"] as? Bool == true)
            #expect(log.last?["interrupted"] as? Bool == true)
            #expect((try Self.listed(client, "victim")?["crash"] as? [String: Any])?["lastGoodVersion"] as? Int == 1)
            #expect(try await server.stop() == .exited(0))

            // Fixed and released: the recovery runs once, as a new version.
            server = try await Self.start(place)
            client = try server.client()
            let released = try client.request("POST", "/admin/sessions/victim/release", headers: Self.admin)
            #expect(released.status == 200)
            #expect(
                released.text.contains(#""version":2,"state":{"query":"swift","recovered":true}"#), "\(released.text)")
            #expect(try Self.quarantinedGauge(client) == 0)
            #expect(try await server.stop() == .exited(0))
        }
    }

    @Test func aTrapInTheReactorsOwnMiddlewareIsPinnedOnItsSessionWithTheActionItWasGiven() async throws {
        try await TestStorage.file.withPlace("crash-middleware") { place in
            var server = try await Self.start(place)
            var client = try server.client()
            try Self.create(client, "flowtrap", "victim")
            try Self.create(client, "counter", "bystander")
            try Self.search(client, "victim", "swift")
            let output = try await Self.crash(
                server, "POST", "/sessions/victim/actions", body: #"{"type":"search","query":"intercepted"}"#)
            #expect(
                output.contains(#"in reactor "flowtrap" of session "victim": middleware; crash record"#), "\(output)")

            server = try await Self.start(place)
            client = try server.client()
            try Self.expectQuarantined(
                client, naming: "a middleware of the reactor", retry: #"{"type":"search","query":"intercepted"}"#)
            // Refused before it had a seq: listed after the log, under the seq it would have had.
            let log = try Self.actions(client, "victim")
            #expect(log.map { $0["seq"] as? Int } == [1, 2])
            #expect(
                try Self.actionsText(client, "victim").contains(
                    #""action":{"type":"search","query":"intercepted"},"stubbed":false,"crashed":true"#))
            #expect((try Self.listed(client, "victim")?["crash"] as? [String: Any])?["lastGoodVersion"] as? Int == 1)
            #expect(try client.request("POST", "/admin/sessions/victim/release", headers: Self.admin).status == 200)
            #expect(try await server.stop() == .exited(0))
        }
    }

    // MARK: Several instances on NATS

    /// A second instance on the place's cluster: its own name and data folder.
    static func startOther(
        _ place: StoragePlace, _ name: String, _ dataDirectory: String, trapAt: Int = 3
    ) async throws -> ServerProcess {
        var other = place.settings.filter { $0.key != "storage.nats.instance" && $0.key != "storage.dataDir" }
        other += [("storage.nats.instance", name), ("storage.dataDir", dataDirectory)]
        return try await start(StoragePlace(directory: nil, settings: other), trapAt: trapAt)
    }

    @Test func theCrashRecordReachesJetStreamBeforeTheProcessDiesAndNoOtherInstanceRunsTheSession() async throws {
        try await TestStorage.nats.withPlace("crash-cluster") { place in
            try await withTemporaryDirectory("crash-cluster-b") { otherData in
                let other = try await Self.startOther(place, "other", otherData)
                let otherClient = try other.client()
                var server = try await Self.start(place)
                let client = try server.client()
                try Self.create(client, "trap", "victim")
                try Self.add(client, "victim", times: 2)
                let output = try await Self.crash(
                    server, "POST", "/sessions/victim/actions", body: #"{"type":"add","amount":1}"#)
                #expect(output.contains("the crash record is stored in NATS JetStream"), "\(output)")

                // The other instance, never restarted, refuses the session: it would take it over otherwise.
                try await eventually("the other instance to see the crash record") {
                    try otherClient.request("GET", "/sessions/victim").status == 409
                }
                let refused = try otherClient.request(
                    "POST", "/sessions/victim/actions", body: #"{"type":"add","amount":1}"#)
                #expect(refused.status == 409)
                #expect(
                    refused.errorMessage?.contains("reduce making version 3 for action seq 3") == true,
                    "\(refused.text)")
                #expect(try otherClient.request("GET", "/healthz").status == 200)
                #expect(try Self.quarantinedGauge(otherClient) == 1)
                #expect(try Self.actions(otherClient, "victim").last?["crashed"] as? Bool == true)
                #expect(other.process.isRunning)

                // The crashed instance starts again: the record it kept is in JetStream already, and goes.
                server = try await Self.start(place)
                #expect(Self.crashFiles(place).isEmpty)
                #expect(try server.client().request("GET", "/sessions/victim").status == 409)
                #expect(try await server.stop() == .exited(0))
                #expect(try await other.stop() == .exited(0))
            }
        }
    }

    @Test func anInstanceThatDiedLoadingASessionLeavesItQuarantinedWhenNoRecordReachedTheCluster() async throws {
        try await TestStorage.nats.withPlace("crash-unheard") { place in
            try await withTemporaryDirectory("crash-unheard-b") { otherData in
                var server = try await Self.start(place, trapAt: 1000)
                let client = try server.client()
                try Self.create(client, "trap", "victim")
                try Self.add(client, "victim", times: 5)
                #expect(try await server.stop(signal: SIGKILL) == .signalled(SIGKILL))

                // It dies replaying the session, and does not even try to tell JetStream.
                let unheard = StoragePlace(
                    directory: nil, settings: place.settings + [("storage.nats.crashRecordSeconds", "0")])
                server = try await Self.start(unheard, trapAt: 4)
                let output = try await Self.crash(server, "GET", "/sessions/victim")
                #expect(output.contains("replay, version 4; crash record"), "\(output)")
                #expect(!output.contains("crash record is stored in NATS JetStream"))
                #expect(!output.contains("could not be stored in NATS JetStream"))

                // The next instance finds the dead owner's claim still saying it was loading: it quarantines
                // instead of replaying into the same trap.
                let other = try await Self.startOther(place, "other", otherData, trapAt: 4)
                let otherClient = try other.client()
                try await eventually("the other instance to take the session over") {
                    try otherClient.request("GET", "/sessions/victim").status != 503
                }
                let refused = try otherClient.request("GET", "/sessions/victim")
                #expect(refused.status == 409)
                #expect(
                    refused.errorMessage?.contains("died while it was loading this session") == true, "\(refused.text)")
                #expect(other.process.isRunning)
                #expect(try await other.stop() == .exited(0))

                // The crashed instance, fixed, starts again: its record reaches the cluster, and a release works.
                server = try await Self.start(place, trapAt: 1000)
                let restarted = try server.client()
                #expect(
                    try restarted.request("GET", "/sessions/victim").errorMessage?.contains(
                        "replaying its stored version 4") == true)
                let released = try restarted.request("POST", "/admin/sessions/victim/release", headers: Self.admin)
                #expect(released.status == 200)
                #expect(released.text.contains(#""version":5"#))
                #expect(try await server.stop() == .exited(0))
            }
        }
    }
}
