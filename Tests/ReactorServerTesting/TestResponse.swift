import Foundation

/// One HTTP response as ``TestClient`` read it: status, header fields in order, the body (de-chunked).
///
/// ```swift
/// let response = try client.request("POST", "/sessions", body: #"{"reactor":"counter"}"#)
/// #expect(response.status == 201)
/// #expect(response.header("Location") == "/sessions/\(try response.json()["id"] as! String)")
/// #expect(try client.request("GET", "/sessions/nope").errorCode == "unknown_session")
/// ```
public struct TestResponse: Sendable {
    /// The status code.
    public var status: Int
    /// The header fields, in the order received.
    public var headers: [(name: String, value: String)]
    /// The body; empty for HEAD, 1xx, 204 and 304.
    public var body: [UInt8]

    /// A response from its parts.
    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The first field named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        headers.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// The body as UTF-8 text.
    public var text: String { String(decoding: body, as: UTF8.self) }

    /// The body as a JSON object (Foundation), for assertions.
    public func json() throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
            throw TestFailure("expected a JSON object, got \(status) \(text.debugDescription)")
        }
        return object
    }

    /// `error.code` of an error body (nil when the body is not one).
    public var errorCode: String? { ((try? json())?["error"] as? [String: Any])?["code"] as? String }

    /// `error.message` of an error body.
    public var errorMessage: String? { ((try? json())?["error"] as? [String: Any])?["message"] as? String }
}

/// One Server-Sent Event as ``TestClient/nextEvent(includeComments:)`` parsed it: the fields of the
/// WHATWG format, with helpers for the JSON in `data`. General enough for both kinds of stream:
/// `GET /sessions/{id}/events` (the version is the `id`) and `GET /events?sessions=…` (every `data` is
/// an object naming its `session`, and `id` is an opaque cursor).
///
/// ```swift
/// let event = try stream.nextEvent()
/// #expect(event.event == "state")
/// #expect(event.session == "a" && event.version == 12)
/// #expect(try event.object()["state"] as? [String: Int] == ["value": 3])
/// ```
public struct TestEvent: Equatable, Sendable {
    /// `event:` (nil for the default "message").
    public var event: String?
    /// `id:` as sent.
    public var id: String?
    /// The `data:` lines joined with newlines.
    public var data: String?
    /// `retry:` in milliseconds.
    public var retry: Int?
    /// The last comment line (`: keep-alive` → `"keep-alive"`).
    public var comment: String?

    /// An event from its fields.
    public init(event: String? = nil, id: String? = nil, data: String? = nil, retry: Int? = nil, comment: String? = nil)
    {
        self.event = event
        self.id = id
        self.data = data
        self.retry = retry
        self.comment = comment
    }

    /// Parses one event block (the lines before the blank line that ends it).
    public init(block: String) {
        self.init()
        for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix(":") {
                comment = String(line.dropFirst()).trimmingCharacters(in: .whitespaces)
                continue
            }
            let pieces = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
            var value = pieces.count > 1 ? String(pieces[1]) : ""
            if value.hasPrefix(" ") { value.removeFirst() }
            switch pieces[0] {
            case "event": event = value
            case "id": id = value
            case "data": data = data.map { $0 + "\n" + value } ?? value
            case "retry": retry = Int(value)
            default: break
            }
        }
    }

    /// Whether the block held only comments (a keep-alive).
    public var isComment: Bool { event == nil && data == nil && id == nil && retry == nil }

    /// `data` parsed as any JSON value.
    public func json() throws -> Any {
        do {
            return try JSONSerialization.jsonObject(with: Data((data ?? "").utf8), options: [.fragmentsAllowed])
        } catch {
            throw TestFailure("event \(event ?? "message") has no JSON data: \((data ?? "").debugDescription)")
        }
    }

    /// `data` as a JSON object.
    public func object() throws -> [String: Any] {
        guard let object = try json() as? [String: Any] else {
            throw TestFailure(
                "event \(event ?? "message") has no JSON object in its data: \((data ?? "").debugDescription)")
        }
        return object
    }

    /// The session a multiplexed stream's event belongs to (`data.session`); nil on a one-session stream.
    public var session: String? { (try? object())?["session"] as? String }

    /// The version a state event carries: `data.version` on a multiplexed stream, else the `id`.
    public var version: Int? {
        if let version = (try? object())?["version"] as? Int, session != nil { return version }
        return id.flatMap { Int($0) }
    }
}
