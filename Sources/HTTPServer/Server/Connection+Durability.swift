/// Durability: output waits for what it shows to be durable (the server's `OutputBarrier`). It is
/// queued with the position it depends on; `flush` writes only the bytes whose positions are
/// durable and parks the rest, and the barrier's wake-up brings the connection back to its loop.
extension Connection {
    /// Notes `count` bytes just queued, which show what `position` holds (nil: everything appended
    /// so far). Without a barrier nothing is ever held.
    func hold(_ count: Int, dependingOn position: UInt64?, refusable: Bool = false) {
        guard let barrier = loop.barrier else { return }
        holds.add(count, position: position ?? barrier.position, refusable: refusable)
    }

    /// Whether output showing what `position` holds (nil: everything appended so far) may be written
    /// now, ahead of nothing held.
    func mayWriteAtOnce(dependingOn position: UInt64?) -> Bool {
        guard let barrier = loop.barrier else { return true }
        return holds.held == 0 && holds.isDurable(position ?? barrier.position) { barrier.isDurable($0) }
    }

    /// Releases held output whose positions are now durable, or replaces a refusable answer whose
    /// records failed to be stored with a 503; returns the bytes that may be written.
    func writableByteCount() -> Int {
        if holds.held > 0, let barrier = loop.barrier {
            holds.release { barrier.isDurable($0) }
            if holds.firstIsRefusable, let position = holds.firstPosition, let reason = barrier.failure(position) {
                refuseHeldOutput(reason)
                barrier.refusedHeldOutput(position, reason: reason)
            }
        }
        return output.byteCount - holds.held
    }

    /// The records the first held answer shows failed to be stored: it must never leave, so it and
    /// everything queued after it are dropped, a 503 goes in their place, and the connection closes
    /// (later answers are unsent, and the client knows it). A stream among them just ends.
    func refuseHeldOutput(_ reason: String) {
        loop.logger.warning("an answer acknowledging a change was replaced by 503: its records were not stored", ["error": .string(reason), "peer": .string(peer?.description ?? "?")])
        output.removeLast(holds.held)
        holds.removeAll()
        guard machine.heldAnswerRefused() else {
            return close(reason: StateMachine.CloseReason.outputNotDurable.message(loop.timeouts))
        }
        let rejection = HTTPRejection(.notStored, "this change was not acknowledged: its records could not be stored (\(reason)); it takes effect only if a retried write stores them")
        queue(loop.responder.response(for: rejection), keepAlive: false, isHead: false, dependingOn: 0)
    }

    /// Asks the barrier to wake this connection once the first held bytes may go (once per position).
    func awaitDurability() {
        guard let barrier = loop.barrier, let position = holds.firstPosition, holds.awaited != position else { return }
        holds.awaited = position
        let loop = loop
        barrier.whenDurable(position) { [self] in
            // Always through the inbox, never inline: the barrier may call this inside its own
            // `isDurable` on this very loop, holding its locks, and the flush it starts asks again.
            loop.enqueue(.run {
                guard !self.isClosed else { return }
                self.durabilityReached()
            })
        }
    }

    /// The barrier reported the awaited position durable: write what it released.
    func durabilityReached() {
        holds.awaited = nil
        flush()
    }
}
