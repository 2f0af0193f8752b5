/// Which segments one compaction pass deletes: the longest run of the oldest closed segments whose
/// bytes are at least ``payoff`` times what the pass must write first, so every pass frees at least
/// twice what it writes. Moving a session's data costs about what it holds now (its snapshot, its
/// stored tail and retained history, its action log as a checkpoint), estimated from the index's
/// record lengths; a deleted session costs nothing, so its segments always go.
///
/// Why it converges: a pass deletes more than twice what it writes, so with no new writes the
/// segments shrink pass after pass until no run pays off, and then nothing is written at all. Over
/// any stretch of time compaction writes at most half of what it deletes, and it can delete only what
/// was written: at most as many bytes as the sessions wrote (plus, once, the journal found at start),
/// so the journal writes at most about twice what the sessions write. While no pass is due, the closed
/// segments hold less than twice the data still needed.
///
/// ```swift
/// var plan = CompactionPlan(oldest: 1, current: 5)
/// plan.needs(3, bytes: 400_000)                      // a session's oldest data lies in segment 3
/// let last = plan.lastSegment(sizes: [1: 262_144, 2: 262_144, 3: 262_144, 4: 262_144])   // 4
/// ```
struct CompactionPlan {
    /// How many times what a pass writes its run's bytes must be.
    static let payoff = 2

    /// The oldest segment on disk: every run starts there.
    let oldest: UInt32
    /// The segment being written: runs end before it.
    let current: UInt32
    /// What moving the data still needed costs, by the oldest segment that needs it.
    private(set) var costs: [UInt32: Int] = [:]
    /// The oldest segment a quarantined session keeps (its records stay until it is deleted).
    private(set) var kept: UInt32?

    init(oldest: UInt32, current: UInt32) {
        self.oldest = oldest
        self.current = current
    }

    /// Notes data whose oldest record lies in `segment` and whose move writes about `bytes`.
    mutating func needs(_ segment: UInt32, bytes: Int) {
        guard segment < current else { return }
        costs[segment, default: 0] += bytes
    }

    /// Notes a segment that must stay, and every later one with it.
    mutating func keeps(_ segment: UInt32) {
        kept = min(kept ?? .max, segment)
    }

    /// The newest segment of the longest run from ``oldest`` that pays off, given each closed
    /// segment's size; nil when none does.
    func lastSegment(sizes: [UInt32: Int]) -> UInt32? {
        var bytes = 0
        var cost = 0
        var last: UInt32?
        var segment = oldest
        while segment < min(current, kept ?? .max) {
            bytes += sizes[segment] ?? 0
            cost += costs[segment] ?? 0
            if bytes >= Self.payoff * cost { last = segment }
            segment += 1
        }
        return last
    }
}
