import Foundation
import ReactorServerTesting
import Testing

@testable import SessionService

#if canImport(Glibc)
    import Glibc
#endif

/// The journal is readable by the server's user only, and a deleted session's records do not stay
/// readable on disk.
@Suite(.offThePool) struct JournalPrivacyTests {
    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    static func journalFiles(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).map { directory + "/" + $0 }
    }

    /// The mode a private entry of the data folder has: 0700 for a folder (the crash records'), 0600 for a
    /// file.
    static func privateMode(_ path: String) -> Int {
        var isFolder: ObjCBool = false
        let folder = FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
        return folder ? 0o700 : 0o600
    }

    @Test func theDataDirectoryIsPrivate() throws {
        try withTemporaryDirectory("journalprivacy") { parent in
            let directory = parent + "/new/data"
            do {
                let server = try TestServer(dataDirectory: directory)
                _ = try server.createSession("counter", id: "private")
            }
            #expect(try Self.mode(directory) == 0o700)
            let files = try Self.journalFiles(directory)
            #expect(files.contains { $0.hasSuffix("/LOCK") } && files.contains { $0.hasSuffix(".log") })
            for file in files { #expect(try Self.mode(file) == Self.privateMode(file), "\(file)") }
        }
    }

    @Test func anOlderDataDirectoryIsMadePrivateAtStart() throws {
        try withTemporaryDirectory("journalprivacy") { directory in
            do {
                let server = try TestServer(dataDirectory: directory)
                _ = try server.createSession("counter", id: "older")
            }
            // As an earlier version left them.
            chmod(directory, 0o755)
            for file in try Self.journalFiles(directory) { chmod(file, 0o644) }
            let server = try TestServer(dataDirectory: directory)
            #expect(try server.request("GET", "/sessions/older").status == 200)
            #expect(try Self.mode(directory) == 0o700)
            for file in try Self.journalFiles(directory) {
                #expect(try Self.mode(file) == Self.privateMode(file), "\(file)")
            }
            #expect(server.logs.values.contains { $0.message.contains("readable by this user only") })
        }
    }

    static let marker = "secret-title-3f9a"

    /// "doomed" (key 1): a todo list whose titles carry `marker`, passivated (its snapshot holds them
    /// too), then deleted; "survivor" (key 2) stays. Nothing is erased yet.
    static func deleteDoomed(_ server: TestServer) throws {
        _ = try server.createSession("todo", id: "doomed")
        _ = try server.createSession("counter", id: "survivor")
        let connection = try server.connect()
        for index in 0..<5 {
            #expect(
                try connection.request(
                    "POST", "/sessions/doomed/actions", body: #"{"type":"add","title":"\#(marker) \#(index)"}"#
                ).status == 202)
            #expect(
                try connection.request("POST", "/sessions/survivor/actions", body: #"{"type":"increase"}"#).status
                    == 202)
        }
        #expect(server.server.service.store.passivate(idleBefore: .max) == 2)
        #expect(
            try connection.request("POST", "/sessions/survivor/actions?wait=true", body: #"{"type":"increase"}"#).status
                == 200)
        #expect(try connection.request("DELETE", "/sessions/doomed").status == 204)
    }

    /// Segments that still mention the deleted session.
    static func mentions(_ directory: String) throws -> [String] {
        try DurabilityTests.segments(directory).filter { path in
            let text = String(decoding: try JournalDamageTests.bytes(path), as: UTF8.self)
            return text.contains(marker) || text.contains("doomed")
        }
    }

    /// Every segment parses as whole records from start to end.
    static func expectWholeRecords(_ directory: String) throws {
        for segment in try DurabilityTests.segments(directory) {
            let bytes = try JournalDamageTests.bytes(segment)
            let end = JournalDamageTests.records(bytes).last.map { $0.offset + $0.size } ?? 0
            #expect(end == bytes.count, "\(segment) has a damaged frame at \(end)")
        }
    }

    @Test func aDeletedSessionsRecordsAreErasedInPlace() throws {
        try withTemporaryDirectory("journalprivacy") { directory in
            do {
                let server = try TestServer(dataDirectory: directory)
                try Self.deleteDoomed(server)
                try server.flushJournal()
                #expect(try !Self.mentions(directory).isEmpty)
                let sizes = try DurabilityTests.segments(directory).map { try JournalDamageTests.bytes($0).count }
                try server.eraseDeletedSessions()
                #expect(try Self.mentions(directory).isEmpty)
                // In place: no segment changed length, and every frame is still a whole record.
                #expect(try DurabilityTests.segments(directory).map { try JournalDamageTests.bytes($0).count } == sizes)
                try Self.expectWholeRecords(directory)
                #expect(server.logs.values.contains { $0.message.contains("erased deleted sessions' records") })
                #expect(try server.request("GET", "/sessions/survivor").json()["version"] as? Int == 6)
            }
            let server = try TestServer(dataDirectory: directory)
            #expect(!server.logs.values.contains { $0.level >= .warning }, "\(server.logs.values.map(\.message))")
            #expect(try server.request("GET", "/sessions/survivor").json()["version"] as? Int == 6)
            #expect(try server.request("GET", "/sessions/doomed").status == 404)
            #expect(try server.request("POST", "/sessions", body: #"{"reactor":"todo","id":"doomed"}"#).status == 201)
            #expect(try server.request("GET", "/sessions/doomed").json()["version"] as? Int == 0)
        }
    }

    @Test func anErasureAStopCutShortIsFinishedAfterARestart() throws {
        try withTemporaryDirectory("journalprivacy") { directory in
            do {
                let server = try TestServer(dataDirectory: directory)
                try Self.deleteDoomed(server)
            }
            // As a stop in the middle of an erasure leaves it: one record with its payload zeroed under
            // its old header, one with the padding header over its old payload. Both fail their checksum.
            let segment = try #require(try DurabilityTests.segments(directory).first)
            var bytes = try JournalDamageTests.bytes(segment)
            let doomed = JournalDamageTests.records(bytes).filter { $0.key == 1 && $0.size > 30 }
            #expect(doomed.count >= 2)
            let prefix = JournalRecord.frameBytes + JournalRecord.headerBytes
            for index in (doomed[0].offset + prefix)..<(doomed[0].offset + doomed[0].size) { bytes[index] = 0 }
            bytes.replaceSubrange(
                doomed[1].offset..<(doomed[1].offset + prefix), with: JournalRecord.paddingHeader(size: doomed[1].size))
            try Data(bytes).write(to: URL(fileURLWithPath: segment))

            let server = try TestServer(dataDirectory: directory)
            #expect(
                !server.logs.values.contains { $0.message.contains("damaged journal record") },
                "\(server.logs.values.map(\.message))")
            #expect(
                server.logs.values.filter { $0.message.contains("was being erased when the server stopped") }.count == 2
            )
            #expect(
                server.logs.values.contains { $0.message.contains("still on disk; they are erased in the background") })
            #expect(try server.request("GET", "/sessions/survivor").json()["version"] as? Int == 6)
            try server.eraseDeletedSessions()
            #expect(try Self.mentions(directory).isEmpty)
            try Self.expectWholeRecords(directory)
        }
    }
}
