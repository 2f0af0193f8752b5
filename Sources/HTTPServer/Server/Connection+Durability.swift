/// Durability: output waits for what it shows to be durable (the server's `OutputBarrier`). It is
/// queued with the position it depends on; `flush` writes only the bytes whose positions are
/// durable and parks the rest, and the barrier's wake-up brings the connection back to its loop.
extension Connection {
    /// Notes `count` bytes just queued, which show what `position` holds (nil: everything appended
    /// so far). Without a barrier nothing is ever held.
    func hold(_ count: Int, dependingOn position: UInt64?) {
        guard let barrier = loop.barrier else { return }
        holds.add(count, position: position ?? barrier.position)
    }

    /// Whether output showing what `position` holds (nil: everything appended so far) may be written
    /// now, ahead of nothing held.
    func mayWriteAtOnce(dependingOn position: UInt64?) -> Bool {
        guard let barrier = loop.barrier else { return true }
        return holds.held == 0 && holds.isDurable(position ?? barrier.position) { barrier.isDurable($0) }
    }

    /// Releases held output whose positions are now durable; returns the bytes that may be written.
    func writableByteCount() -> Int {
        if holds.held > 0, let barrier = loop.barrier {
            holds.release { barrier.isDurable($0) }
        }
        return output.byteCount - holds.held
    }

    /// Asks the barrier to wake this connection once the first held bytes may go (once per position).
    func awaitDurability() {
        guard let barrier = loop.barrier, let position = holds.firstPosition, holds.awaited != position else { return }
        holds.awaited = position
        let loop = loop
        barrier.whenDurable(position) { [self] in
            loop.execute {
                guard !self.isClosed else { return }
                self.durabilityReached()
            }
        }
    }

    /// The barrier reported the awaited position durable: write what it released.
    func durabilityReached() {
        holds.awaited = nil
        flush()
    }
}
