import Foundation
import Testing

@testable import SessionService

#if canImport(Glibc)
import Glibc
#endif

/// The journal is readable by the server's user only, and a deleted session's records do not stay
/// readable on disk.
@Suite struct JournalPrivacyTests {
    static func mode(_ path: String) throws -> Int {
        try #require(FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int)
    }

    static func journalFiles(_ directory: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory).map { directory + "/" + $0 }
    }

    @Test func theDataDirectoryIsPrivate() throws {
        let parent = DurabilityTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let directory = parent + "/new/data"
        do {
            let server = try DurabilityTests.server(directory)
            _ = try server.createSession("counter", id: "private")
        }
        #expect(try Self.mode(directory) == 0o700)
        let files = try Self.journalFiles(directory)
        #expect(files.contains { $0.hasSuffix("/LOCK") } && files.contains { $0.hasSuffix(".log") })
        for file in files { #expect(try Self.mode(file) == 0o600, "\(file)") }
    }

    @Test func anOlderDataDirectoryIsMadePrivateAtStart() throws {
        let directory = DurabilityTests.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        do {
            let server = try DurabilityTests.server(directory)
            _ = try server.createSession("counter", id: "older")
        }
        // As an earlier version left them.
        chmod(directory, 0o755)
        for file in try Self.journalFiles(directory) { chmod(file, 0o644) }
        let server = try DurabilityTests.server(directory)
        #expect(try server.request("GET", "/sessions/older").status == 200)
        #expect(try Self.mode(directory) == 0o700)
        for file in try Self.journalFiles(directory) { #expect(try Self.mode(file) == 0o600, "\(file)") }
        #expect(server.logs.records.contains { $0.message.contains("readable by this user only") })
    }
}
