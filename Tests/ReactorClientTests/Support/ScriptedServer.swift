import Foundation
import HTTPServer
import Logs
import Synchronization

/// A tiny HTTP server on 127.0.0.1:0 that answers by script, for what the real server cannot be made to do on
/// demand (`event: error` codes, `retry:`, 503s) or does not do yet (the multiplexed stream, access tokens). It
/// records every request and every event stream that the client closed.
final class ScriptedServer: HTTPResponder, Sendable {
    /// A request as the server saw it: target and headers (names lower-cased).
    struct Seen: Sendable, CustomStringConvertible {
        var target: String
        var headers: [String: String]
        var description: String { "\(target) \(headers)" }

        /// The decoded value of query parameter `name`.
        func query(_ name: String) -> String? {
            HTTPRequest(method: .GET, target: target).queryValue(name)
        }
    }

    /// How the script answers one request.
    enum Reply: Sendable {
        /// A plain answer with a JSON body and extra header fields.
        case status(Int, json: String, headers: [(String, String)] = [])
        /// An event stream: these events, then the stream stays open (`close: false`) or ends.
        case events([Event], close: Bool)
    }

    /// One event the script sends (the server's own framing writes it).
    struct Event: Sendable {
        var type: String?
        var id: String?
        var data: String
        var retry: Int?

        init(_ type: String? = nil, id: String? = nil, _ data: String, retry: Int? = nil) {
            self.type = type
            self.id = id
            self.data = data
            self.retry = retry
        }

        var framed: ServerSentEvent { ServerSentEvent(event: type, id: id, data: data, retry: retry) }
    }

    struct Log: Sendable, CustomStringConvertible {
        var requests: [Seen] = []
        /// Event streams that ended without the script closing them (the client went away).
        var closedByClient = 0
        var description: String { "requests \(requests), closed by the client: \(closedByClient)" }
    }

    let log = Observed(Log())
    private let script: @Sendable (_ number: Int, _ request: Seen) -> Reply
    private let openStreams = Mutex<[ServerSentEventStream]>([])
    private let http = Mutex<HTTPServer?>(nil)
    private let boundPort = Mutex(0)

    /// Starts answering with `script` (given the 0-based number of the request).
    init(_ script: @escaping @Sendable (_ number: Int, _ request: Seen) -> Reply) throws {
        self.script = script
        var configuration = HTTPServer.Configuration()
        configuration.port = 0
        configuration.loopCount = 1
        let server = HTTPServer(configuration: configuration, responder: self, logger: .disabled)
        let port = Int(try server.start().port)
        boundPort.withLock { $0 = port }
        http.withLock { $0 = server }
    }

    /// The port it listens on.
    var port: Int { boundPort.withLock { $0 } }

    /// `http://127.0.0.1:<port>`.
    var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    deinit {
        let server = http.withLock { $0.take() }
        server?.shutdown()
        server?.waitUntilStopped()
    }

    /// Sends `event` on every stream still open.
    func broadcast(_ event: Event) {
        for stream in openStreams.withLock({ $0 }) { _ = stream.send(event.framed) }
    }

    func respond(to request: consuming HTTPRequest, writer: HTTPResponseWriter) {
        var headers: [String: String] = [:]
        for field in request.headers { headers[field.name.lowercased()] = field.value }
        let seen = Seen(target: request.target, headers: headers)
        var number = 0
        log.update {
            number = $0.requests.count
            $0.requests.append(seen)
        }
        switch script(number, seen) {
        case .status(let status, let json, let extra):
            writer.respond(
                status: status, headers: HTTPHeaders([("Content-Type", "application/json")] + extra),
                body: Array(json.utf8))
        case .events(let events, let close):
            let log = log
            let stream = writer.startEventStream(headers: ["Cache-Control": "no-cache"]) { notice in
                if case .closed = notice { log.update { $0.closedByClient += 1 } }
            }
            for event in events { _ = stream.send(event.framed) }
            if close {
                stream.close()
            } else {
                openStreams.withLock { $0.append(stream) }
            }
        }
    }
}
