import HTTPServer
import Synchronization

/// Token buckets by client address: each address may spend `burst` tokens at once and earns `rate`
/// per second back. Bounded in memory: at most `capacity` addresses are tracked; when full, buckets
/// that have refilled (their address went quiet) are dropped first, and if none has, the oldest.
/// Time comes from the service clock, so tests advance it instead of sleeping.
final class TokenBuckets: Sendable {
    struct Bucket {
        var tokens: Double
        var updated: UInt64
    }

    let rate: Double
    let burst: Double
    let capacity: Int
    let clock: any ServiceClock
    /// One lock's worth of buckets.
    final class Shard: Sendable {
        let buckets = Mutex<[IPAddress: Bucket]>([:])
    }

    /// Shards, so loops rarely contend for the same lock.
    private let shards: [Shard]

    init(rate: Double, burst: Int, capacity: Int = 100_000, clock: any ServiceClock) {
        self.rate = rate
        self.burst = Double(max(1, burst))
        self.capacity = max(16, capacity)
        self.clock = clock
        shards = (0..<16).map { _ in Shard() }
    }

    /// Takes `cost` tokens for `address`: nil when it had them, else the seconds until it will. A cost
    /// above `burst` is taken as `burst`: it passes only with a full bucket, which it empties.
    func take(_ address: IPAddress, cost: Double = 1) -> Double? {
        let cost = min(cost, burst)
        let now = clock.monotonicNanoseconds()
        let shard = shards[address.shard(among: shards.count)]
        return shard.buckets.withLock { buckets -> Double? in
            var bucket = buckets[address] ?? Bucket(tokens: burst, updated: now)
            let elapsed = Double(now &- min(bucket.updated, now)) / 1e9
            bucket.tokens = min(burst, bucket.tokens + elapsed * rate)
            bucket.updated = now
            let wait: Double?
            if bucket.tokens >= cost {
                bucket.tokens -= cost
                wait = nil
            } else {
                wait = (cost - bucket.tokens) / rate
            }
            if buckets[address] == nil, buckets.count >= capacity / shards.count { evict(&buckets, now: now) }
            buckets[address] = bucket
            return wait
        }
    }

    /// Makes room in a full shard: drops buckets that have refilled by now, else the least recently used.
    private func evict(_ buckets: inout [IPAddress: Bucket], now: UInt64) {
        let refillNanoseconds = UInt64(burst / rate * 1e9)
        let before = buckets.count
        buckets = buckets.filter { now &- $0.value.updated < refillNanoseconds }
        guard buckets.count == before, let oldest = buckets.min(by: { $0.value.updated < $1.value.updated }) else {
            return
        }
        buckets.removeValue(forKey: oldest.key)
    }

    /// How many addresses are tracked (tests, metrics).
    var count: Int { shards.reduce(0) { total, shard in total + shard.buckets.withLock { $0.count } } }
}
