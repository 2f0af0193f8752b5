import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The upstream of the `search` example: GitHub's repository search (or anything with its shape) over
/// URLSession. `GET {baseURL}/search/repositories?q=QUERY&page=N` → `{"items": [{"full_name": …}]}`.
public struct GitHubSearchClient: Sendable {
    public let baseURL: String
    public let timeout: Double

    public init(baseURL: String, timeout: Double = 10) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
    }

    /// What went wrong talking to the upstream; the message names the URL and the problem.
    public struct Failure: Error, CustomStringConvertible, Sendable {
        public var description: String
    }

    struct Page: Decodable {
        struct Item: Decodable {
            var full_name: String
        }
        var items: [Item]
    }

    /// One page of repository names, and the next page number when this one was not empty
    /// (as ReactorKit's GitHubSearch example pages).
    @Sendable public func search(query: String, page: Int) async throws -> (items: [String], nextPage: Int?) {
        var components = URLComponents(string: baseURL + "/search/repositories")
        components?.queryItems = [URLQueryItem(name: "q", value: query), URLQueryItem(name: "page", value: String(page))]
        guard let url = components?.url else { throw Failure(description: "search.baseURL \(baseURL) does not make a valid URL") }
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.setValue("application/vnd.github+json", forHTTPHeaderField: "Accept")
        request.setValue("reactor-server-search-example", forHTTPHeaderField: "User-Agent")
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let http = response as? HTTPURLResponse, http.statusCode == 200 else {
            let status = (response as? HTTPURLResponse)?.statusCode ?? 0
            throw Failure(description: "GET \(url.absoluteString) answered \(status), not 200")
        }
        let decoded: Page
        do {
            decoded = try JSONDecoder().decode(Page.self, from: data)
        } catch {
            throw Failure(description: "GET \(url.absoluteString) did not return {\"items\": [{\"full_name\": …}]}: \(error)")
        }
        let items = decoded.items.map(\.full_name)
        return (items, items.isEmpty ? nil : page + 1)
    }
}
