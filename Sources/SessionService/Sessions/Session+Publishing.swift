import JSONCodec
import Logs
import Reactors
import Synchronization

// Publishing: every new state (and the pulses it carried) goes to the subscribers, encoded once.
extension Session {
    /// Called by the runtime, serially, for every new state before anyone else can read it.
    @inlinable
    func publish(_ snapshot: Snapshot<R.State>, pulses: [PulseUpdate]) {
        shared.withLock { shared in
            shared.latest = snapshot
            shared.observed = true
            guard !shared.subscribers.isEmpty else { return }
            // Read after the journal took this version's records (before observers, see
            // `JournalMiddleware`): the events show no more than that.
            let position = storedPosition
            let pulseEvents = pulses.compactMap { encodePulse($0, position: position) }
            shared.subscribers.publish(latest(snapshot, position: position), pulses: pulseEvents, reporting: reporting)
        }
    }

    /// The latest state for subscribers; nil until the observer has delivered one.
    @inlinable
    func latest(_ shared: Shared) -> SubscriberList.Latest? {
        shared.observed ? latest(shared.latest, position: storedPosition) : nil
    }

    /// `snapshot` for subscribers, encoded only if one of them needs it; `position` covers its records.
    @inlinable
    func latest(_ snapshot: Snapshot<R.State>, position: UInt64) -> SubscriberList.Latest {
        SubscriberList.Latest(
            version: snapshot.version, position: position, json: { [self] in stateJSON(snapshot) },
            value: { [self] in stateValue(snapshot) })
    }

    /// A state as a JSON value (for `select` and patches): read back from its JSON, which the state limit has
    /// already made (half the time of encoding the state again: 0.6 against 1.1 ms for a 1,000-item todo list).
    @inlinable
    func stateValue(_ snapshot: Snapshot<R.State>) -> JSONValue? {
        if let json = stateJSON(snapshot), let value = try? JSONParser(maxDepth: 512, maxBytes: .max).parse(json) {
            return value
        }
        return try? tracer.run(.encodeState, version: snapshot.version) {
            try JSONValueEncoder().encodeValue(snapshot.state)
        }
    }

    @inlinable
    var reporting: SubscriberList.Reporting { SubscriberList.Reporting(context: context, sessionID: id) }

    /// A state as one line of JSON; nil (logged) when it does not encode.
    @inlinable
    func stateJSON(_ snapshot: Snapshot<R.State>) -> [UInt8]? {
        do {
            return try json(of: snapshot.state, version: snapshot.version)
        } catch {
            context.logger.error(
                "a state does not encode as JSON; subscribers skip it",
                ["session": .string(id), "version": .int(Int(snapshot.version)), "error": .string("\(error)")])
            return nil
        }
    }

    /// The event of one assigned pulse; nil (logged) when its value does not encode.
    @usableFromInline
    func encodePulse(_ pulse: PulseUpdate, position: UInt64) -> SessionEvent? {
        guard let value = try? tracer.run(.encodeState, { try JSONValueEncoder().encode(pulse.value) }) else {
            context.logger.error(
                "a pulse value does not encode as JSON", ["session": .string(id), "pulse": .string(pulse.name)])
            return nil
        }
        return SessionEvent(.pulse(name: pulse.name, count: pulse.count), json: value, position: position)
    }
}
