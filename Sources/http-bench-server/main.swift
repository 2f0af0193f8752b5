// http-bench-server: the HTTPServer module alone, serving what the load tools measure:
//   ANY  /fixed, GET /healthz                 → 200 {"status":"ok"} (the fixed-200 of wrk runs)
//   POST /sessions {"reactor":"counter"[,"id":"x"]} → 201, a counter session
//   GET  /sessions/ID                         → 200 {"id","reactor","version","state"}
//   POST /sessions/ID/actions {"type":"increase"|"decrease"} → 202 {"seq":N}; the new state is
//        broadcast (encoded once) to every subscriber
//   GET  /sessions/ID/events                  → SSE; first event is the current state
// usage: http-bench-server [--port N (0 picks a free port, logged)] [--host ADDR] [--loops N]
//        [--max-connections N] [--max-connections-per-address N] [--keep-alive-seconds S]
import HTTPServer
import Logs
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// One counter session and its subscribers.
final class Session: Sendable {
    struct State {
        var value = 0
        var version = 0
        var seq = 0
        var subscribers: [ObjectIdentifier: ServerSentEventStream] = [:]
    }
    let id: String
    let state = Mutex(State())
    init(id: String) { self.id = id }

    static func event(version: Int, value: Int) -> EncodedServerSentEvent {
        EncodedServerSentEvent(ServerSentEvent(event: "state", id: String(version), data: "{\"value\":\(value)}"))
    }
}

final class BenchResponder: HTTPResponder {
    let sessions = Mutex<[String: Session]>([:])
    let nextID = Atomic<Int>(0)
    static let okBody = Array("{\"status\":\"ok\"}".utf8)
    static let json: HTTPHeaders = ["Content-Type": "application/json"]

    func respond(to request: HTTPRequest, writer: HTTPResponseWriter) {
        let path = request.path
        if path == "/fixed" || path == "/healthz" {
            writer.respond(status: 200, headers: Self.json, body: Self.okBody)
            return
        }
        let segments = request.pathSegments
        guard segments.first == "sessions" else { return error(writer, 404, "not_found") }
        if segments.count == 1 && request.method == .POST { return create(request, writer) }
        guard segments.count >= 2, let session = sessions.withLock({ $0[segments[1]] }) else {
            return error(writer, 404, "unknown_session")
        }
        switch (request.method, segments.count > 2 ? segments[2] : nil) {
        case (.POST, "actions"?):
            let body = String(decoding: request.body, as: UTF8.self)
            let delta = body.contains("increase") ? 1 : (body.contains("decrease") ? -1 : 0)
            guard delta != 0 else { return error(writer, 422, "unknown_action") }
            let seq = session.state.withLock { state -> Int in
                state.seq += 1
                state.value += delta
                state.version += 1
                let event = Session.event(version: state.version, value: state.value)
                let overflowed = ServerSentEventStream.broadcast(event, to: Array(state.subscribers.values))
                // Too slow to keep up: this demo drops such subscribers (the service coalesces instead).
                for stream in overflowed { stream.close() }
                return state.seq
            }
            writer.respond(status: 202, headers: Self.json, body: Array("{\"seq\":\(seq)}".utf8))
        case (.GET, "events"?):
            let key = Mutex<ObjectIdentifier?>(nil)
            let stream = writer.startEventStream { [session] notice in
                guard case .closed = notice, let id = key.withLock({ $0 }) else { return }
                session.state.withLock { _ = $0.subscribers.removeValue(forKey: id) }
            }
            let id = ObjectIdentifier(stream)
            key.withLock { $0 = id }
            session.state.withLock { state in
                // The first event is the current state; a stream already gone is not kept.
                if stream.send(Session.event(version: state.version, value: state.value)) != .closed {
                    state.subscribers[id] = stream
                }
            }
        case (.GET, nil):
            let (version, value) = session.state.withLock { ($0.version, $0.value) }
            // One literal (a line continuation, not `+`): the benchmark's hot path builds one string per request.
            let body = """
                {"id":"\(session.id)","reactor":"counter","version":\(version),\
                "state":{"value":\(value)}}
                """
            writer.respond(status: 200, headers: Self.json, body: Array(body.utf8))
        default:
            error(writer, 404, "not_found")
        }
    }

    private func create(_ request: HTTPRequest, _ writer: HTTPResponseWriter) {
        let body = String(decoding: request.body, as: UTF8.self)
        guard body.contains("\"counter\"") else { return error(writer, 404, "unknown_reactor") }
        var id = "s\(nextID.add(1, ordering: .relaxed).newValue)"
        let parts = body.split(separator: "\"id\"", maxSplits: 1, omittingEmptySubsequences: false)
        if parts.count == 2 {
            let rest = parts[1].drop(while: { $0 == " " || $0 == ":" })
            guard rest.first == "\"", let end = rest.dropFirst().firstIndex(of: "\"") else {
                return error(writer, 400, "invalid_id")
            }
            id = String(rest[rest.index(after: rest.startIndex)..<end])
        }
        let created = sessions.withLock { sessions -> Bool in
            if sessions[id] != nil { return false }
            sessions[id] = Session(id: id)
            return true
        }
        guard created else { return error(writer, 409, "session_exists") }
        let response = "{\"id\":\"\(id)\",\"reactor\":\"counter\",\"version\":0,\"state\":{\"value\":0}}"
        var headers = Self.json
        headers["Location"] = "/sessions/\(id)"
        writer.respond(status: 201, headers: headers, body: Array(response.utf8))
    }

    private func error(_ writer: HTTPResponseWriter, _ status: Int, _ code: String) {
        writer.respond(
            status: status, headers: Self.json,
            body: Array("{\"error\":{\"code\":\"\(code)\",\"message\":\"\(code)\"}}".utf8))
    }
}

var configuration = HTTPServer.Configuration()
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst() else {
        Usage.fail("\(flag) needs a value; \(Usage.text)")
    }
    switch flag {
    case "--port": configuration.port = Int(value) ?? configuration.port
    case "--host": configuration.host = value
    case "--loops": configuration.loopCount = Int(value)
    case "--max-connections": configuration.maxConnections = Int(value)
    case "--max-connections-per-address": configuration.maxConnectionsPerAddress = Int(value)
    case "--keep-alive-seconds": configuration.eventStreamKeepAliveInterval = .seconds(Int64(value) ?? 15)
    default: Usage.fail("unknown flag \(flag); \(Usage.text)")
    }
}

enum Usage {
    static let text =
        "usage: http-bench-server [--port N] [--host ADDR] [--loops N] [--max-connections N] "
        + "[--max-connections-per-address N] [--keep-alive-seconds S]"

    static func fail(_ message: String) -> Never {
        let line = "http-bench-server: \(message)\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        exit(2)
    }
}

let logger = Logger(label: "http-bench-server", level: .info, handler: JSONLineLogHandler.standardError)
ShutdownSignals.block([SIGTERM, SIGINT])
HTTPServer.raiseOpenFileLimit()
let server = HTTPServer(configuration: configuration, responder: BenchResponder(), logger: logger)
do {
    _ = try server.start()
} catch {
    Usage.fail("cannot listen on \(configuration.host):\(configuration.port): \(error)")
}
ShutdownSignals.shutdownOnSignal(server)
server.waitUntilStopped()
