import Testing

@testable import SessionService

/// The in-memory action log keeps the longest run of newest entries within its entry and byte limits,
/// and pages exactly; the journal's index keeps the same entries.
@Suite struct ActionLogTests {
    static func entry(_ seq: UInt64, bytes: Int) -> ActionLogEntry {
        ActionLogEntry(
            seq: seq, at: Int64(seq), action: [UInt8](repeating: UInt8(ascii: "x"), count: bytes), stubbed: false)
    }

    /// The newest entries of `sizes` (seq = position + 1) whose count and total fit both limits.
    static func expectedSeqs(_ sizes: [Int], limit: Int, byteLimit: Int) -> [UInt64] {
        var kept: [UInt64] = []
        var total = 0
        for (index, size) in sizes.enumerated().reversed() {
            guard kept.count < limit, total + size <= byteLimit else { break }
            kept.insert(UInt64(index + 1), at: 0)
            total += size
        }
        return kept
    }

    @Test(arguments: [(5, 1_000), (100, 250), (3, 10_000), (100, 99)])
    func keepsTheNewestEntriesWithinBothLimits(limit: Int, byteLimit: Int) {
        var generator = SplitMix(seed: UInt64(limit * 7919 + byteLimit))
        var log = ActionLog(limit: limit, byteLimit: byteLimit)
        var sizes: [Int] = []
        for seq in 1...400 {
            // Mostly small, now and then one near or over the byte limit.
            let size =
                generator.next() % 10 == 0
                ? Int(generator.next() % UInt64(byteLimit + 20)) : 1 + Int(generator.next() % 40)
            sizes.append(size)
            log.append(Self.entry(UInt64(seq), bytes: size))
            let expected = Self.expectedSeqs(sizes, limit: limit, byteLimit: byteLimit)
            #expect(log.all.map(\.seq) == expected, "after seq \(seq)")
            #expect(log.byteCount == expected.reduce(0) { $0 + sizes[Int($1) - 1] })
            #expect(log.oldestSeq == expected.first)
        }
    }

    @Test func anActionLargerThanTheByteLimitEmptiesTheLog() {
        var log = ActionLog(limit: 10, byteLimit: 100)
        for seq in UInt64(1)...3 { log.append(Self.entry(seq, bytes: 30)) }
        log.append(Self.entry(4, bytes: 101))
        #expect(log.count == 0)
        #expect(log.byteCount == 0)
        log.append(Self.entry(5, bytes: 10))
        #expect(log.all.map(\.seq) == [5])
    }

    @Test func dropsReleaseTheActionBytes() {
        var log = ActionLog(limit: 1000, byteLimit: 1 << 20)
        for seq in UInt64(1)...100 { log.append(Self.entry(seq, bytes: 100 << 10)) }
        // 10 entries of 100 KiB fit in 1 MiB; the ring's other slots hold nothing.
        #expect(log.count == 10)
        #expect(log.entries.reduce(0) { $0 + $1.action.count } == 10 * (100 << 10))
    }

    @Test func pagesExactlyAcrossTheRing() {
        var log = ActionLog(limit: 7, byteLimit: 1_000)
        for seq in UInt64(1)...53 { log.append(Self.entry(seq, bytes: seq % 3 == 0 ? 200 : 50)) }
        let all = log.all.map(\.seq)
        for pageSize in 1...8 {
            var seen: [UInt64] = []
            var since: UInt64 = 0
            var pages = 0
            while true {
                let page = log.entries(since: since, limit: pageSize)
                seen += page.entries.map(\.seq)
                pages += 1
                guard let next = page.next else { break }
                #expect(next == page.entries.last?.seq)
                since = next
                #expect(pages < 100)
            }
            #expect(seen == all, "page size \(pageSize)")
        }
        #expect(log.entries(since: 50, limit: 10).entries.map(\.seq) == all.filter { $0 > 50 })
        #expect(log.entries(since: 53, limit: 10).entries.isEmpty)
    }

    /// The index keeps the same accept records as the in-memory log, by count and bytes.
    @Test(arguments: [(5, 1_000), (100, 250), (100, 99)])
    func theIndexRetainsWhatTheLogKeeps(limit: Int, byteLimit: Int) {
        var generator = SplitMix(seed: UInt64(byteLimit))
        let entry = IndexEntry(
            id: "s", reactor: "r", snapshot: RecordLocation(segment: 1, offset: 0, length: 40), snapshotVersion: 0,
            version: 0, lastSeq: 0, resident: true)
        var log = ActionLog(limit: limit, byteLimit: byteLimit)
        var offset: UInt32 = 40
        for seq in UInt64(1)...300 {
            let size =
                generator.next() % 10 == 0
                ? Int(generator.next() % UInt64(byteLimit + 20)) : 1 + Int(generator.next() % 40)
            let length = UInt32(JournalRecord.frameBytes + JournalRecord.headerBytes + StoredAccept.headerBytes + size)
            entry.retain(
                accept: seq, at: RecordLocation(segment: 1, offset: offset, length: length),
                limits: ActionLogLimits(count: limit, bytes: byteLimit))
            offset += length
            log.append(Self.entry(seq, bytes: size))
            #expect(entry.retainedAccepts.map(\.seq) == log.all.map(\.seq), "after seq \(seq)")
            #expect(entry.acceptBytes == log.byteCount)
        }
    }

    /// A checkpoint counts only once its end record is in: chunks a stop cut short change nothing.
    @Test func anUnfinishedCheckpointCountsForNothing() {
        var index = JournalIndex()
        let limits = ActionLogLimits(count: 100, bytes: 1 << 20)
        index.actionLogLimits = limits
        func at(_ offset: UInt32) -> RecordLocation { RecordLocation(segment: 1, offset: offset, length: 50) }
        index.apply(kind: .snapshot, key: 1, number: 0, location: at(0), identity: ("s", "counter"))
        for seq in UInt64(1)...5 {
            index.apply(kind: .accept, key: 1, number: seq, location: at(UInt32(seq) * 100), identity: nil)
        }
        index.apply(kind: .actionLogFirst, key: 1, number: 3, location: at(1_000), identity: nil)
        index.apply(kind: .actionLogNext, key: 1, number: 5, location: at(1_100), identity: nil)
        let entry = index.entries[1]!
        #expect(entry.actionLog.isEmpty)
        #expect(entry.retainedAccepts.map(\.seq) == [1, 2, 3, 4, 5])
        // A later checkpoint starts over; only its own chunks count once it ends.
        index.apply(kind: .actionLogFirst, key: 1, number: 5, location: at(2_000), identity: nil)
        index.apply(kind: .actionLogEnd, key: 1, number: 5, location: at(2_100), identity: nil)
        #expect(entry.actionLog == [at(2_000)])
        #expect(entry.retainedAccepts.isEmpty)
        #expect(entry.acceptBytes == 0)
    }
}

/// A small deterministic generator, so a failing case can be replayed.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
