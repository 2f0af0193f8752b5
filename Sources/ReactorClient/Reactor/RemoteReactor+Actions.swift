import Reactors

extension RemoteReactor {
    /// One queued action and whoever waits for its answer.
    enum Outgoing: Sendable {
        /// Queued without waiting: a failure goes to ``RemoteReactor/errors``.
        case send(R.Action)
        /// `?wait=true`, answered to the caller.
        case sendAndWait(R.Action, CheckedContinuation<Result<ActionResult<R.State>, ReactorClientError>, Never>)

        /// Sends the action and answers (one at a time: the queue's task awaits each).
        func perform(on session: RemoteSession<R>, reporting mirror: ReactorMirror<R.State>) async {
            switch self {
            case .send(let action):
                do throws(ReactorClientError) {
                    try await session.send(action)
                } catch {
                    mirror.report(error)
                }
            case .sendAndWait(let action, let reply):
                do throws(ReactorClientError) {
                    reply.resume(returning: .success(try await session.sendAndWait(action)))
                } catch {
                    reply.resume(returning: .failure(error))
                }
            }
        }
    }

    /// Sends `action` (ReactorKit's `reactor.action.onNext`): returns at once; actions reach the server in call
    /// order. A failure is reported on ``errors`` and ``lastError``; the new state arrives on ``state``.
    public func send(_ action: R.Action) {
        if case .terminated = outbox.yield(.send(action)) {
            mirror.report(.cancelled)
        }
    }

    /// Sends `action` after those queued before it and returns once the server has reduced its mutations,
    /// with the version and state they produced. Cancelling the caller does not take the action back.
    public func sendAndWait(_ action: R.Action) async throws(ReactorClientError) -> ActionResult<R.State> {
        let result = await withCheckedContinuation {
            (reply: CheckedContinuation<Result<ActionResult<R.State>, ReactorClientError>, Never>) in
            if case .terminated = outbox.yield(.sendAndWait(action, reply)) {
                reply.resume(returning: .failure(.cancelled))
            }
        }
        return try result.get()
    }
}
