import Examples
import JSONCodec
import SessionService

/// The search example's settings (`search.*`): where its upstream is and how much of it the server may
/// use. They belong to the example, not to the server: ``ExampleCatalog/settings`` adds them to the
/// server's schema, and a configuration holds them as `configuration[section: .search]`.
public struct SearchSettings: ConfigurationSection {
    /// The upstream, in the shape of GitHub's search API.
    public var baseURL = "https://api.github.com"
    /// Time one upstream search request may take in all.
    public var timeoutSeconds = 10.0
    /// Upstream requests in flight at once, across all search sessions.
    public var maxConcurrentRequests = 4
    /// Searches waiting for a turn; beyond this a search fails at once.
    public var maxQueuedRequests = 64

    public init() {}

    /// The client these settings describe.
    public func client() -> GitHubSearchClient {
        GitHubSearchClient(
            baseURL: baseURL, timeout: timeoutSeconds, maxConcurrent: maxConcurrentRequests,
            maxQueued: maxQueuedRequests)
    }

    /// The rows these settings add to the configuration schema.
    static let settings: [ConfigurationSetting] = [
        .string(
            "search.baseURL", \.[section: .search].baseURL, expected: "an http(s) URL",
            "Upstream of the search example reactor (GitHub's search API shape).", check: checkHTTPURL),
        .seconds(
            "search.timeoutSeconds", \.[section: .search].timeoutSeconds, 0.1...600,
            "Time one upstream search request may take in all."),
        .integer(
            "search.maxConcurrentRequests", \.[section: .search].maxConcurrentRequests, 1...1000,
            "Upstream search requests in flight at once, across all sessions."),
        .integer(
            "search.maxQueuedRequests", \.[section: .search].maxQueuedRequests, 0...100_000,
            "Searches waiting for a turn; beyond this a search fails at once (its error is in the state)."),
    ]

    /// Nil for an http(s) URL, else what is wrong with it.
    static func checkHTTPURL(_ url: String) -> String? {
        let valid =
            (url.hasPrefix("http://") || url.hasPrefix("https://")) && url.count > 8
            && !url.contains(where: { $0.isWhitespace })
        return valid ? nil : "expected an http:// or https:// URL, got \(JSONWriter.quoted(url))"
    }
}

extension ConfigurationSectionKey where Section == SearchSettings {
    /// The search example's settings.
    public static var search: Self { Self() }
}
