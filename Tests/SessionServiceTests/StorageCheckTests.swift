import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

/// The check of stored sessions (at start, in the background, and `reactor-server verify`) beside a serving
/// server: a session deleted between the listing and its reading is gone, not one that would not load.
@Suite(.offThePool) struct StorageCheckTests {
    @Test(arguments: TestStorage.all)
    func aSessionDeletedAfterItWasListedIsNotCountedAsFailing(storage: TestStorage) async throws {
        try await storage.withPlace("check-deleted") { place in
            let server = try TestServer(storage: place) { $0.storage.checkAtStart = 0 }
            try server.createSession("counter", id: "kept")
            try server.createSession("counter", id: "deleted")
            let stored = try #require(server.server.service.store.storage)
            let catalog = server.server.service.catalog
            let listed = try #require(stored.storedSessions().first { $0.id == "deleted" })
            #expect(try server.request("DELETE", "/sessions/deleted").status == 204)
            // What the check meets when a deletion slips in between: no outcome, neither loads nor fails.
            #expect(StorageCheck.outcome(of: listed, storage: stored, catalog: catalog, reducing: false) == nil)
            let check = StorageCheck.run(storage: stored, catalog: catalog, limit: nil, reducing: false) { _, id in
                Issue.record("\(id) counted as failing")
            }
            #expect(check.stored == 1 && check.checked == 1 && check.failed == 0 && check.asStored == 1)
            let kept = try #require(stored.storedSessions().first { $0.id == "kept" })
            #expect(
                StorageCheck.outcome(of: kept, storage: stored, catalog: catalog, reducing: false).map {
                    (try? $0.get()) != nil
                } == true)
        }
    }
}
