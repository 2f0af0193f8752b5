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
    /// The clock `timeout` is measured on (a test's own, to reach deadlines without waiting for them).
    public let clock: any Clock<Duration>
    /// Longest query sent upstream, in UTF-8 bytes; longer ones fail without a request.
    public static let maxQueryBytes = 256
    private let limiter: UpstreamLimiter

    public init(
        baseURL: String, timeout: Double = 10, maxConcurrent: Int = 4, maxQueued: Int = 64,
        clock: any Clock<Duration> = ContinuousClock()
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
        self.clock = clock
        limiter = UpstreamLimiter(concurrency: maxConcurrent, queueLimit: maxQueued, clock: clock)
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
            let clock = self.clock
            let waited: @Sendable () -> Duration = Self.stopwatch(clock)
            (data, response) = try await limiter.run(waitingAtMost: timeout) { [clock, timeout] in
                let left = max(.milliseconds(1), .seconds(timeout) - waited())
                return try await Self.fetch(request, within: left, on: clock, timeout: timeout)
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

    /// The time passed on `clock` since the call, each time it is called.
    static func stopwatch<C: Clock<Duration>>(_ clock: C) -> @Sendable () -> Duration {
        let start = clock.now
        return { start.duration(to: clock.now) }
    }

    /// One request with a deadline on `clock` for the whole exchange (URLRequest's own timeout only bounds
    /// silences), cancelled with the calling task.
    static func fetch(
        _ request: URLRequest, within limit: Duration, on clock: any Clock<Duration>, timeout: Double
    ) async throws -> (Data, URLResponse) {
        let box = TaskBox()
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation {
                (continuation: CheckedContinuation<(Data, URLResponse), any Error>) in
                let finished = OnceFlag()
                let deadline = FetchDeadline()
                let task = URLSession.shared.dataTask(with: request) { data, response, error in
                    guard finished.claim() else { return }
                    deadline.cancel()
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
                deadline.start(after: limit, on: clock) {
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

/// A fetch's deadline: `work` runs once `clock` passed the limit, unless cancelled first.
private final class FetchDeadline: @unchecked Sendable {
    private let lock = NSLock()
    private var timer: Task<Void, Never>?
    private var cancelled = false

    func start(after limit: Duration, on clock: any Clock<Duration>, _ work: @escaping @Sendable () -> Void) {
        let timer = Task {
            // Cancelled: the answer came first.
            guard (try? await clock.sleep(for: limit)) != nil else { return }
            work()
        }
        let cancel = lock.withLock { () -> Bool in
            self.timer = timer
            return cancelled
        }
        if cancel { timer.cancel() }
    }

    func cancel() {
        let timer = lock.withLock { () -> Task<Void, Never>? in
            cancelled = true
            return self.timer
        }
        timer?.cancel()
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
