import JSONCodec
import Reactors
import Synchronization

/// A session's pending timers by name, and the number of its latest timer record.
@usableFromInline
struct TimerTable: Sendable {
    @usableFromInline var pending: [String: PendingTimer] = [:]
    @usableFromInline var serial: UInt64 = 0

    @usableFromInline init() {}

    /// When the soonest one falls due; nil when none is pending.
    var soonest: Int64? { pending.values.lazy.map(\.at).min() }

    /// The pending timers, soonest first (ties by name).
    var sorted: [PendingTimer] { pending.values.sorted { ($0.at, $0.name) < ($1.at, $1.name) } }
}

// Durable timers: the reactor's `schedule` / `cancelTimer` effects, journaled with the action that made them,
// fired as ordinary actions whose accept record is also the timer's removal.
extension Session: ReactorTimerHost {
    /// How long a due timer that could not be sent (storage down) waits before it is tried again.
    static var timerRetryNanoseconds: Int64 { 1_000_000_000 }

    /// Hands the runtime's timer effects to this session (before the runtime starts): the runtime holds it weakly
    /// in its core, so an idle session allocates nothing for timers it never sets.
    @usableFromInline
    func installTimerHandler() {
        runtime.setTimerHost(self)
    }

    /// Keeps a `schedule` or `cancelTimer` effect of action `seq`.
    @usableFromInline
    func handleTimer(_ request: TimerRequest<R.Action>, seq: UInt64?) {
        switch request {
        case .schedule(let name, let delay, let action):
            guard !name.isEmpty, name.utf8.count <= Int(UInt8.max) else {
                return timerRefused(name, seq: seq, "a timer's name must be 1 to 255 bytes of UTF-8")
            }
            let json: [UInt8]
            do {
                guard let encodable = action as? any Encodable else {
                    return timerRefused(
                        name, seq: seq, "its action type \(R.Action.self) is not Encodable, so it cannot be stored")
                }
                // The reactor's own Encodable: pinned on this session, as the action log's encoding is.
                json = try tracer.run(.encodeAction, seq: seq ?? 0) { try encodeAction(encodable) }
            } catch {
                return timerRefused(name, seq: seq, "its action does not encode as JSON: \(error)")
            }
            let (seconds, attoseconds) = delay.components
            let nanoseconds = seconds.multipliedReportingOverflow(by: 1_000_000_000)
            let delayNanoseconds =
                nanoseconds.overflow ? Int64.max / 2 : max(0, nanoseconds.partialValue + attoseconds / 1_000_000_000)
            let at = context.clock.wallNanoseconds().addingReportingOverflow(delayNanoseconds)
            change(
                .schedule(PendingTimer(name: name, at: at.overflow ? .max : at.partialValue, action: json)), seq: seq)
        case .cancel(let name):
            change(.cancel(name: name), seq: seq)
        }
    }

    /// Logs a timer effect that could not be kept.
    func timerRefused(_ name: String, seq: UInt64?, _ why: String) {
        context.logger.error(
            "a timer was not scheduled: \(why)",
            ["session": .string(id), "timer": .string(String(name.prefix(255))), "seq": .int(Int(seq ?? 0))])
    }

    /// Applies and journals a change of the timers (one step under their lock, so a snapshot has both or
    /// neither), then notes the session's soonest timer in the service's index. False when there was
    /// nothing to cancel, or the change could not be journaled.
    @discardableResult
    func change(_ change: TimerChange, seq: UInt64? = nil) -> Bool {
        timers.withLock { table in
            let previous = table.pending[change.name]
            switch change {
            case .schedule(let timer): table.pending[timer.name] = timer
            case .cancel(let name): guard table.pending.removeValue(forKey: name) != nil else { return false }
            }
            if let journal {
                table.serial += 1
                guard journal.journal(timer: change, serial: table.serial) else {
                    table.pending[change.name] = previous
                    timerRefused(change.name, seq: seq, "its action is larger than a stored record may be")
                    return false
                }
            }
            noteSoonest(table.soonest)
            return true
        }
    }

