import Foundation
import ReactorServerTesting
import Testing

/// Runs the README's curl walkthrough as written, with real curl, against a started `reactor-server`,
/// and compares every command's output with the `# →` line the README shows for it.
@Suite(.offThePool) struct WalkthroughTests {
    struct Step {
        var command: String
        var expected: [String] = []
    }

    static func walkthrough() throws -> (server: String, steps: [Step], watcherOutput: String) {
        let readme = try ReadmeTests.readme
        // The server's start is its own block (first terminal), before the commands (second terminal).
        let serverBlock = try #require(
            readme.components(separatedBy: "<!-- walkthrough:server -->\n```sh\n").dropFirst().first?
                .components(separatedBy: "```").first)
        let server = serverBlock.trimmingCharacters(in: .whitespacesAndNewlines)
        let block = try #require(
            readme.components(separatedBy: "<!-- walkthrough:start -->").dropFirst().first?
                .components(separatedBy: "<!-- walkthrough:end -->").first)
        var steps: [Step] = []
        for line in block.split(separator: "\n", omittingEmptySubsequences: true).map(String.init) {
            if line.hasPrefix("```") || line.hasPrefix("# ") && !line.hasPrefix("# →") { continue }
            if line.hasPrefix("# → ") {
                steps[steps.count - 1].expected.append(String(line.dropFirst(4)))
            } else {
                steps.append(Step(command: line))
            }
        }
        let after = try #require(
            readme.components(separatedBy: "The watcher printed, in order:\n\n```\n").dropFirst().first?.components(
                separatedBy: "```"
            ).first)
        return (server, steps, after)
    }

    @Test func readmeWalkthroughRunsAsWritten() async throws {
        _ = try TestProcess.tool("curl")
        let (start, steps, watcherExpected) = try Self.walkthrough()
        #expect(steps.count >= 10)
        #expect(start == "REACTOR_ADMIN_TOKEN=let-me-in-please swift run reactor-server")
        #expect(
            !steps.contains { $0.command.contains("swift run") },
            "the server starts in its own block, not among the commands")
        try await withTemporaryDirectory("walkthrough") { data in
            // No keep-alive comment within the walkthrough, however slow the machine (a sanitizer's build
            // under load took over the default 15 s): the README shows the stream without one.
            let server = try await ServerProcess.start(
                arguments: ["--data-dir", data, "--set", "sse.keepAliveSeconds=3600"],
                environment: ["REACTOR_ADMIN_TOKEN": "let-me-in-please"])
            var environment = ProcessInfo.processInfo.environment
            environment["BASE"] = "http://127.0.0.1:\(server.port)"

            var watcher: TestProcess?
            for step in steps {
                if step.command.hasSuffix("&") {
                    watcher = try TestProcess(
                        "/bin/bash", ["-c", String(step.command.dropLast())], environment: environment)
                    // Continue once the server counts the subscriber, so it sees version 0 as the README shows.
                    let admin = try server.client()
                    try await eventually("the server to count the watcher as a subscriber") {
                        try admin.request(
                            "GET", "/admin/sessions", headers: [("Authorization", "Bearer let-me-in-please")]
                        ).text.contains(#""subscribers":1"#)
                    }
                    continue
                }
                if step.command == "wait" {
                    let process = try #require(watcher)
                    #expect(try await process.waitForExit() == .exited(0))
                    // The stream ends with the blank line that terminates its last event.
                    #expect(process.standardOutput == watcherExpected + "\n")
                    continue
                }
                let result = try await TestProcess.run("/bin/bash", ["-c", step.command], environment: environment)
                #expect(result.termination == .exited(0), "\(step.command): \(result.error)")
                let lines = result.output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
                    .filter { !$0.isEmpty }
                #expect(lines == step.expected, "\(step.command)")
            }
            #expect(watcher?.isRunning == false)
            #expect(try await server.stop() == .exited(0))
        }
    }
}
