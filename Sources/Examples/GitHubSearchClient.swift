import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The upstream of the `search` example: GitHub's repository search (or anything with its shape) over
/// URLSession. `GET {baseURL}/search/repositories?q=QUERY&page=N` → `{"items": [{"full_name": …}]}`.
///
/// Bounded, so an upstream that never answers cannot pile up work: at most `maxConcurrent` requests
/// run at once and `maxQueued` wait (beyond that a search fails at once), each search has `timeout`
/// seconds in all, waiting for a turn included, and a cancelled search cancels its HTTP request.
public struct GitHubSearchClient: Sendable {
    public let baseURL: String
    public let timeout: Double
    /// Longest query sent upstream, in UTF-8 bytes; longer ones fail without a request.
    public static let maxQueryBytes = 256
    private let limiter: UpstreamLimiter

    public init(baseURL: String, timeout: Double = 10, maxConcurrent: Int = 4, maxQueued: Int = 64) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
        limiter = UpstreamLimiter(concurrency: maxConcurrent, queueLimit: maxQueued)
    }

    /// Requests running and waiting now.
    public var load: (running: Int, waiting: Int) { limiter.load }

    /// What went wrong talking to the upstream; the message names the URL and the problem.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    struct Page: Decodable {
        struct Item: Decodable {
            var fullName: String

            enum CodingKeys: String, CodingKey {
                case fullName = "full_name"
            }
        }
        var items: [Item]
    }

    /// One page of repository names, and the next page number when this one was not empty
    /// (as ReactorKit's GitHubSearch example pages).
    @Sendable public func search(query: String, page: Int) async throws -> (items: [String], nextPage: Int?) {
        guard query.utf8.count <= Self.maxQueryBytes else {
            throw Failure(
                description:
                    "the query is \(query.utf8.count) bytes long; "
                    + "at most \(Self.maxQueryBytes) are sent to the search upstream"
            )
        }
        var components = URLComponents(string: baseURL + "/search/repositories")
        components?.queryItems = [
            URLQueryItem(name: "q", value: query), URLQueryItem(name: "page", value: String(page)),
        ]
        guard let url = components?.url else {
            throw Failure(description: "search.baseURL \(baseURL) does not make a valid URL")
        }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.setValue("application/vnd.github+json", forHTTPHeaderField: "Accept")
        request.setValue("reactor-server-search-example", forHTTPHeaderField: "User-Agent")
        let (data, response): (Data, URLResponse)
        do {
            // The wait for a turn counts against the same timeout: a search nobody waits for any more
            // never starts.
            let started = DispatchTime.now()
            (data, response) = try await limiter.run(waitingAtMost: timeout) {
                let waited = Double(DispatchTime.now().uptimeNanoseconds - started.uptimeNanoseconds) / 1e9
                return try await Self.fetch(request, within: max(0.001, timeout - waited), timeout: timeout)
            }
        } catch let busy as UpstreamLimiter.Busy {
            throw Failure(description: "search upstream \(baseURL): \(busy.description); try again shortly")
        }
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            throw Failure(description: "GET \(url.absoluteString) answered \(status), not 200")
        }
        let decoded: Page
        do {
            decoded = try JSONDecoder().decode(Page.self, from: data)
        } catch {
            throw Failure(
                description: "GET \(url.absoluteString) did not return {\"items\": [{\"full_name\": …}]}: \(error)")
        }
        let items = decoded.items.map(\.fullName)
        return (items, items.isEmpty ? nil : page + 1)
    }

    /// One request with a deadline for the whole exchange (URLRequest's own timeout only bounds
    /// silences), cancelled with the calling task.
    static func fetch(_ request: URLRequest, within seconds: Double, timeout: Double) async throws -> (
        Data, URLResponse
    ) {
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let finished = OnceFlag()
                let task = URLSession.shared.dataTask(with: request) { data, response, error in
                    guard finished.claim() else { return }
                    if let data, let response {
                        continuation.resume(returning: (data, response))
                    } else {
                        continuation.resume(
                            throwing: error.map { $0 as any Error }
                                ?? Failure(
                                    description: "GET \(request.url?.absoluteString ?? "?") failed without an error"))
                    }
                }
                box.set(task)
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
                    guard finished.claim() else { return }
                    task.cancel()
                    continuation.resume(
                        throwing: Failure(
                            description:
                                "GET \(request.url?.absoluteString ?? "?") did not finish within \(timeout) s "
                                + "(search.timeoutSeconds)"
                        ))
                }
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
    }
}

/// The URLSession task of one fetch, for cancelling it from the task's cancellation handler.
private final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var cancelled = false

    func set(_ task: URLSessionDataTask) {
        let cancel = lock.withLock { () -> Bool in
            self.task = task
            return cancelled
        }
        if cancel { task.cancel() }
    }

    func cancel() {
        let task = lock.withLock { () -> URLSessionDataTask? in
            cancelled = true
            return self.task
        }
        task?.cancel()
    }
}

/// True for the first caller of `claim()` only.
private final class OnceFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var done = false

    func claim() -> Bool {
        lock.withLock {
            defer { done = true }
            return !done
        }
    }
}
