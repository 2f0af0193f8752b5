import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Everything a client call or stream can fail with.
///
/// ```swift
/// do {
///     try await session.send(.increase)
/// } catch .server(_, .unknownSession, _) {
///     showGone()
/// } catch .transport(let message) {
///     showOffline(message)
/// } catch {
///     show(error.description)
/// }
/// ```
public enum ReactorClientError: Error, Sendable, Hashable {
    /// The server answered with an API error: HTTP status, code and its human message.
    case server(status: Int, code: ServerErrorCode, message: String)
    /// The server ended an event stream with `event: error` (the stream reconnects by itself for the known codes).
    case stream(code: ServerErrorCode, message: String)
    /// No HTTP answer: refused, reset, timed out, name not resolved … (`URLError`'s description).
    case transport(String)
    /// An answer this client cannot read: not JSON, a member missing, a state that does not decode as `State`,
    /// an HTTP error without an API error body (a proxy's page), an event over the parser's limits.
    case invalidResponse(String)
    /// A value this client was asked to send does not encode (an action that is not `{"type": …}`).
    case encoding(String)
    /// The calling task was cancelled.
    case cancelled

    /// The API error code, for `.server` and `.stream`; nil otherwise.
    public var code: ServerErrorCode? {
        switch self {
        case .server(_, let code, _), .stream(let code, _): code
        default: nil
        }
    }

    /// Whether trying again later may succeed: transport failures, 5xx answers (other than `session_unavailable`
    /// and friends, which need an operator), 408 and 429, and the stream endings that ask for a reconnect.
    public var isTransient: Bool {
        switch self {
        case .transport, .stream: true
        case .server(let status, let code, _):
            switch code {
            case .sessionUnavailable, .memoryOnly, .internalError: false
            default: status >= 500 || status == 408 || status == 429
            }
        case .invalidResponse, .encoding, .cancelled: false
        }
    }

    /// The error for an answer outside 2xx: the API error body when there is one.
    static func answer(status: Int, body: [UInt8]) -> ReactorClientError {
        if let error = try? APIResponse.parse(body)["error"], let code = error["code"]?.stringValue {
            return .server(
                status: status, code: ServerErrorCode(rawValue: code), message: error["message"]?.stringValue ?? "")
        }
        let text = String(decoding: body.prefix(200), as: UTF8.self)
        return .invalidResponse("HTTP \(status) without an API error body" + (text.isEmpty ? "" : ": \(text)"))
    }

    /// The error for a failed `URLSession` task.
    static func transport(_ error: any Error) -> ReactorClientError {
        if let urlError = error as? URLError {
            return urlError.code == .cancelled
                ? .cancelled : .transport(urlError.localizedDescription + " (URLError \(urlError.code.rawValue))")
        }
        if error is CancellationError { return .cancelled }
        return .transport("\(error)")
    }
}

extension ReactorClientError: CustomStringConvertible {
    /// One line for logs and status text.
    public var description: String {
        switch self {
        case .server(let status, let code, let message): "HTTP \(status) \(code): \(message)"
        case .stream(let code, let message): "stream ended with \(code): \(message)"
        case .transport(let message): "no answer from the server: \(message)"
        case .invalidResponse(let message): "unreadable answer: \(message)"
        case .encoding(let message): "cannot encode: \(message)"
        case .cancelled: "cancelled"
        }
    }
}
