import Examples
import Foundation
import ReactorClient
import Reactors
import Testing

/// The typed client creates a session with params, and reports refused ones by their code.
@Suite struct SessionParamsClientTests {
    @Test func createSessionPassesParams() async throws {
        let server = try LiveServer()
        let client = server.client()
        let session = try await client.createSession(
            reactor: "profile", as: ProfileReactor.self, id: "p", params: ProfileReactor.Params(userID: 7))
        #expect(session.created?.state == ProfileReactor.State(userID: 7))
        #expect(try await session.get().state.userID == 7)
        do {
            _ = try await client.createSession(
                reactor: "profile", as: ProfileReactor.self, params: ProfileReactor.Params(userID: 0))
            Issue.record("params with userID 0 were accepted")
        } catch {
            guard case .server(let status, let code, let message) = error else {
                Issue.record("unexpected error \(error)")
                return
            }
            #expect(status == 422 && code == .invalidParams && message.contains("userID"), "\(message)")
        }
    }
}
