import HTTPServer
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
            let pulseEvents = pulses.compactMap { pulse in encodePulse(pulse).map { PulseEvent(name: pulse.name, event: $0) } }
            shared.subscribers.publish(latest(snapshot), pulses: pulseEvents, reporting: reporting)
        }
    }

    /// The latest state for subscribers; nil until the observer has delivered one.
    @inlinable
    func latest(_ shared: Shared) -> SubscriberList.Latest? {
        shared.observed ? latest(shared.latest) : nil
    }

    /// `snapshot` for subscribers, encoded only if one of them needs it.
    @inlinable
    func latest(_ snapshot: Snapshot<R.State>) -> SubscriberList.Latest {
        SubscriberList.Latest(version: snapshot.version, event: { [self] in stateEvent(snapshot) }, value: { try? JSONValueEncoder().encodeValue(snapshot.state) })
    }

    @inlinable
    var reporting: SubscriberList.Reporting { SubscriberList.Reporting(context: context, sessionID: id) }

    /// The SSE event of a state.
    @inlinable
    func stateEvent(_ snapshot: Snapshot<R.State>) -> EncodedServerSentEvent? {
        do {
            let json = try json(of: snapshot.state)
            return EncodedServerSentEvent(ServerSentEvent(event: "state", id: String(snapshot.version), data: String(decoding: json, as: UTF8.self)))
        } catch {
            context.logger.error("a state does not encode as JSON; subscribers skip it", ["session": .string(id), "version": .int(Int(snapshot.version)), "error": .string("\(error)")])
            return nil
        }
    }

    @usableFromInline
    func encodePulse(_ pulse: PulseUpdate) -> EncodedServerSentEvent? {
        guard let value = try? JSONValueEncoder().encode(pulse.value) else {
            context.logger.error("a pulse value does not encode as JSON", ["session": .string(id), "pulse": .string(pulse.name)])
            return nil
        }
        var data = JSONWriter()
        data.raw("{\"name\":")
        data.string(pulse.name)
        data.raw(",\"value\":")
        data.raw(value)
        data.raw(",\"count\":")
        data.integer(pulse.count)
        data.raw("}")
        return EncodedServerSentEvent(ServerSentEvent(event: "pulse", data: String(decoding: data.bytes, as: UTF8.self)))
    }
}
