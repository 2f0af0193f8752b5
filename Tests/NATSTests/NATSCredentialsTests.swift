import Logs
import NATS
import ReactorServerTesting
import Testing

@Suite(
    .offThePool, .enabled(if: NATSServerProcess.canRun, "nats-server is not installed (apt-get install nats-server)"))
struct NATSCredentialsTests {
    @Test func userAndPasswordFromTheURLOrTheOptions() async throws {
        try await NATSServerProcess.with(jetStream: false, extra: ["--user", "app", "--pass", "s3cret"]) { server in
            let fromURL = try await connect("nats://app:s3cret@127.0.0.1:\(server.port)")
            #expect(try await roundTrip(fromURL))
            fromURL.close()
            let fromOptions = try await connect(server.url) {
                $0.user = "app"
                $0.password = "s3cret"
            }
            #expect(try await roundTrip(fromOptions))
            fromOptions.close()
        }
    }

    @Test(arguments: ["nats://app:wrong@127.0.0.1:%d", "nats://127.0.0.1:%d", "nats://s3cret@127.0.0.1:%d"])
    func wrongOrMissingUserCredentialsAreRefusedClearly(_ template: String) async throws {
        try await NATSServerProcess.with(jetStream: false, extra: ["--user", "app", "--pass", "s3cret"]) { server in
            let records = RecordingLogHandler()
            var options = try NATSOptions(servers: template.replacingOccurrences(of: "%d", with: "\(server.port)"))
            options.logger = Logger(label: "nats", level: .debug, handler: records)
            let connection = NATSConnection(options: options)
            do throws(NATSError) {
                try await connection.connect(timeout: .seconds(5))
                Issue.record("connected with wrong credentials")
            } catch {
                guard case .authorizationViolation(let named, let message) = error else { throw error }
                #expect(named == server.url)
                #expect(message.contains("Authorization Violation"))
                #expect(error.description.contains(server.url) && !error.description.contains("wrong"))
            }
            #expect(connection.status == .closed)
            #expect(
                !records.records.contains { "\($0.message) \($0.fields.map(\.value.description))".contains("wrong") },
                "no log line may show the password")
        }
    }

    @Test func tokenFromTheURLOrTheOptions() async throws {
        try await NATSServerProcess.with(jetStream: false, extra: ["--auth", "t0ken"]) { server in
            let fromURL = try await connect("nats://t0ken@127.0.0.1:\(server.port)")
            #expect(try await roundTrip(fromURL))
            fromURL.close()
            let fromOptions = try await connect(server.url) { $0.token = "t0ken" }
            #expect(try await roundTrip(fromOptions))
            fromOptions.close()

            let wrong = NATSConnection(options: try NATSOptions(servers: "nats://other@127.0.0.1:\(server.port)"))
            await #expect(
                throws: NATSError.authorizationViolation(server: server.url, message: "Authorization Violation")
            ) {
                try await wrong.connect(timeout: .seconds(5))
            }
        }
    }

    /// A request answered by a subscription on the same connection.
    func roundTrip(_ connection: NATSConnection) async throws -> Bool {
        let subscription = try connection.subscribe(to: "auth.echo") { message in
            try? connection.publish(message.replyTo!, payload: message.payload)
        }
        defer { subscription.unsubscribe() }
        return try await connection.request("auth.echo", payload: "ok".bytes).text == "ok"
    }
}
