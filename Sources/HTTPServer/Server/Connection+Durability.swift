/// Durability: output waits for what it shows to be durable (the server's `OutputBarrier`). It is
/// queued with the position it depends on; `flush` writes only the bytes whose positions are
/// durable and parks the rest, and the barrier's wake-up brings the connection back to its loop.
extension Connection {
    /// Notes `count` bytes just queued, which show what `position` holds (nil: everything appended
    /// so far). Without a barrier nothing is ever held.
    func hold(_ count: Int, dependingOn position: UInt64?, refusable: Bool = false) {
        guard let barrier = loop.barrier else { return }
        holds.add(count, position: position ?? barrier.position, exact: position != nil, refusable: refusable) {
            barrier.isLost($0)
        }
    }

    /// Whether output showing what `position` holds (nil: everything appended so far) may be written
    /// now, ahead of nothing held.
    func mayWriteAtOnce(dependingOn position: UInt64?) -> Bool {
        guard let barrier = loop.barrier else { return true }
        guard holds.held == 0 else { return false }
        return holds.isDurable(
            position ?? barrier.position, exact: position != nil, { barrier.isDurable($0) },
            isLost: { barrier.isLost($0) }, isDurableExactly: { barrier.isDurableExactly($0) })
    }

    /// Releases held output whose positions are now durable; replaces a refusable answer whose records
    /// failed to be stored with a 503, and drops output showing records that can never be stored;
    /// returns the bytes that may be written.
    func writableByteCount() -> Int {
        if holds.held > 0, let barrier = loop.barrier {
            holds.release(
                { barrier.isDurable($0) }, isLost: { barrier.isLost($0) },
                isDurableExactly: { barrier.isDurableExactly($0) })
            if let position = holds.firstPosition {
                if holds.firstIsLost({ barrier.isLost($0) }) {
                    let reason = barrier.failure(position) ?? "its records can never be stored"
                    let refusable = holds.firstIsRefusable
                    refuseHeldOutput(reason, lost: true)
                    if refusable { barrier.refusedHeldOutput(position, reason: reason) }
                } else if holds.firstIsRefusable, let reason = barrier.failure(position) {
                    refuseHeldOutput(reason)
                    barrier.refusedHeldOutput(position, reason: reason)
                }
            }
        }
        return output.byteCount - holds.held
    }

    /// The records the first held output shows failed to be stored (or, `lost`, never can be): it
    /// must never leave, so it and everything queued after it are dropped, a 503 goes in their place,
    /// and the connection closes (later answers are unsent, and the client knows it). A stream among
    /// them just ends, and its client reconnects to follow the session where it is stored now.
    func refuseHeldOutput(_ reason: String, lost: Bool = false) {
        if lost {
            loop.logger.warning(
                "output showing records that can never be stored was dropped",
                ["error": .string(reason), "peer": .string(peer?.description ?? "?")])
        } else {
            loop.logger.warning(
                "an answer acknowledging a change was replaced by 503: its records were not stored",
                ["error": .string(reason), "peer": .string(peer?.description ?? "?")])
        }
        output.removeLast(holds.held)
        holds.removeAll()
        guard machine.heldAnswerRefused() else {
            return close(reason: StateMachine.CloseReason.outputNotDurable.message(loop.timeouts))
        }
        let message =
            lost
            ? "this answer showed records that can never be stored (\(reason)); "
                + "nothing it acknowledged took effect, ask again"
            : "this change was not acknowledged: its records could not be stored (\(reason)); "
                + "it takes effect only if a retried write stores them"
        let rejection = HTTPRejection(.notStored, message)
        queue(loop.responder.response(for: rejection), keepAlive: false, isHead: false, dependingOn: 0)
    }

    /// Asks the barrier to wake this connection once the first held bytes may go (once per position).
    func awaitDurability() {
        guard let barrier = loop.barrier, let position = holds.firstPosition, holds.awaited != position else { return }
        holds.awaited = position
        let loop = loop
        let wake: @Sendable () -> Void = { [self] in
            // Always through the inbox, never inline: the barrier may call this inside its own
            // `isDurable` on this very loop, holding its locks, and the flush it starts asks again.
            loop.enqueue(
                .run {
                    guard !self.isClosed else { return }
                    self.durabilityReached()
                })
        }
        if holds.firstIsExact {
            barrier.whenDurableExactly(position, wake)
        } else {
            barrier.whenDurable(position, wake)
        }
    }

    /// The barrier reported the awaited position durable: write what it released.
    func durabilityReached() {
        holds.awaited = nil
        flush()
    }
}
