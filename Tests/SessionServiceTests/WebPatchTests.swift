import Foundation
import JSONCodec
import ReactorServerTesting
import SessionService
import Testing

/// The pages' patches in a real Chromium: their RFC 6902 applier (`WebScript.common`) on the RFC's own examples, the
/// page at `/` and the console's live state built from `?delta=json-patch` streams (the server counts the patches it
/// made for them) equal to the server's state, and a patch that does not apply answered by a new stream.
@Suite(.offThePool) struct WebPatchTests {
    /// RFC 6902 Appendix A: document, patch, result (nil: the patch fails).
    static let appendixA: [(String, String, String?)] = [
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz","value":"qux"}]"#, #"{"baz":"qux","foo":"bar"}"#),
        (#"{"foo":["bar","baz"]}"#, #"[{"op":"add","path":"/foo/1","value":"qux"}]"#, #"{"foo":["bar","qux","baz"]}"#),
        (#"{"baz":"qux","foo":"bar"}"#, #"[{"op":"remove","path":"/baz"}]"#, #"{"foo":"bar"}"#),
        (#"{"foo":["bar","qux","baz"]}"#, #"[{"op":"remove","path":"/foo/1"}]"#, #"{"foo":["bar","baz"]}"#),
        (
            #"{"baz":"qux","foo":"bar"}"#, #"[{"op":"replace","path":"/baz","value":"boo"}]"#,
            #"{"baz":"boo","foo":"bar"}"#
        ),
        (
            #"{"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}"#,
            #"[{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]"#,
            #"{"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}"#
        ),
        (
            #"{"foo":["all","grass","cows","eat"]}"#, #"[{"op":"move","from":"/foo/1","path":"/foo/3"}]"#,
            #"{"foo":["all","cows","eat","grass"]}"#
        ),
        (
            #"{"baz":"qux","foo":["a",2,"c"]}"#,
            #"[{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]"#,
            #"{"baz":"qux","foo":["a",2,"c"]}"#
        ),
        (#"{"baz":"qux"}"#, #"[{"op":"test","path":"/baz","value":"bar"}]"#, nil),
        (
            #"{"foo":"bar"}"#, #"[{"op":"add","path":"/child","value":{"grandchild":{}}}]"#,
            #"{"foo":"bar","child":{"grandchild":{}}}"#
        ),
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz","value":"qux","xyz":123}]"#, #"{"foo":"bar","baz":"qux"}"#),
        (#"{"foo":"bar"}"#, #"[{"op":"add","path":"/baz/bat","value":"qux"}]"#, nil),
        (#"{"/":9,"~1":10}"#, #"[{"op":"test","path":"/~01","value":10}]"#, #"{"/":9,"~1":10}"#),
        (#"{"/":9,"~1":10}"#, #"[{"op":"test","path":"/~01","value":"10"}]"#, nil),
        (
            #"{"foo":["bar"]}"#, #"[{"op":"add","path":"/foo/-","value":["abc","def"]}]"#,
            #"{"foo":["bar",["abc","def"]]}"#
        ),
        // Beyond the appendix: the whole document, a member named __proto__, atomicity, an index past the end.
        (#"{"a":1}"#, #"[{"op":"replace","path":"","value":[1]}]"#, "[1]"),
        ("{}", #"[{"op":"add","path":"/__proto__","value":{"x":1}}]"#, #"{"__proto__":{"x":1}}"#),
        (#"{"a":1}"#, #"[{"op":"replace","path":"/a","value":2},{"op":"test","path":"/a","value":1}]"#, nil),
        ("[1]", #"[{"op":"add","path":"/2","value":2}]"#, nil),
    ]

    static func json(_ text: String) throws -> JSONValue { try JSONParser().parse(Array(text.utf8)) }

    /// A server-side request from the test, off the cooperative pool.
    static func call(
        _ port: Int, _ method: String, _ path: String, _ body: String? = nil
    ) async throws -> TestResponse {
        try await offPool { try TestClient(port: port, readTimeout: .seconds(60)).request(method, path, body: body) }
    }

    static func patchesMade(_ port: Int) async throws -> Int {
        let text = try await call(port, "GET", "/metrics").text
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("reactor_state_patches_total ") })
        return try #require(Int(line.split(separator: " ")[1]))
    }

    /// The session's state as the server has it (members in its order), as a JavaScript string literal.
    static func shown(_ port: Int, _ id: String) async throws -> String {
        let body = try await call(port, "GET", "/sessions/\(id)").text
        let state = try #require(try Self.json(body)["state"], "no state in \(body)")
        return WebPageTests.javaScriptString(state.serializedString())
    }

    /// True when the element's JSON is the server's state (member order included).
    static func showing(_ element: String, _ serverJSON: String) -> String {
        "JSON.stringify(JSON.parse(document.getElementById('\(element)').textContent)) === "
            + "JSON.stringify(JSON.parse(\(serverJSON)))"
    }

    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func thePagesApplierPassesTheRFCsExamples() async throws {
        let server = try TestServer()
        try await Browser.run("patch-applier") { browser in
            try await browser.open("http://127.0.0.1:\(server.port)/")
            try await browser.wait("the page's script", until: "typeof applyJSONPatch === 'function'")
            let cases = Self.appendixA.map { [$0.0, $0.1] }
            let results =
                try await browser.execute(
                    """
                    return arguments[0].map(([document, patch]) => {
                      const before = JSON.parse(document);
                      try { return JSON.stringify(applyJSONPatch(before, JSON.parse(patch))); }
                      catch (error) {
                        const unchanged = JSON.stringify(before) === document.replace(/\\s/g, '');
                        return unchanged ? 'error: ' + error.message : 'changed';
                      }
                    });
                    """, [cases]) as? [String]
            let answers = try #require(results)
            for ((document, patch, expected), answer) in zip(Self.appendixA, answers) {
                if let expected {
                    #expect(
                        (try? Self.json(answer)) == (try Self.json(expected)),
                        "\(patch) on \(document) gave \(answer)")
                } else {
                    #expect(
                        answer.hasPrefix("error: "),
                        "\(patch) on \(document) gave \(answer), and must fail leaving it alone")
                }
            }
        }
    }

    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func thePageBuildsTheStateFromPatchesAndReopensWhenOneDoesNotApply() async throws {
        let server = try TestServer()
        let port = server.port
        let id = try server.createSession("todo")
        for index in 1...20 {
            _ = try server.request("POST", "/sessions/\(id)/actions", body: #"{"type":"add","title":"item \#(index)"}"#)
        }
        _ = try server.request("POST", "/sessions/\(id)/actions?wait=true", body: #"{"type":"toggle","id":1}"#)
        try await Browser.run("page-patches") { browser in
            try await browser.open("http://127.0.0.1:\(port)/?session=\(id)")
            try await browser.wait("the list, live at version 21", until: WebPageTests.live(version: 21))
            let before = try await Self.patchesMade(port)
            let actions = [
                #"{"type":"toggle","id":7}"#, #"{"type":"remove","id":3}"#, #"{"type":"add","title":"new"}"#,
                #"{"type":"toggle","id":1}"#, #"{"type":"clearCompleted"}"#,
            ]
            for (offset, action) in actions.enumerated() {
                #expect(try await Self.call(port, "POST", "/sessions/\(id)/actions?wait=true", action).status == 200)
                let expected = try await Self.shown(port, id)
                try await browser.wait(
                    "version \(22 + offset) shown as the server has it",
                    until: WebPageTests.live(version: 22 + offset) + " && " + Self.showing("state", expected))
            }
            #expect(try await Self.patchesMade(port) - before == actions.count, "each version came as a patch")

            // The page's state no longer matches the server's: the next patch does not apply, and a new stream
            // brings the whole state.
            _ = try await browser.execute("window.brokenSource = stream.source; stream.document = { items: 'broken' };")
            #expect(
                try await Self.call(
                    port, "POST", "/sessions/\(id)/actions?wait=true",
                    #"{"type":"toggle","id":2}"#
                ).status == 200)
            let expected = try await Self.shown(port, id)
            try await browser.wait(
                "the whole state from a new stream",
                until: WebPageTests.live(version: 27)
                    + " && " + Self.showing("state", expected) + " && stream.source !== window.brokenSource")
            #expect(
                try await Self.call(
                    port, "POST", "/sessions/\(id)/actions?wait=true",
                    #"{"type":"toggle","id":4}"#
                ).status == 200)
            let next = try await Self.shown(port, id)
            try await browser.wait(
                "patches again",
                until: WebPageTests.live(version: 28) + " && "
                    + Self.showing("state", next))
            try await browser.expectNoConsoleErrors()
        }
    }

    @Test(.enabled(if: BrowserPrograms.shouldRun, BrowserPrograms.skipReason))
    func theConsolesLiveStateAndListFollowPatches() async throws {
        let server = try TestServer()
        let port = server.port
        for id in ["t1", "t2"] {
            try server.createSession("todo", id: id)
            #expect(try server.request("GET", "/sessions/\(id)").status == 200)
        }
        for title in ["a", "b", "c"] {
            _ = try server.request(
                "POST", "/sessions/t1/actions?wait=true",
                body: #"{"type":"add","title":"\#(title)"}"#)
        }
        try await Browser.run("console-patches") { browser in
            try await browser.open("http://127.0.0.1:\(port)/admin/console")
            try await browser.find("#token").type(TestServer.adminToken + WebElement.Key.enter)
            try await browser.wait(
                "the console to list t1",
                until: AdminConsoleTests.connection("connected")
                    + " && document.querySelector('#sessions button[data-session=t1]') !== null")
            try await browser.find("#sessions button[data-session=t1]").click()
            try await browser.wait("t1's live state at version 3", until: AdminConsoleTests.live(version: 3))
            let before = try await Self.patchesMade(port)
            for (offset, action) in [#"{"type":"toggle","id":2}"#, #"{"type":"remove","id":1}"#].enumerated() {
                #expect(try await Self.call(port, "POST", "/sessions/t1/actions?wait=true", action).status == 200)
                let expected = try await Self.shown(port, "t1")
                try await browser.wait(
                    "version \(4 + offset) in the live state",
                    until: AdminConsoleTests.live(version: 4 + offset)
                        + " && " + Self.showing("liveState", expected))
            }
            // t2's new version reaches the list as a patch event of its stream, which carries the version too.
            #expect(
                try await Self.call(
                    port, "POST", "/sessions/t2/actions?wait=true",
                    #"{"type":"add","title":"x"}"#
                ).status == 200)
            try await browser.wait(
                "t2 at version 1 in the list, told by the stream",
                until: AdminConsoleSessionListTests.listed("t2", version: 1, via: "stream"))
            // The list's stream and the live state's both asked for patches: one patch per version served both.
            #expect(try await Self.patchesMade(port) - before == 3)
            // Time travel needs the journal, which this memory-only server has not: its 409s are expected.
            try await browser.expectNoConsoleErrors(expecting: ["/admin/sessions/t1/versions/"])
        }
    }
}
