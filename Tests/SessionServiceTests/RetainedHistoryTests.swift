import Testing

@testable import SessionService

/// The index's retained history alone: what it keeps as versions go by, how copies replace their
/// originals, and where its oldest record lies.
@Suite struct RetainedHistoryTests {
    static func at(_ segment: UInt32, _ offset: UInt32 = 0, length: UInt32 = 40) -> RecordLocation {
        RecordLocation(segment: segment, offset: offset, length: length)
    }

    static let tenVersions = HistoryLimits(versions: 10, bytes: .max)
    static let hundredVersions = HistoryLimits(versions: 100, bytes: .max)

    /// Snapshots every 10 versions, one mutation per version, all in segment 1 up to `version`.
    static func run(to version: UInt64, keeping versions: UInt64, bytes: Int = .max) -> RetainedHistory {
        let limits = HistoryLimits(versions: versions, bytes: bytes)
        var history = RetainedHistory()
        history.keep(.snapshot, 0, at: at(1), version: 0, limits: limits)
        for number in UInt64(1)...version {
            history.keep(.mutation, number, at: at(1, UInt32(number)), version: number, limits: limits)
            if number % 10 == 0 {
                history.keep(.snapshot, number, at: at(1, UInt32(number)), version: number, limits: limits)
            }
        }
        return history
    }

    /// Over the byte limit, whole snapshots' worth go until it fits; the latest snapshot and what
    /// follows it stay whatever their size.
    @Test(arguments: [(300, UInt64(50)), (680, 40), (700, 40), (1_120, 30), (40, 50), (0, 50)])
    func theByteLimitDropsASnapshotsWorthAtATime(bytes: Int, base: UInt64) {
        // 40 bytes a record, up to version 55: from snapshot 50, 6 records (240 bytes); from 40, 17
        // (680); from 30, 28 (1,120).
        let history = Self.run(to: 55, keeping: 1_000, bytes: bytes)
        #expect(history.baseVersion == base)
        #expect(history.bytes <= max(bytes, 240))
    }

    @Test(arguments: [
        (UInt64(5), UInt64(100), UInt64(0)), (35, 10, 20), (40, 10, 30), (41, 10, 30), (100, 1, 100), (99, 1, 90),
    ])
    func theBaseIsTheNewestSnapshotAtOrBelowTheOldestVersionKept(version: UInt64, versions: UInt64, base: UInt64) {
        let history = Self.run(to: version, keeping: versions)
        #expect(history.baseVersion == base)
        #expect(history.retained.first?.kind == .snapshot)
        #expect(history.retained.first?.number == base)
        // Every state record from the base on, and the snapshots among them.
        let mutations = history.retained.filter { $0.kind == .mutation }.map(\.number)
        #expect(mutations == Array((base + 1)...max(base + 1, version)).filter { $0 <= version })
        #expect(history.bytes == history.retained.count * 40)
    }

    @Test func copiesReplaceTheirOriginalsAndMoveTheOldestSegment() {
        var history = Self.run(to: 25, keeping: 10)
        #expect(history.oldestSegment == 1)
        let copies = Array(history.retained)
        for (index, record) in copies.enumerated() {
            let copy = Self.at(7, UInt32(index))
            let moved = history.keep(record.kind, record.number, at: copy, version: 25, limits: Self.tenVersions)
            // Only the last original leaving segment 1 moves the oldest segment.
            #expect(moved == (index == copies.count - 1), "record \(index)")
        }
        #expect(history.oldestSegment == 7)
        #expect(history.retained.map(\.number) == copies.map(\.number))
        #expect(history.bytes == copies.count * 40)
    }

    @Test func aRecordOutOfOrderGoesInPlaceAndOneOlderThanTheBaseIsNotKept() {
        var history = RetainedHistory()
        history.keep(.snapshot, 10, at: Self.at(2), version: 10, limits: Self.hundredVersions)
        history.keep(.mutation, 12, at: Self.at(2, 1), version: 12, limits: Self.hundredVersions)
        history.keep(.mutation, 11, at: Self.at(3), version: 12, limits: Self.hundredVersions)
        history.keep(.mutation, 9, at: Self.at(1), version: 12, limits: Self.hundredVersions)
        #expect(history.retained.map(\.number) == [10, 11, 12])
        #expect(history.oldestSegment == 2)
        // A state record before the snapshot of the same version.
        history.keep(.snapshot, 12, at: Self.at(3, 1), version: 12, limits: Self.hundredVersions)
        history.keep(.mutation, 13, at: Self.at(3, 2), version: 13, limits: Self.hundredVersions)
        let order = history.retained.map { "\($0.kind)\($0.number)" }
        #expect(order == ["snapshot10", "mutation11", "mutation12", "snapshot12", "mutation13"])
    }

    /// Found by .ci/fuzz-journal: a forced state of a version that has a mutation took a second place.
    @Test func aStateRecordOfAVersionKeptReplacesItWhateverItsKind() {
        var history = RetainedHistory()
        history.keep(.snapshot, 0, at: Self.at(1), version: 0, limits: Self.tenVersions)
        history.keep(.mutation, 1, at: Self.at(1, 1), version: 1, limits: Self.tenVersions)
        history.keep(.mutation, 2, at: Self.at(1, 2), version: 2, limits: Self.tenVersions)
        history.keep(.forced, 2, at: Self.at(2, 0, length: 50), version: 2, limits: Self.tenVersions)
        #expect(history.retained.map(\.number) == [0, 1, 2])
        #expect(history.retained.last?.kind == .forced)
        #expect(history.bytes == 40 + 40 + 50)
    }

    @Test func stateRecordsBeforeTheFirstSnapshotAreNotKept() {
        var history = RetainedHistory()
        let moved = history.keep(.mutation, 1, at: Self.at(1), version: 1, limits: Self.tenVersions)
        #expect(!moved)
        #expect(history.isEmpty)
        #expect(history.oldestSegment == nil)
    }
}
