import Examples
import Foundation
import ReactorServerTesting
import Reactors
import ReactorsTesting
import Synchronization
import Testing

/// A fetch function the test answers by hand, one request at a time.
final class ScriptedFetch: Sendable {
    private struct Request {
        var query: String
        var page: Int
        var continuation: CheckedContinuation<(items: [String], nextPage: Int?), any Error>
    }
    private let state = Mutex<(requests: [Request], waiters: [CheckedContinuation<Void, Never>])>(([], []))

    var fetch: SearchReactor.Fetch {
        { query, page in
            try await withCheckedThrowingContinuation { continuation in
                let waiters = self.state.withLock { state in
                    state.requests.append(Request(query: query, page: page, continuation: continuation))
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
            }
        }
    }

    /// Waits, bounded, for the `index`-th request (0-based) and returns its query and page.
    func request(_ index: Int) async throws -> (query: String, page: Int) {
        try await waitFor("search request \(index) to reach the fetch") { await self.arrived(index) }
    }

    private func arrived(_ index: Int) async -> (query: String, page: Int) {
        while true {
            let found = state.withLock { state in
                index < state.requests.count ? (state.requests[index].query, state.requests[index].page) : nil
            }
            if let found { return found }
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state in
                    if index < state.requests.count { return true }
                    state.waiters.append(continuation)
                    return false
                }
                if ready { continuation.resume() }
            }
        }
    }

    func respond(_ index: Int, with result: Result<(items: [String], nextPage: Int?), any Error>) {
        state.withLock { $0.requests[index].continuation }.resume(with: result)
    }
}

@Suite(.offThePool) struct SearchReactorTests {
    typealias State = SearchReactor.State

    @Test func aSearchCutOffByAServerStopEndsAsAFailedOne() {
        let reactor = SearchReactor()
        let spinning = SearchReactor.State(query: "swift", isLoading: true)
        let mutations = reactor.recover(interrupted: .updateQuery("swift"), state: spinning)
        #expect(
            mutations == [
                .failed(query: "swift", message: "the search was cut off when the server stopped; search again")
            ])
        let after = mutations.reduce(spinning) { reactor.reduce(state: $0, mutation: $1) }
        #expect(after.isLoading == false && after.error != nil)
        #expect(reactor.recover(interrupted: .loadNextPage, state: after).isEmpty)
    }

    @Test func searchThenLoadNextPage() async throws {
        let fetch = ScriptedFetch()
        let tester = ReactorTester(SearchReactor(fetch: fetch.fetch))
        await tester.send(.updateQuery("swift")) { $0.query = "swift" }
        await tester.receive(.setLoading(true)) { $0.isLoading = true }
        #expect(try await fetch.request(0) == ("swift", 1))
        fetch.respond(0, with: .success((["a", "b"], 2)))
        await tester.receive(.setResults(query: "swift", items: ["a", "b"], nextPage: 2)) {
            $0.items = ["a", "b"]
            $0.nextPage = 2
            $0.isLoading = false
        }
        await tester.send(.loadNextPage) { $0.isLoading = true }
        #expect(try await fetch.request(1) == ("swift", 2))
        fetch.respond(1, with: .success((["c"], nil)))
        await tester.receive(.appendResults(query: "swift", items: ["c"], nextPage: nil)) {
            $0.items.append("c")
            $0.nextPage = nil
            $0.isLoading = false
        }
        // No next page: nothing happens (finish fails for any state or effect it would have started).
        await tester.send(.loadNextPage)
        await tester.finish()
    }

    @Test func aNewQueryCancelsTheSearchInFlightAndAStaleResponseNeverLands() async throws {
        let fetch = ScriptedFetch()
        let tester = ReactorTester(SearchReactor(fetch: fetch.fetch))
        await tester.send(.updateQuery("sw")) { $0.query = "sw" }
        await tester.receive(.setLoading(true)) { $0.isLoading = true }
        _ = try await fetch.request(0)
        await tester.send(.updateQuery("swift")) { $0.query = "swift" }
        await tester.receive(.setLoading(true))
        _ = try await fetch.request(1)
        fetch.respond(0, with: .success((["stale"], 2)))
        fetch.respond(1, with: .success((["fresh"], nil)))
        await tester.receive(.setResults(query: "swift", items: ["fresh"], nextPage: nil)) {
            $0.items = ["fresh"]
            $0.isLoading = false
        }
        // Exhaustive: finish waits for the cancelled search to end and fails if its results landed.
        await tester.finish()
    }

    @Test func aFailedFetchClearsTheSpinnerShowsWhyAndIsReported() async throws {
        let fetch = ScriptedFetch()
        let tester = ReactorTester(SearchReactor(fetch: fetch.fetch))
        let reported = Mutex<[String]>([])
        tester.runtime.setErrorHandler { error in reported.withLock { $0.append("\(error)") } }
        await tester.send(.updateQuery("x")) { $0.query = "x" }
        await tester.receive(.setLoading(true)) { $0.isLoading = true }
        _ = try await fetch.request(0)
        fetch.respond(0, with: .failure(URLError(.timedOut)))
        await tester.receive(.failed(query: "x", message: "\(URLError(.timedOut))")) {
            $0.isLoading = false
            $0.error = "\(URLError(.timedOut))"
        }
        await tester.finish()
        #expect(reported.withLock { $0 } == ["\(URLError(.timedOut))"])
    }

    @Test func clearingTheQueryClearsResultsWithoutFetching() async throws {
        let tester = ReactorTester(
            SearchReactor(fetch: { _, _ in
                Issue.record("must not fetch")
                return ([], nil)
            }))
        await tester.send(.updateQuery("")) { $0.query = "" }
        await tester.receive(.setResults(query: "", items: [], nextPage: nil))
        await tester.send(.updateQuery(nil)) { $0.query = nil }
        await tester.receive(.setResults(query: "", items: [], nextPage: nil))
        await tester.finish()
    }

    /// Non-exhaustive: a test about the results alone skips the spinner's states and leaves the rest unchecked.
    @Test func onlyTheResultsMatter() async {
        let tester = ReactorTester(
            SearchReactor(fetch: { query, _ in ([query + " 1", query + " 2"], nil) }),
            exhaustivity: .off)
        await tester.send(.updateQuery("swift"))
        await tester.receive { $0.items = ["swift 1", "swift 2"] }
        await tester.finish()
    }

    @Test func sampleFetchPagesThroughTheBuiltInCatalogue() async throws {
        let first = try await SearchReactor.sampleFetch("swift", 1)
        #expect(first.items.count == SearchReactor.samplePageSize)
        #expect(first.nextPage == 2)
        let none = try await SearchReactor.sampleFetch("no such repository", 1)
        #expect(none.items.isEmpty && none.nextPage == nil)
    }

    @Test(arguments: [
        (#"{"type":"updateQuery","query":"swift"}"#, SearchReactor.Action.updateQuery("swift")),
        (#"{"type":"updateQuery"}"#, .updateQuery(nil)),
        (#"{"type":"loadNextPage"}"#, .loadNextPage),
    ])
    func actionsRoundTripTheWireShape(json: String, action: SearchReactor.Action) throws {
        #expect(try JSONDecoder().decode(SearchReactor.Action.self, from: Data(json.utf8)) == action)
        #expect(try JSONDecoder().decode(SearchReactor.Action.self, from: JSONEncoder().encode(action)) == action)
    }
}
