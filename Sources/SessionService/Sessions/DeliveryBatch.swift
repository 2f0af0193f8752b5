/// The hand-offs of one fan-out: a sink leaves its transport's work here (an SSE stream: "this stream
/// has new events") and each transport does it once when the fan-out ends, not once per subscriber
/// (for SSE, one wake-up per event loop instead of one per stream).
///
/// ```swift
/// DeliveryBatch.run { batch in
///     for subscriber in subscribers { _ = subscriber.sink?.send(event, in: &batch) }
/// }   // every transport's flush runs here
/// ```
public struct DeliveryBatch {
    // Usually one transport; a list searched by identity costs less than hashing. Looked up unretained
    // (`owned` keeps them alive): the lookup runs once per subscriber.
    private var first: (transport: ObjectIdentifier, flush: Unmanaged<AnyObject>)?
    private var others: [(transport: ObjectIdentifier, flush: Unmanaged<AnyObject>)] = []
    private var owned: [any DeliveryFlush] = []

    init() {}

    /// Runs `body` with this batch's flush of type `F` (made on first use), borrowed from the batch.
    @inline(__always)
    public mutating func withFlush<F: DeliveryFlush, T>(_ type: F.Type, _ body: (F) -> T) -> T {
        let key = ObjectIdentifier(F.self)
        if let first, first.transport == key {
            return Unmanaged<F>.fromOpaque(first.flush.toOpaque())._withUnsafeGuaranteedRef(body)
        }
        for index in others.indices where others[index].transport == key {
            return Unmanaged<F>.fromOpaque(others[index].flush.toOpaque())._withUnsafeGuaranteedRef(body)
        }
        let made = F()
        owned.append(made)
        if first == nil {
            first = (key, Unmanaged.passUnretained(made))
        } else {
            others.append((key, Unmanaged.passUnretained(made)))
        }
        return body(made)
    }

    /// Runs `body` with a fresh batch, then every flush it collected.
    public static func run<T>(_ body: (inout DeliveryBatch) throws -> T) rethrows -> T {
        var batch = DeliveryBatch()
        defer { for flush in batch.owned { flush.flush() } }
        return try body(&batch)
    }
}

/// A transport's share of a ``DeliveryBatch``: what its sinks collected, handed over in `flush()`.
public protocol DeliveryFlush: AnyObject {
    init()
    /// Hands what was collected to the transport; runs once, when the fan-out ends.
    func flush()
}
