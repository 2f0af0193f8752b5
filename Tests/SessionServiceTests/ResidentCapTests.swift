import Foundation
import ReactorServerTesting
import SessionService
import Testing

/// With 100,000 stored sessions and `sessions.maxResident` 1,000, memory holds at most 1,000 of them and
/// any of the others comes back on its next request.
@Suite(.offThePool) struct ResidentCapTests {
    @Test func theResidentCapHoldsUnder100000Sessions() throws {
        try withTemporaryDirectory("residentcap") { directory in
            let cap = 1_000
            let total = 100_000
            let server = try TestServer(dataDirectory: directory) {
                $0.sessions.maxResident = cap
                $0.sessions.limit = total
            }
            let store = server.server.service.store
            let connection = try server.connect()
            var largest = 0
            let batch = 500
            // Pipelined, so 100,000 creations take seconds, not minutes.
            for start in stride(from: 0, to: total, by: batch) {
                var requests = ""
                for index in start..<(start + batch) {
                    let body = #"{"reactor":"counter","id":"s\#(index)"}"#
                    requests +=
                        "POST /sessions HTTP/1.1\r\nHost: test\r\nContent-Type: application/json\r\n"
                        + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)"
                    // Every 1,000th session gets one action, so versions differ.
                    if index % 1_000 == 7 {
                        requests +=
                            "POST /sessions/s\(index)/actions HTTP/1.1\r\nHost: test\r\n"
                            + "Content-Type: application/json\r\nContent-Length: 19\r\n\r\n{\"type\":\"increase\"}"
                    }
                }
                try connection.send(requests)
                for index in start..<(start + batch) {
                    let created = try connection.readResponse(method: "POST")
                    guard created.status == 201 else {
                        Issue.record("creating s\(index): \(created.status) \(created.text)")
                        return
                    }
                    if index % 1_000 == 7 { #expect(try connection.readResponse(method: "POST").status == 202) }
                }
                largest = max(largest, store.residentCount)
            }
            #expect(store.count == total)
            // A new session stays on disk until it is used, so creating them loads few: use five times
            // the cap (every 20th session, pipelined), and memory must still hold at most the cap.
            var loaded = 0
            for start in stride(from: 0, to: total, by: 20 * batch) {
                let ids = Array(stride(from: start + 3, to: min(start + 20 * batch, total), by: 20))
                try connection.send(ids.map { "GET /sessions/s\($0) HTTP/1.1\r\nHost: test\r\n\r\n" }.joined())
                for index in ids {
                    let response = try connection.readResponse()
                    guard response.status == 200 else {
                        Issue.record("loading s\(index): \(response.status) \(response.text)")
                        return
                    }
                    loaded += 1
                }
                largest = max(largest, store.residentCount)
            }
            #expect(loaded == 5 * cap)
            #expect(largest <= cap, "\(largest) sessions were resident with a cap of \(cap)")
            #expect(store.residentCount <= cap)
            // Sessions long evicted come back with their versions; the cap still holds.
            for index in stride(from: 7, to: total, by: 9_973) {
                let session = try connection.request("GET", "/sessions/s\(index)").json()
                #expect(session["version"] as? Int == (index % 1_000 == 7 ? 1 : 0), "s\(index)")
                #expect(store.residentCount <= cap)
            }
        }
    }
}
