import Testing

@testable import NATS

/// `DeadlineQueue` pops what a plain sorted list would, whether deadlines arrive in order (its array) or not
/// (its heap), across the array's compaction.
struct DeadlineQueueTests {
    /// A small deterministic generator (xorshift64), so a failure repeats.
    struct Generator: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return state
        }
    }

    /// Rounds of inserts (mostly in order, some earlier, some equal) and pops at a moving `now`, checked against
    /// a reference list after every step: the same count and earliest, each popped deadline due, none passed over.
    @Test(arguments: [1, 7, 42, 1_000] as [UInt64])
    func popsWhatASortedListWould(_ seed: UInt64) {
        var random = Generator(state: seed)
        let base = ContinuousClock.now
        var queue = DeadlineQueue()
        var reference: [(at: Int, id: UInt64)] = []
        var nextID: UInt64 = 0
        var latest = 0
        var now = 0
        for _ in 0..<400 {
            for _ in 0..<Int.random(in: 0...12, using: &random) {
                let at: Int
                switch Int.random(in: 0..<10, using: &random) {
                case 0: at = now + Int.random(in: 0...50, using: &random)  // earlier than the last: the heap
                case 1: at = latest  // equal to the last
                default: at = max(latest, now) + Int.random(in: 0...5, using: &random)
                }
                latest = max(latest, at)
                queue.insert(base + .milliseconds(at), .reply(nextID))
                reference.append((at, nextID))
                nextID += 1
            }
            now += Int.random(in: 0...8, using: &random)
            var popped: [Int] = []
            while let kind = queue.popDue(base + .milliseconds(now)) {
                guard case .reply(let id) = kind, let index = reference.firstIndex(where: { $0.id == id }) else {
                    Issue.record("popped \(kind), which was not queued")
                    return
                }
                popped.append(reference.remove(at: index).at)
            }
            #expect(popped.allSatisfy { $0 <= now }, "popped a deadline not yet due at \(now): \(popped)")
            #expect(popped == popped.sorted(), "popped out of order: \(popped)")
            #expect(reference.allSatisfy { $0.at > now }, "left a due deadline queued at \(now)")
            #expect(queue.count == reference.count)
            #expect(queue.earliest == reference.map(\.at).min().map { base + .milliseconds($0) })
        }
        while queue.popDue(base + .milliseconds(latest)) != nil {}
        #expect(queue.count == 0 && queue.earliest == nil)
    }

    /// `removeAll` empties both halves, and the queue works on afterwards.
    @Test func removeAllEmptiesBothHalves() {
        let base = ContinuousClock.now
        var queue = DeadlineQueue()
        queue.insert(base + .seconds(5), .reply(1))
        queue.insert(base + .seconds(1), .ping(2))
        #expect(queue.count == 2 && queue.earliest == base + .seconds(1))
        queue.removeAll()
        #expect(queue.count == 0 && queue.earliest == nil && queue.popDue(base + .seconds(10)) == nil)
        queue.insert(base + .seconds(2), .connect(3))
        #expect(queue.popDue(base + .seconds(2)) == .connect(3))
    }
}
