import Testing

@testable import SessionService

/// The compaction rule alone: the longest run of the oldest closed segments whose bytes are at least
/// twice what moving the data they hold costs.
@Suite struct CompactionPlanTests {
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var sizes: [UInt32: Int]
        /// (segment, bytes) of each session's oldest data.
        var needs: [(UInt32, Int)]
        var kept: UInt32?
        var last: UInt32?
        var testDescription: String { name }
    }

    static let segment = 262_144
    static let cases: [Case] = [
        Case(name: "nothing closed", sizes: [:], needs: [], last: nil),
        Case(name: "only deleted sessions' records", sizes: [1: segment, 2: segment, 3: segment], needs: [], last: 3),
        Case(
            name: "a live log larger than a segment, already moved once",
            sizes: [1: segment, 2: segment], needs: [(1, 400_000)], last: nil),
        Case(
            name: "a live log and enough dead records after it",
            sizes: [1: segment, 2: segment, 3: segment, 4: segment], needs: [(1, 400_000)], last: 4),
        Case(name: "exactly twice pays off", sizes: [1: 100, 2: 100], needs: [(1, 100)], last: 2),
        Case(
            name: "a longer run pays where the first segment alone does not",
            sizes: [1: 100, 2: 1_000], needs: [(1, 100)], last: 2),
        Case(
            name: "the longest run that pays, and no further",
            sizes: [1: 1_000, 2: 100, 3: 100], needs: [(1, 100), (3, 700)], last: 2),
        Case(name: "needs in the open segment cost nothing now", sizes: [1: 100], needs: [(2, 1_000_000)], last: 1),
        Case(
            name: "a quarantined session keeps its segment and every later one",
            sizes: [1: segment, 2: segment, 3: segment], needs: [], kept: 2, last: 1),
        Case(
            name: "quarantined in the oldest segment", sizes: [1: segment, 2: segment], needs: [], kept: 1, last: nil),
    ]

    @Test(arguments: cases)
    func choosesTheLongestRunThatPaysOff(_ example: Case) {
        let current = (example.sizes.keys.max() ?? 0) + 1
        var plan = CompactionPlan(oldest: 1, current: current)
        for (segment, bytes) in example.needs { plan.needs(segment, bytes: bytes) }
        if let kept = example.kept { plan.keeps(kept) }
        #expect(plan.lastSegment(sizes: example.sizes) == example.last)
    }
}
