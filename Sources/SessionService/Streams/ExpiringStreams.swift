import Synchronization

/// The streams opened with a JWT (`auth.sessions=jwt`), each ended with `unauthorized` when its token
/// stops being valid: at `exp` plus the leeway, on the service's clock. One timer is armed, for the
/// earliest deadline; nothing is checked per event. Streams are held weakly, so one that ends by itself
/// needs no call here, and ended ones are swept once the table has doubled since the last sweep.
///
/// ```swift
/// let expiring = ExpiringStreams(clock: clock, ended: metrics.streamsEndedJWTExpired)
/// expiring.add(stream, endingAt: claims.expiresAt + 60, message: "the bearer token expired …")
/// ```
final class ExpiringStreams: Sendable {
    private struct Entry {
        weak var stream: (any RevocableStream)?
        let message: String
    }

    private struct Table {
        /// Streams by the wall-clock second their credential lapses at.
        var byDeadline: [Int64: [Entry]] = [:]
        var count = 0
        var sweepAt = 64
        /// The armed timer and the second it fires at.
        var timer: (work: ScheduledWork, deadline: Int64)?
    }

    private let clock: any ServiceClock
    /// Counts the streams ended (`/metrics`).
    private let ended: Counter
    private let table = Mutex(Table())

    init(clock: any ServiceClock, ended: Counter) {
        self.clock = clock
        self.ended = ended
    }

    /// Ends `stream` (every part of it) at `deadline`, Unix seconds: at once when that has passed.
    func add(_ stream: any RevocableStream, endingAt deadline: Double, message: String) {
        // Whole seconds, rounded up (a token is valid until the instant `exp + leeway`); a deadline past
        // the year 2262 (or not a number) is taken as then, so no later sum overflows.
        let second = !(deadline < Double(Self.lastSecond)) ? Self.lastSecond : Int64(max(0, deadline.rounded(.up)))
        let arm = table.withLock { table -> Int64? in
            table.byDeadline[second, default: []].append(Entry(stream: stream, message: message))
            table.count += 1
            if table.count >= table.sweepAt { Self.sweep(&table) }
            if let timer = table.timer, timer.deadline <= second { return nil }
            table.timer?.work.cancel()
            table.timer = nil
            return second
        }
        if let arm { self.arm(arm) }
    }

    /// The latest deadline kept, in Unix seconds, whose nanoseconds still fit an `Int64`.
    private static let lastSecond = Int64.max / 1_000_000_000

    /// Streams waiting for their deadline (ended ones included until the next sweep).
    var count: Int { table.withLock { $0.count } }

    /// Arms the timer for `second` (from now on the service's clock), unless an earlier one was armed since.
    private func arm(_ second: Int64) {
        let now = clock.wallNanoseconds()
        // At most a year ahead: a later deadline re-arms then (and a huge `exp` cannot overflow the delay).
        let nanoseconds = min(max(0, second * 1_000_000_000 - now), 365 * 86_400 * 1_000_000_000)
        let work = clock.schedule(after: .nanoseconds(nanoseconds)) { [weak self] in self?.fire() }
        let superseded = table.withLock { table -> Bool in
            if let timer = table.timer, timer.deadline <= second { return true }
            table.timer?.work.cancel()
            table.timer = (work, second)
            return false
        }
        if superseded { work.cancel() }
    }

    /// Ends every stream whose deadline has come, then arms the timer for the next one.
    private func fire() {
        let now = clock.wallNanoseconds()
        let (due, next) = table.withLock { table -> ([Entry], Int64?) in
            table.timer = nil
            var due: [Entry] = []
            for second in table.byDeadline.keys where second * 1_000_000_000 <= now {
                due += table.byDeadline.removeValue(forKey: second) ?? []
            }
            table.count -= due.count
            return (due, table.byDeadline.keys.min())
        }
        var count = 0
        for entry in due {
            guard let stream = entry.stream else { continue }
            stream.revoke(nil, message: entry.message)
            count += 1
        }
        ended.increment(by: count)
        if let next { arm(next) }
    }

    /// Drops the entries of streams that have gone.
    private static func sweep(_ table: inout Table) {
        table.byDeadline = table.byDeadline.compactMapValues { entries in
            let live = entries.filter { $0.stream != nil }
            return live.isEmpty ? nil : live
        }
        table.count = table.byDeadline.values.reduce(0) { $0 + $1.count }
        table.sweepAt = max(64, table.count * 2)
    }
}
