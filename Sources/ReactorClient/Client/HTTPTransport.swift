import Foundation
import JSONCodec

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Builds the API's requests and runs them on `URLSession`: one place for URLs, headers, cancellation and the
/// mapping of answers to ``ReactorClientError``.
struct HTTPTransport: Sendable {
    let baseURL: URL
    let configuration: ReactorClient.Configuration

    /// `baseURL` + the percent-encoded path segments + the query, percent-encoded except for the commas that
    /// separate list values (`sessions=a,b`; ids and tokens hold no commas).
    func url(_ segments: [String], query: [(String, String)] = []) -> URL {
        var text = baseURL.absoluteString
        while text.hasSuffix("/") { text.removeLast() }
        for segment in segments { text += "/" + Self.percentEncoded(segment) }
        if !query.isEmpty {
            text +=
                "?"
                + query.map { name, value in
                    Self.percentEncoded(name) + "="
                        + value.split(separator: ",", omittingEmptySubsequences: false).map {
                            Self.percentEncoded(String($0))
                        }.joined(separator: ",")
                }.joined(separator: "&")
        }
        // Every byte outside the unreserved set is escaped above, so this always parses.
        return URL(string: text)!
    }

    /// A request with JSON headers, `Authorization: Bearer` when `bearer` is set, and `body` when given.
    func request(
        _ method: String, _ segments: [String], query: [(String, String)] = [], body: [UInt8]? = nil, bearer: String?
    ) -> URLRequest {
        var request = URLRequest(url: url(segments, query: query))
        request.httpMethod = method
        request.cachePolicy = .reloadIgnoringLocalCacheData
        request.timeoutInterval = configuration.requestTimeout.timeInterval
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        if let bearer { request.setValue("Bearer \(bearer)", forHTTPHeaderField: "Authorization") }
        if let body {
            request.httpBody = Data(body)
            request.setValue("application/json; charset=utf-8", forHTTPHeaderField: "Content-Type")
        }
        return request
    }

    /// Runs `request`; returns the status and body of a 2xx answer, throws the API error of any other.
    func send(_ request: URLRequest) async throws(ReactorClientError) -> (status: Int, body: [UInt8]) {
        let (data, response) = try await perform(request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let body = [UInt8](data)
        guard (200..<300).contains(status) else { throw .answer(status: status, body: body) }
        return (status, body)
    }

    /// Runs `request` and parses the 2xx answer's JSON body.
    func json(_ request: URLRequest) async throws(ReactorClientError) -> JSONValue {
        let (_, body) = try await send(request)
        return try APIResponse.parse(body)
    }

    /// The data task, cancelled with the calling task.
    private func perform(_ request: URLRequest) async throws(ReactorClientError) -> (Data, URLResponse) {
        let running = RunningTask()
        do {
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation {
                    (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                    let task = configuration.urlSession.dataTask(with: request) { data, response, error in
                        running.complete()
                        if let error {
                            continuation.resume(throwing: error)
                        } else if let data, let response {
                            continuation.resume(returning: (data, response))
                        } else {
                            continuation.resume(throwing: URLError(.badServerResponse))
                        }
                    }
                    if !running.start(task) { continuation.resume(throwing: CancellationError()) }
                }
            } onCancel: {
                running.cancel()
            }
        } catch {
            throw .transport(error)
        }
    }

    /// RFC 3986 unreserved characters stay; every other byte is `%XX` (so `+` never reads as a space).
    static func percentEncoded(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = Array("0123456789ABCDEF".unicodeScalars)
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(hex[Int(byte >> 4)])
                out.unicodeScalars.append(hex[Int(byte & 0x0F)])
            }
        }
        return out
    }
}

extension Duration {
    /// The duration in seconds, for Foundation's `TimeInterval` settings.
    var timeInterval: TimeInterval {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
