import Testing

@testable import SessionService

/// The router's fast path for session routes agrees with the table.
@Suite struct RouterTests {
    @Test(arguments: [
        ("GET", "/sessions/abc", Router.Match.route(.getSession, id: "abc")),
        ("HEAD", "/sessions/abc", .route(.getSession, id: "abc")),
        ("DELETE", "//sessions//abc/", .route(.deleteSession, id: "abc")),
        ("POST", "/sessions/a%20b/actions?wait=true", .route(.postAction, id: "a b")),
        ("GET", "/sessions/x/events", .route(.events, id: "x")),
        ("GET", "http://host:8080/sessions/x/events?select=/v", .route(.events, id: "x")),
        ("POST", "/sessions", .route(.createSession, id: nil)),
        ("PUT", "/sessions/x/actions", .methodNotAllowed(allowed: ["POST", "OPTIONS"])),
        ("GET", "/sessions/x/other", .notFound),
        ("GET", "/sessions/x/events/more", .notFound),
        ("GET", "/admin/sessions/x/versions/3", .route(.adminVersion, id: "x")),
        ("PATCH", "/sessions/x", .methodNotAllowed(allowed: ["GET", "DELETE", "HEAD", "OPTIONS"])),
        ("QUERY", "/sessions/x/events", .methodNotAllowed(allowed: ["GET", "HEAD", "OPTIONS"])),
        ("get", "/healthz", .methodNotAllowed(allowed: ["GET", "HEAD", "OPTIONS"])),
        ("BREW", "/nowhere", .notImplemented),
        ("PATCH", "/nowhere", .notImplemented),
        ("DELETE", "/nowhere", .notFound),
        ("OPTIONS", "/nowhere", .notFound),
    ])
    func matches(method: String, target: String, expected: Router.Match) {
        #expect(Router().match(method: method, target: target) == expected)
    }
}

/// The table declares each route once, and the indices chains and metrics use follow it.
@Suite struct RouteTableTests {
    @Test func everyRouteHasOneRowAndItsIndex() {
        #expect(Route.table.map(\.route) == Route.allCases)
        for (position, route) in Route.allCases.enumerated() {
            #expect(route.index == position, "\(route) has index \(route.index), position \(position)")
        }
    }

    /// What a row says it needs decides where it runs: a route that loads the path's session must have
    /// one (its residency is asked by `{id}`), and only open routes may show no session at all.
    @Test func whatEachRouteNeedsFitsItsPathAndAccess() {
        for entry in Route.table where entry.needs == .session {
            #expect(entry.pattern.contains("{id}"), "\(entry.method) \(entry.pattern) needs a session but has no {id}")
        }
        let noSession = Route.table.filter { $0.needs == .noSession }.map(\.route)
        #expect(noSession == [.page, .favicon, .health, .metrics, .openAPI, .reactors, .adminConsole])
        for entry in Route.table where entry.needs == .noSession {
            #expect(entry.access == .open, "\(entry.method) \(entry.pattern) shows no session but is not open")
        }
    }

    @Test func adminRoutesAreExactlyThoseUnderAdmin() {
        // The console page is the one exception: it holds no secret and asks for the token itself.
        let openUnderAdmin = Route.table.filter { $0.pattern.hasPrefix("/admin/") && $0.access != .admin }.map {
            "\($0.method) \($0.pattern)"
        }
        #expect(openUnderAdmin == ["GET /admin/console"])
        for entry in Route.table where entry.route != .adminConsole {
            #expect((entry.access == .admin) == entry.pattern.hasPrefix("/admin/"), "\(entry.method) \(entry.pattern)")
        }
        #expect(Route.adminConsole.access == .open)
    }
}
