import Testing

@testable import SessionService

/// The incarnation a snapshot record carries after its pulse counts: decoded in full, and found by the start-up
/// scan's walk over the sections before it; a record written before incarnations has none (0). `recoveredThrough`
/// follows it, the newest section.
@Suite struct SnapshotIncarnationTests {
    static let legacy = [ActionLogEntry(seq: 1, at: 5, action: Array(#"{"type":"increase"}"#.utf8), stubbed: true)]

    @Test(arguments: [
        StoredSnapshot(
            id: "a", reactor: "counter", version: 3, lastSeq: 3, stub: false, state: Array(#"{"value":3}"#.utf8)),
        StoredSnapshot(
            id: "todo-1", reactor: "todo", version: 9, lastSeq: 12, stub: true, state: Array(#"{"items":[]}"#.utf8),
            actions: legacy, running: [11, 12], pulses: ["flash": 4, "toast": 1]),
    ])
    func theScanFindsTheIncarnationDecodingFinds(snapshot: StoredSnapshot) throws {
        var marked = snapshot
        marked.incarnation = 0x9c1f_2a07_0000_00b5
        marked.recoveredThrough = 11
        var payload: [UInt8] = []
        marked.encode(into: &payload)
        #expect(try StoredSnapshot(version: marked.version, payload: payload) == marked)
        #expect(payload.withUnsafeBytes { StoredSnapshot.incarnation(payload: $0) } == marked.incarnation)
        // Written before params and storage versions (a 4-byte empty blob and a u32): nothing else differs.
        let unversioned = try StoredSnapshot(version: marked.version, payload: Array(payload.dropLast(8)))
        #expect(unversioned == marked)
        // Written before recovery marks: the incarnation is there, nothing was recovered.
        let unrecovered = try StoredSnapshot(version: marked.version, payload: Array(payload.dropLast(16)))
        #expect(unrecovered.incarnation == marked.incarnation && unrecovered.recoveredThrough == 0)
        // Written before incarnations: the payload ends after the pulse counts.
        let older = Array(payload.dropLast(24))
        #expect(try StoredSnapshot(version: marked.version, payload: older).incarnation == 0)
        #expect(older.withUnsafeBytes { StoredSnapshot.incarnation(payload: $0) } == 0)
        // Cut anywhere short of it, the walk finds none and reads nothing beyond the payload.
        for length in 0..<(payload.count - 24) {
            #expect(
                Array(payload.prefix(length)).withUnsafeBytes { StoredSnapshot.incarnation(payload: $0) } == 0,
                "\(length)")
        }
    }
}
