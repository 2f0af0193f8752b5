import Synchronization

extension Flow {
    /// Lets an element through only once `dueTime` has passed on `clock` without a newer one (RxSwift's
    /// `debounce`): typing "s", "sw", "swift" quickly runs "swift" alone, `dueTime` after the last key.
    ///
    /// A held action is one of its own effects until it goes on: its completion (`?wait=true`) waits,
    /// `stop()` and stub mode cancel it, and an action a newer one replaced completes with nothing done.
    /// Inject a test clock in tests; the default is the continuous clock.
    public func debounce(for dueTime: Duration, clock: some Clock<Duration> = ContinuousClock()) -> Flow {
        appending(.step { environment in DebounceStep(dueTime: dueTime, clock: clock, environment: environment) })
    }

    /// Lets at most one element through per `interval` on `clock`, with RxSwift's `throttle(_:latest:)`
    /// meaning: the first element passes at once and opens a window of `interval`; with `latest` (the
    /// default, as in RxSwift) the last element that arrived inside the window passes when it closes and
    /// opens the next one, and the others are dropped; with `latest: false` every element inside a window
    /// is dropped. An element held for the end of its window is one of its action's effects, as in `debounce`.
    public func throttle(
        for interval: Duration, clock: some Clock<Duration> = ContinuousClock(), latest: Bool = true
    ) -> Flow {
        appending(
            .step { environment in
                ThrottleStep(interval: interval, clock: clock, latest: latest, environment: environment)
            })
    }
}

/// The running `debounce`: the hold task of the element waiting for quiet, under its own lock.
final class DebounceStep<Element: Sendable, C: Clock<Duration>>: FlowStep {
    let dueTime: Duration
    let clock: C
    let environment: FlowEnvironment
    let pending = Mutex<(any FlowHold)?>(nil)

    init(dueTime: Duration, clock: C, environment: FlowEnvironment) {
        self.dueTime = dueTime
        self.clock = clock
        self.environment = environment
    }

    func receive(_ element: Element, _ ticket: FlowTicket, _ position: FlowPosition<Element>) -> FlowOutcome<Element> {
        let (superseded, held) = pending.withLock { pending in
            let previous = pending
            // Assigned under the lock the hold task takes before it releases: it cannot miss it.
            pending = environment.hold(ticket) { [self] hold in
                do {
                    try await clock.sleep(for: dueTime)
                } catch {
                    _ = take(hold)
                    throw error
                }
                guard take(hold) else { return }
                await position.resume(element, hold: hold)
            }
            return (previous, pending != nil)
        }
        superseded?.cancel()
        return held ? .held : .dropped
    }

    /// True (and forgotten) when `hold` still holds the pending element.
    func take(_ hold: any FlowHold) -> Bool {
        pending.withLock { pending in
            guard pending === hold else { return false }
            pending = nil
            return true
        }
    }

    func stop() { pending.withLock { $0 = nil } }
}

/// The running `throttle`: when the current window ends and the hold task of the element waiting for
/// that end, under its own lock.
final class ThrottleStep<Element: Sendable, C: Clock<Duration>>: FlowStep {
    struct Window {
        var end: C.Instant?
        var pending: (any FlowHold)?
    }

    let interval: Duration
    let clock: C
    let latest: Bool
    let environment: FlowEnvironment
    let window = Mutex(Window())

    init(interval: Duration, clock: C, latest: Bool, environment: FlowEnvironment) {
        self.interval = interval
        self.clock = clock
        self.latest = latest
        self.environment = environment
    }

    func receive(_ element: Element, _ ticket: FlowTicket, _ position: FlowPosition<Element>) -> FlowOutcome<Element> {
        let (superseded, outcome) = window.withLock { window -> ((any FlowHold)?, FlowOutcome<Element>) in
            let now = clock.now
            guard let end = window.end, now < end else {
                // Outside a window (or at its end, before the held element's task woke): this one passes
                // now and the held one is dropped, as RxSwift sends at once and cancels its timer.
                let previous = window.pending
                window.pending = nil
                window.end = now.advanced(by: interval)
                return (previous, .passed(element))
            }
            guard latest else { return (nil, .dropped) }
            let previous = window.pending
            window.pending = environment.hold(ticket) { [self] hold in
                do {
                    try await clock.sleep(until: end, tolerance: nil)
                } catch {
                    forget(hold)
                    throw error
                }
                guard take(hold) else { return }
                await position.resume(element, hold: hold)
            }
            return (previous, window.pending == nil ? .dropped : .held)
        }
        superseded?.cancel()
        return outcome
    }

    /// True (and forgotten) when `hold` still holds the pending element; its release opens the next window.
    func take(_ hold: any FlowHold) -> Bool {
        window.withLock { window in
            guard window.pending === hold else { return false }
            window.pending = nil
            window.end = clock.now.advanced(by: interval)
            return true
        }
    }

    /// Forgets the pending element of `hold`, cancelled before its window ended.
    func forget(_ hold: any FlowHold) {
        window.withLock { window in
            if window.pending === hold { window.pending = nil }
        }
    }

    func stop() { window.withLock { $0.pending = nil } }
}
