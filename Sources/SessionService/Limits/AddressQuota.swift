import HTTPServer
import Synchronization

/// How many of something each client address holds at once (its subscribers), against a cap: taken all
/// at once or not at all, given back one ``Hold`` at a time. Exact under concurrency: a check and its
/// increment are one step under the address's shard lock, so racing requests never pass the cap. An
/// address that holds nothing is not tracked, so memory follows the addresses holding something.
///
/// ```swift
/// let quota = AddressQuota(limit: 10_000)
/// guard let holds = quota.take(3, for: client) else { return refuse() }   // nil: over the cap
/// holds[0].release()                                                      // once its subscriber ended
/// ```
final class AddressQuota: Sendable {
    /// Most units one address may hold.
    let limit: Int

    /// One lock's worth of counts.
    final class Shard: Sendable {
        let counts = Mutex<[IPAddress: Int]>([:])
    }

    /// Shards, so event loops taking and giving back for different addresses rarely contend.
    private let shards: [Shard]

    init(limit: Int) {
        self.limit = max(1, limit)
        shards = (0..<16).map { _ in Shard() }
    }

    /// Takes `count` units for `address`: one hold per unit, or nil (nothing taken) when the address
    /// would then hold more than ``limit``.
    func take(_ count: Int, for address: IPAddress) -> [Hold]? {
        guard count > 0 else { return [] }
        let taken = shard(address).counts.withLock { counts -> Bool in
            let held = counts[address, default: 0]
            guard held + count <= limit else { return false }
            counts[address] = held + count
            return true
        }
        return taken ? (0..<count).map { _ in Hold(quota: self, address: address) } : nil
    }

    /// What `address` holds now.
    func held(by address: IPAddress) -> Int {
        shard(address).counts.withLock { $0[address, default: 0] }
    }

    /// How many addresses hold anything (tests).
    var addressCount: Int { shards.reduce(0) { total, shard in total + shard.counts.withLock { $0.count } } }

    /// Gives one unit of `address` back.
    fileprivate func giveBack(_ address: IPAddress) {
        shard(address).counts.withLock { counts in
            let held = counts[address, default: 1] - 1
            counts[address] = held > 0 ? held : nil
        }
    }

    private func shard(_ address: IPAddress) -> Shard {
        shards[address.shard(among: shards.count)]
    }

    /// One unit an address holds (one subscriber), given back exactly once: by whoever first sees what
    /// it stands for end (``release()`` is idempotent), or at the latest when the hold leaves memory,
    /// so a path that forgets cannot leak it for good.
    final class Hold: Sendable {
        let address: IPAddress
        private let quota: AddressQuota
        private let held = Atomic<Bool>(true)

        fileprivate init(quota: AddressQuota, address: IPAddress) {
            self.quota = quota
            self.address = address
        }

        /// Gives the unit back, the first time only.
        func release() {
            if held.exchange(false, ordering: .relaxed) { quota.giveBack(address) }
        }

        deinit { release() }
    }
}

extension IPAddress {
    /// Which of `count` (a power of two up to 2^64) shards keeps this address's entry: the top bits of a
    /// multiplicative hash, so neighbouring addresses spread.
    func shard(among count: Int) -> Int {
        let bits = UInt64(count.trailingZeroBitCount)
        guard bits > 0 else { return 0 }
        return Int(truncatingIfNeeded: ((low ^ high) &* 0x9E37_79B9_7F4A_7C15) >> (64 - bits))
    }
}