    /// Tells the service's index (and storage, for the other instances) when the soonest timer falls due.
    func noteSoonest(_ at: Int64?) {
        context.timers.note(id, at: at)
        journal?.log.noteSoonestTimer(at)
    }

    /// Takes `timer` out of the table for its action's accept (the caller holds the action-log lock and
    /// journals that accept next); false when it is not pending as it was (cancelled, rescheduled, fired).
    @usableFromInline
    func takeTimer(_ timer: PendingTimer) -> Bool {
        timers.withLock { table in
            guard let pending = table.pending[timer.name], pending.at == timer.at, pending.action == timer.action else {
                return false
            }
            table.pending[timer.name] = nil
            return true
        }
    }

    /// Puts back the timers a stored history holds (at load) and notes the soonest in the index, and in storage:
    /// in a cluster this instance now owns the session, and its entry must say what this one knows.
    @usableFromInline
    func restoreTimers(_ pending: [PendingTimer], serial: UInt64) {
        let soonest = timers.withLock { table -> Int64? in
            for timer in pending { table.pending[timer.name] = timer }
            table.serial = max(table.serial, serial)
            context.timers.note(id, at: table.soonest)
            return table.soonest
        }
        journal?.log.noteLoadedTimers(soonest)
    }

    /// Calls `body` with the pending timers and the serial under their lock (a snapshot is appended in it).
    func withTimersForSnapshot(_ body: ([PendingTimer], UInt64) -> Bool) -> Bool {
        timers.withLock { table in body(table.sorted, table.serial) }
    }

    /// The pending timers, soonest first.
    @usableFromInline
    func pendingTimers() -> [PendingTimer] { timers.withLock { $0.sorted } }

    /// Cancels the pending timer `name` (admin); false when none has that name.
    @usableFromInline
    func cancelTimer(_ name: String) -> Bool { change(.cancel(name: name)) }

    /// Sends the action of every timer due now, soonest first, each as an ordinary action marked with its
    /// timer; returns how many fired. One that cannot be sent now (storage down) is tried again later; one
    /// whose action no longer decodes (the reactor changed) is dropped, journaled, and logged.
    @usableFromInline
    func fireDueTimers() throws(SessionError) -> Int {
        let now = context.clock.wallNanoseconds()
        let due = timers.withLock { $0.sorted.filter { $0.at <= now } }
        var fired = 0
        var retry = false
        defer {
            timers.withLock { table in
                let soonest = table.soonest
                context.timers.note(id, at: retry ? soonest.map { max($0, now + Self.timerRetryNanoseconds) } : soonest)
                journal?.log.noteSoonestTimer(soonest)
            }
        }
        for timer in due {
            do throws(SessionError) {
                if try send(actionBody: timer.action, completion: nil, encodeAction: nil, timer: timer) != 0 {
                    fired += 1
                    context.metrics.timersFired.increment()
                }
            } catch {
                switch error {
                case .invalidAction, .actionTooLarge, .internalAction:
                    context.logger.error(
                        "a due timer's action is no longer an action of its reactor; the timer is dropped",
                        [
                            "session": .string(id), "timer": .string(timer.name),
                            "error": .string("\(APIError(error).message)"),
                        ])
                    change(.cancel(name: timer.name))
                case .passivated, .ended:
                    throw error
                default:
                    retry = true
                    context.logger.warning(
                        "a due timer cannot fire now; retrying",
                        [
                            "session": .string(id), "timer": .string(timer.name),
                            "error": .string("\(APIError(error).message)"),
                        ])
                }
            }
        }
        return fired
    }

    /// The refusal of an action only the reactor's timers send, naming its type.
    @usableFromInline
    static func refusedFromOutside(_ json: [UInt8], reactor: String) -> SessionError {
        let type = (try? JSONParser().parse(json))?["type"]?.stringValue ?? "?"
        return .internalAction(type: type, reactor: reactor)
    }
}
