import JSONCodec
import ReactorClient

/// Short, stable text for what the client reports, so a test states a whole sequence in one expectation.
func describe<State: Encodable>(_ event: SessionEvent<State>) -> String {
    switch event {
    case .state(let update): "state \(update.version) \(json(update.state))"
    case .pulse(let pulse): "pulse \(pulse.name)=\(pulse.value) #\(pulse.count)"
    case .connection(let connection): describe(connection)
    }
}

func describe(_ event: MultiplexedEvent) -> String {
    switch event {
    case .state(let session, let update): "\(session): state \(update.version) \(update.state)"
    case .pulse(let session, let pulse): "\(session): pulse \(pulse.name)=\(pulse.value) #\(pulse.count)"
    case .end(let session, let reason): "\(session): end \(reason)"
    case .connection(let connection): describe(connection)
    }
}

/// A duration in whole milliseconds, rounded down.
func milliseconds(_ duration: Duration) -> Int64 {
    duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
}

func describe(_ connection: ConnectionState) -> String {
    switch connection {
    case .connecting: "connecting"
    case .connected: "connected"
    case .reconnecting(let delay, let cause):
        "reconnecting after \(milliseconds(delay)) ms (\(describe(cause)))"
    case .ended(.finished(let reason)): "ended: \(reason)"
    case .ended(.stopped): "ended: stopped"
    case .ended(.failed(let error)): "failed: \(describe(error))"
    }
}

/// The kind and code of an error, without messages that name ports or system wording.
func describe(_ error: ReactorClientError) -> String {
    switch error {
    case .server(let status, let code, _): "\(status) \(code)"
    case .stream(let code, _): "stream \(code)"
    case .transport: "transport"
    case .invalidResponse: "invalid response"
    case .encoding: "encoding"
    case .cancelled: "cancelled"
    }
}

func json(_ value: some Encodable) -> String {
    (try? JSONValueEncoder().encodeValue(value).serializedString()) ?? "?"
}
